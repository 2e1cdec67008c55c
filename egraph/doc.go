// Package egraph is a generic e-graph library for equality saturation, in
// the spirit of egg (Willsey et al., POPL 2021) but written for Go: it owns
// union-find, hash-consing, deferred rebuilding with congruence closure,
// e-class analyses, pattern compilation and e-matching, rewrites, rule
// scheduling, the saturation runner, extraction, and dot output. It knows
// nothing of SDQLite: package opt defines that language on top of it.
//
// # Language
//
// A client defines its operators as Op values and implements Language
// (Parse, Format) so that patterns and terms can be read and printed; OpTable
// is a ready-made Language for named operators of fixed arity plus leaves
// whose payload is spelled by the atom (numbers, symbols). A Node is
// Op + Payload (a uint64: a constant, float bits, or a Symbols index) +
// child ClassIDs.
//
// # Storage and cost
//
// Nodes live in one flat array; children of nodes of arity <= 2 are stored
// inline in the record, wider ones in a shared arena, so adding a node
// allocates nothing of its own. The hash-cons table is an open-addressing
// table whose slots copy small keys, so the common Add-of-an-existing-node
// reads one slot. Class node lists are carved from a slab. Per-node arrays
// grow by doubling. Measured on the AC explosion benchmark and BenchmarkAdd
// (see bench_test.go).
//
// # Invariants and rebuilding
//
// Add and Union leave work for Rebuild (egg's deferred rebuilding): Union
// queues the parents of the absorbed class; Rebuild re-canonicalizes them in
// place, merges the congruent ones it finds through the hash-cons table
// (cascading upward), re-propagates analysis data to a fixed point, and
// tidies class lists (dropping duplicates, sorting nodes by operator so
// matching can jump to one operator) and the operator index. Queries that
// need the invariants rebuild first; the runner rebuilds after every apply
// phase, including when it stops on a limit, so a stopped graph is always
// consistent and extractable.
//
// # Concepts, one per file
//
//	language.go   Op, ClassID, NodeID, Node, Language, OpTable
//	symbols.go    Symbols: string interning for payloads
//	unionfind.go  union-find with path halving
//	eclass.go     per-class bookkeeping and the operator index
//	hashcons.go   the hash-cons table (node key -> node)
//	egraph.go     EGraph: Add, Lookup, Union, accessors
//	rebuild.go    Rebuild: congruence closure, analysis repair, tidying
//	analysis.go   Analysis (Make, Merge, Modify), MergeResult, NoAnalysis
//	sexpr.go      s-expression reader and SyntaxError
//	recexpr.go    RecExpr: flattened terms; ParseExpr, AddExpr, Format
//	pattern.go    Pattern: terms with ?variables; ParsePattern
//	machine.go    pattern compiler and the backtracking matching machine
//	subst.go      Var, Subst
//	search.go     Match, Searcher, SearchPattern (e-matching over the op index)
//	rewrite.go    Rewrite, Applier, Condition, PatternApplier, Instantiate
//	scheduler.go  Scheduler, SimpleScheduler, BackoffScheduler
//	runner.go     Runner, StopReason, Iteration
//	extract.go    Extractor, CostFunc, AstSize, AstDepth
//	dot.go        Graphviz output
//
// # Typical use
//
//	lang := egraph.NewOpTable()          // or the client's own Language
//	add := lang.Define("+", 2)
//	...
//	g := egraph.New[egraph.NoData](lang, egraph.NoAnalysis{})
//	comm, _ := egraph.ParseRewrite[egraph.NoData](lang, "comm", "(+ ?a ?b)", "(+ ?b ?a)")
//	r := egraph.NewRunner(g)
//	root := r.AddExpr(expr)
//	r.Run([]*egraph.Rewrite[egraph.NoData]{comm})
//	x := egraph.NewExtractor(g, egraph.AstSize[egraph.NoData], cmp.Less[int])
//	best, cost, err := x.Extract(root)
//
// Costs are of any type C with a caller-given order, so structured costs
// (storel's cardinality plus cost) need no encoding into a number.
//
// An EGraph is not safe for concurrent use.
package egraph
