package egraph

// eclass is the bookkeeping of one canonical e-class. Entries of
// EGraph.classes for IDs that have been merged away are zeroed.
type eclass struct {
	// nodes lists the class's nodes; after Rebuild it holds only live nodes
	// with canonical children, sorted by (op, payload, children) so that
	// e-matching can jump to the nodes of one operator.
	nodes []NodeID
	// parents lists the nodes that have this class as a child; these are
	// the nodes to re-canonicalize when the class merges away, and to
	// re-analyze when its datum changes. May hold stale entries until the
	// class is next cleaned.
	parents []NodeID
	// dirty: nodes or parents need cleaning at the end of Rebuild.
	dirty bool
}

// opIndex lists the classes containing at least one node of an operator,
// so that a pattern rooted at that operator only visits those classes.
// Between rebuilds it may hold non-canonical or duplicate IDs (dirty).
type opIndex struct {
	classes []ClassID
	dirty   bool
}
