// Package opt owns storel's cost-based optimizer (paper §5): given the
// naive plan (a program composed with its storage mappings,
// ir.Program.Compose) and the data, it finds the cheapest equivalent
// physical plan by equality saturation over package egraph, and explains
// its choice.
//
//	res, err := opt.Optimize(naive, store, opt.Options{})
//	res.Plan       // the physical plan: typed ir, every dictionary @dense or @hash
//	res.Explain(w) // storel explain: plan, costs, e-graph figures, rules fired
//	res.Dot(w)     // Graphviz picture of the plan
//	alts, err := opt.OptimizeAlternatives(...) // one program, several storage mappings
//
// The rules are data: rules.txt gives each a name, a reason, a pattern
// and a condition (rulefile.go reads it, conds.go holds the conditions).
// The search runs in four stages, each on a fresh e-graph seeded with
// the best plan of the one before: lookups (with the tensors still bound
// to their names, a lookup A(i)(j) inside a walk of A becomes the walk's
// value; the tensors are inlined after it), fuse (rules that only remove
// work, to saturation: the mappings disappear into the program's loops),
// explore (reordering, hoisting, factorization, sub-results computed
// once into dense vectors when that is cheaper, in rounds while the
// estimated cost falls) and physical (every built dictionary becomes
// @dense or @hash). optimize.go drives them; session.go holds one
// stage's e-graph. The search's plan is compared with the naive plan and
// the program as written over its mappings, all costed alike
// (Result.Candidates), so that a search that misses never leaves a plan
// estimated dearer than the naive one. Each class keeps the source
// position of its terms (Data.Pos; a rewrite's result takes the matched
// class's), so an optimized plan's run-time error names the user's text;
// EstimateFootprint gives the memory a plan's result and temporaries take.
//
// Binders are named variables, unique in the initial plan; a
// free-variable analysis (Data.FV) keeps rules from moving a term out of
// the binder it needs, and substitution runs on the e-graph (subst.go).
// Rules that evaluate an expression where it was not evaluated before
// require it to be safe by interval analysis over the data (safety.go),
// and fusion requires bodies that are zero for a zero value, since sums
// visit stored zeros (docs/design.md §2, §5).
//
// Cardinalities follow the paper's Fig. 5 as an e-class analysis
// (card.go, with statistics from GatherStats or ParseStats), costs its
// Fig. 6 (cost.go, with the coefficients and where they come from). A
// plan that still builds a logical dictionary costs infinity. A
// dictionary built by a loop that reads no variable is charged once and
// bound by a let at the plan's top (closed.go), wherever a rule left it.
package opt
