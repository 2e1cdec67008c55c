// Package egraph is a generic e-graph library for equality saturation, in
// the spirit of egg (Willsey et al., POPL 2021): union-find,
// hash-consing, deferred rebuilding with congruence closure, e-class
// analyses, compiled e-matching, rewrites with conditions, rule
// scheduling, a runner with limits, extraction, and Graphviz output. It
// knows nothing of SDQLite: package opt defines that language on it.
//
// A client defines its operators as Op values and a Language to read and
// print patterns and terms (OpTable is a ready-made one). A Node is an Op,
// a Payload (a constant, float bits or a Symbols index) and child
// ClassIDs. Nodes live in one flat array, small child lists inline, so
// adding a node allocates nothing of its own.
//
// Add and Union leave work for Rebuild, which restores congruence,
// repairs analysis data to a fixed point and tidies class lists; queries
// that need the invariants rebuild first, and the runner rebuilds after
// every apply phase, so a graph stopped on a limit is always extractable.
//
//	lang := egraph.NewOpTable()
//	add := lang.Define("+", 2)
//	g := egraph.New[egraph.NoData](lang, egraph.NoAnalysis{})
//	comm, _ := egraph.ParseRewrite[egraph.NoData](lang, "comm", "(+ ?a ?b)", "(+ ?b ?a)")
//	r := egraph.NewRunner(g)
//	root := r.AddExpr(expr)
//	r.Run([]*egraph.Rewrite[egraph.NoData]{comm})
//	x := egraph.NewExtractor(g, egraph.AstSize[egraph.NoData], cmp.Less[int])
//	best, cost, err := x.Extract(root)
//
// Costs are of any type with a caller-given order, so structured costs
// (storel's cardinality with cost) need no encoding into a number.
// BenchmarkAdd and the AC-explosion benchmark measure the storage. An
// EGraph is not safe for concurrent use.
package egraph
