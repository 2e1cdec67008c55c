package egraph

// Analysis attaches a datum of type D to every e-class and keeps it correct
// as the graph grows and classes merge (a semilattice join over each class).
// Typical data: constants for folding, free variables, types, cardinalities.
//
// The e-graph calls Make for each new node, Merge whenever two classes
// become one and whenever a node's datum is recomputed because a child's
// datum changed, and Modify after a class was created or its datum changed.
// Data are re-propagated upward during Rebuild until nothing changes, so
// Merge must be monotone (a join) for that to terminate.
type Analysis[D any] interface {
	// Make computes the datum of a single node from its children's data
	// (read them with g.Data). It must not change the graph.
	Make(g *EGraph[D], n Node) D
	// Merge joins from into *into and reports what changed.
	Merge(into *D, from D) MergeResult
	// Modify may change the graph in response to a class's datum, for
	// instance add the constant a class folds to and union it in. It must
	// not remove anything. Leave it empty if not needed.
	Modify(g *EGraph[D], id ClassID)
}

// MergeResult tells the e-graph which side of a merge changed, so that only
// the parents whose data may now be stale are revisited.
type MergeResult struct {
	// IntoChanged: the joined datum differs from the old *into.
	IntoChanged bool
	// FromChanged: the joined datum differs from from.
	FromChanged bool
}

// NoData is the datum of graphs that carry no analysis.
type NoData = struct{}

// NoAnalysis is the analysis that computes nothing; use it with
// EGraph[NoData].
type NoAnalysis struct{}

// Make implements Analysis.
func (NoAnalysis) Make(*EGraph[NoData], Node) NoData { return NoData{} }

// Merge implements Analysis.
func (NoAnalysis) Merge(*NoData, NoData) MergeResult { return MergeResult{} }

// Modify implements Analysis.
func (NoAnalysis) Modify(*EGraph[NoData], ClassID) {}
