// Package opt owns storel's cost-based optimizer (paper §5): given the
// naive plan (a program composed with its storage mappings,
// ir.Program.Compose) and the data, it finds the cheapest equivalent
// physical plan by equality saturation over a generic e-graph (package
// egraph), and reports why it was chosen.
//
// # API
//
//	res, err := opt.Optimize(naive, store, opt.Options{})
//	res.Plan       // the physical plan: typed ir, every dictionary @dense or @hash
//	res.Explain(w) // storel explain: plan, costs, Table 4 figures, rules fired
//	res.Dot(w)     // Graphviz picture of the plan
//	alts, err := opt.OptimizeAlternatives(...) // one program, several storage mappings
//
// # Pipeline
//
// The tensor definitions the naive plan binds (let A = mapping in ...) are
// inlined at every use and every binder is renamed to a unique name. Three
// stages follow, each on a fresh e-graph seeded with the best plan of the
// one before (rules.txt lists each stage's rules):
//
//   - fuse: the rules that only remove work (fusion F1-F3, lookups into
//     sums, lets read once, sums over singletons, tests taken out of
//     lets), to saturation; the mappings disappear into the program's
//     loops;
//   - explore: loop reordering, hoisting and factorization (A, C, D, I, LT
//     rules, join reordering SW, merge F4), in rounds of at most 8
//     iterations, each round seeded with the best plan of the one before,
//     while the estimated cost improves;
//   - physical: every dictionary built becomes @dense or @hash (§5.6).
//
// Between stages the extracted plan is tidied (lets that rename a variable
// are inlined; after fuse, lets of cheap scalars too, so that exploration
// has no lets to move around loops). The paper also splits its search in
// two stages (§6.4) because a single e-graph grew too large.
//
// # Binders
//
// Sums, lets and merges bind variables, and the rules move terms across
// binders. The options measured or recorded (docs/design.md §5): De Bruijn
// indices, which the paper used and which blew up to 2.97 million e-nodes
// on MTTKRP without saturating; slotted e-graphs, which saturated the same
// rules with 2,316 nodes but need an e-graph with slots in every node; and
// named variables. storel uses named variables:
//
//   - binders are children of their node (sum K V src body, where K and V
//     are the classes of the variables), so one compiled pattern matches a
//     sum whatever its variables are called and can repeat ?k to match the
//     bound variable in the body (F1's if k == e);
//   - every binder of the initial plan gets a unique name, and rules that
//     invent a binder take a fresh one, remembered per rule and match so
//     that re-applying a match builds nothing new. Rules that rebind an
//     existing variable (F1's let k = e) may leave two binders of one name
//     in a term; the rules that swap two binders (SW, LT4, F4) check they
//     are distinct, and free-variable tests see shadowing;
//   - the free-variable analysis (Data.FV) keeps, per class, the variables
//     every term of the class needs (an intersection): a rule that moves a
//     class out of a binder checks the binder is not needed, and
//     extraction only builds a class from nodes within those variables, so
//     the extracted term never mentions a variable out of its scope;
//   - substitution (let inlining, F3k, F3v, T5) runs on the e-graph itself
//     (subst.go): every node of the class is substituted, classes without
//     the variable are shared, capturing binders are renamed, results are
//     memoized.
//
// With names, the commonest rewrites of tensor plans — hoisting a factor,
// a test, a let or a singleton out of a loop, swapping loops — reuse the
// moved class as it is: no shifted copy as with De Bruijn indices. Copies
// happen only in substitution, and the fusion rules keep those small: F3k
// and F3v rename the mapping's loop variable to the program's rather than
// substituting into the program's body.
//
// Measured with TestMeasureDesign (go test ./opt -run MeasureDesign
// -opt.measure -v), on the kernel tests' data, on a loaded 2-core machine
// (nodes: the largest e-graph of any stage; plan costs are the estimates):
//
//	kernel   staged (the design)           one e-graph with every rule
//	MMM       155 nodes, 23 iters,  6 ms    2242 nodes, 107 ms (same plan)
//	SumMMM    151 nodes, 23 iters,  6 ms    3507 nodes, 224 ms (same plan)
//	BATAX    1564 nodes, 19 iters, 20 ms   13,496 nodes, 634 ms (plan 3% dearer)
//	TTM       170 nodes, 27 iters, 12 ms   17,850 nodes, 1.5 s (same plan)
//	MTTKRP   1051 nodes, 27 iters, 26 ms   67,307 nodes after 100 iterations,
//	                                        not saturated, 7.3 s (plan 3% cheaper)
//
// Every staged run saturated. The one-graph variant explores every
// arrangement of every let and test the fusion rules write (the fusion
// stage only takes tests out of lets, I4 and I4a, so that F1r can fire);
// substituting a single term per class instead of the whole class cut
// BATAX to 2,466 nodes but left MTTKRP unsaturated (69,094 nodes).
//
// # Soundness
//
// The paper's rules hold in a total language without explicit zeros. Two
// facts of storel's semantics need more (docs/design.md §2):
//
//   - a sum visits every position of an array, range or subarray and every
//     stored entry of a hash map or trie, zeros included, while a computed
//     dictionary holds no zeros. The fusion rules therefore require a body
//     that is zero for a zero value (strict, or linear for vertical
//     fusion), and T1 and L3, which equate a rebuilt dictionary with the
//     original, require a class that stores no zeros (Data.Zeroful);
//   - reading an array past its end is an error. Fusion writes guarded
//     reads (if lo <= e && e < hi then x(e)); a rule that evaluates an
//     expression where it was not evaluated before (out of an if or a loop
//     that may not run) requires it to be safe: every read provably in
//     bounds by interval analysis over the data (safety.go).
//
// A random differential test (random_test.go; -opt.random=N for more)
// checks the interpreter gives the naive and the optimized plans the same
// result.
//
// # Cost
//
// Cardinalities follow Fig. 5 as an e-class analysis (Data.Card), with
// per-level layouts, key-domain caps and statistics gathered from the data
// (GatherStats; Options.Stats overrides). Costs follow Fig. 6 (cost.go,
// with the coefficients and where they come from). A plan that still
// builds a logical dictionary costs infinity.
package opt
