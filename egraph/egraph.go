package egraph

import (
	"iter"
	"slices"
)

// inlineKids is the largest arity whose children are stored inside the
// node record itself; wider nodes keep theirs in the shared kids arena.
// Most operators are unary or binary, and reading a node then costs one
// cache line instead of two.
const inlineKids = 2

// nodeRec is the stored form of a node. Its children are re-canonicalized
// in place during rebuild.
type nodeRec struct {
	op      Op
	arity   uint32
	payload uint64
	class   ClassID // class the node was created in (Find it)
	start   uint32  // children in kids[start:start+arity] when arity > inlineKids
	inline  [inlineKids]ClassID
}

// kidsOf returns the stored children of nid (aliasing the storage).
func (g *EGraph[D]) kidsOf(nid NodeID) []ClassID {
	r := &g.nodes[nid]
	if r.arity <= inlineKids {
		return r.inline[:r.arity:r.arity]
	}
	end := r.start + r.arity
	return g.kids[r.start:end:end]
}

// EGraph is an e-graph over a client language, with an e-class analysis
// whose per-class datum has type D (use NoData and NoAnalysis for none).
//
// Add and Union may leave the graph "dirty": congruence and the hash-cons
// invariant are restored in batch by Rebuild, egg-style. Queries that need
// the invariants (e-matching, extraction, the op index) rebuild first.
// An EGraph is not safe for concurrent use.
type EGraph[D any] struct {
	lang     Language
	analysis Analysis[D]

	uf      unionFind
	classes []eclass // indexed by ClassID
	data    []D      // indexed by ClassID, meaningful for roots
	nodes   []nodeRec
	dead    []bool    // per node: dropped as a duplicate of a congruent live node
	kids    []ClassID // children of nodes wider than inlineKids
	memo    hashcons
	byOp    map[Op]*opIndex

	pending         []NodeID // nodes whose children may be non-canonical
	analysisPending []NodeID // nodes whose datum must be re-merged into their class
	dirtyClasses    []ClassID
	dirtyOps        []Op

	numClasses int
	liveNodes  int
	version    uint64 // bumped by every new node and every effective union

	scratch []ClassID
	slab    []NodeID // backing store carved into new classes' lists
}

// New returns an empty e-graph for lang with the given analysis.
func New[D any](lang Language, analysis Analysis[D]) *EGraph[D] {
	return &EGraph[D]{
		lang:     lang,
		analysis: analysis,
		byOp:     map[Op]*opIndex{},
	}
}

// Lang returns the graph's language.
func (g *EGraph[D]) Lang() Language { return g.lang }

// Analysis returns the graph's analysis.
func (g *EGraph[D]) Analysis() Analysis[D] { return g.analysis }

// NumClasses reports the number of canonical e-classes.
func (g *EGraph[D]) NumClasses() int { return g.numClasses }

// NumNodes reports the number of live e-nodes (exact after Rebuild; between
// rebuilds it may count congruent duplicates not yet merged).
func (g *EGraph[D]) NumNodes() int { return g.liveNodes }

// MemoSize reports the entries of the hash-cons memo (egg's "memo"): one
// per distinct canonical node, congruent duplicates merged at rebuild.
func (g *EGraph[D]) MemoSize() int { return g.memo.count }

// Clean reports whether no rebuild work is pending.
func (g *EGraph[D]) Clean() bool {
	return len(g.pending) == 0 && len(g.analysisPending) == 0 &&
		len(g.dirtyClasses) == 0 && len(g.dirtyOps) == 0
}

// Find returns the canonical ID of the class of id.
func (g *EGraph[D]) Find(id ClassID) ClassID { return g.uf.find(id) }

// Data returns the analysis datum of id's class.
func (g *EGraph[D]) Data(id ClassID) D { return g.data[g.uf.find(id)] }

// Node returns the stored node nid. Its Children alias the graph's storage:
// read them, don't keep or modify them across changes to the graph.
func (g *EGraph[D]) Node(nid NodeID) Node {
	r := &g.nodes[nid]
	return Node{Op: r.op, Payload: r.payload, Children: g.kidsOf(nid)}
}

// NodeClass returns the canonical class containing node nid.
func (g *EGraph[D]) NodeClass(nid NodeID) ClassID {
	// A dropped duplicate's class was united with its twin's, so this
	// holds for dead nodes too.
	return g.uf.find(g.nodes[nid].class)
}

// Nodes returns the nodes of id's class (sorted by operator after Rebuild).
// The slice belongs to the graph: don't modify or keep it across changes.
func (g *EGraph[D]) Nodes(id ClassID) []NodeID {
	return g.classes[g.uf.find(id)].nodes
}

// Parents returns the nodes that use id's class as a child. After Rebuild
// it holds live nodes only. The slice belongs to the graph.
func (g *EGraph[D]) Parents(id ClassID) []NodeID {
	return g.classes[g.uf.find(id)].parents
}

// Classes iterates over the canonical class IDs in increasing order.
func (g *EGraph[D]) Classes() iter.Seq[ClassID] {
	return func(yield func(ClassID) bool) {
		for i := range g.uf.size() {
			id := ClassID(i)
			if g.uf.isRoot(id) && !yield(id) {
				return
			}
		}
	}
}

// ClassesWithOp returns the canonical classes holding a node with operator
// op, rebuilding first if needed. The slice belongs to the graph.
func (g *EGraph[D]) ClassesWithOp(op Op) []ClassID {
	g.ensureClean()
	if ix := g.byOp[op]; ix != nil {
		return ix.classes
	}
	return nil
}

func (g *EGraph[D]) ensureClean() {
	if !g.Clean() {
		g.Rebuild()
	}
}

// canonicalKids returns the canonical children of n in scratch storage.
func (g *EGraph[D]) canonicalKids(n Node) []ClassID {
	kids := g.scratch[:0]
	for _, c := range n.Children {
		kids = append(kids, g.uf.find(c))
	}
	g.scratch = kids
	return kids
}

// Lookup returns the class holding n (children compared up to Find) without
// adding it. On a dirty graph it may miss a node that a rebuild would find.
func (g *EGraph[D]) Lookup(n Node) (ClassID, bool) {
	kids := g.canonicalKids(n)
	if _, class, ok := g.memoGet(n.Op, n.Payload, kids); ok {
		return g.uf.find(class), true
	}
	return 0, false
}

// Add returns the class of n, adding n as a new singleton class unless an
// equal node (children compared up to Find) is already present. Children
// must be IDs of this graph.
func (g *EGraph[D]) Add(n Node) ClassID {
	kids := g.canonicalKids(n)
	if _, class, ok := g.memoGet(n.Op, n.Payload, kids); ok {
		return g.uf.find(class)
	}
	return g.addNew(n.Op, n.Payload, kids)
}

func (g *EGraph[D]) addNew(op Op, payload uint64, kids []ClassID) ClassID {
	id := g.uf.makeSet()
	nid := NodeID(len(g.nodes))
	rec := nodeRec{op: op, arity: uint32(len(kids)), class: id, payload: payload}
	if len(kids) <= inlineKids {
		copy(rec.inline[:], kids)
	} else {
		rec.start = uint32(len(g.kids))
		g.kids = append(grow(g.kids, len(kids)), kids...)
	}
	g.nodes = append(grow(g.nodes, 1), rec)
	g.dead = append(grow(g.dead, 1), false)
	nodes, parents := g.carveLists(nid)
	g.classes = append(grow(g.classes, 1), eclass{nodes: nodes, parents: parents})
	for i, c := range kids {
		if !slices.Contains(kids[:i], c) {
			g.classes[c].parents = append(g.classes[c].parents, nid)
		}
	}
	g.memoPut(op, payload, kids, nid)
	g.indexOp(op, id)
	g.numClasses++
	g.liveNodes++
	g.version++

	var zero D
	g.data = append(grow(g.data, 1), zero)
	g.data[id] = g.analysis.Make(g, g.Node(nid))
	g.analysis.Modify(g, id)
	return g.uf.find(id)
}

// carveLists returns a new class's node list, holding nid, and an empty
// parents list with room for two, both carved from a shared slab so that
// creating a class costs no allocation of its own. Their capacities end
// where the next list begins, so growing them later copies instead of
// overwriting a neighbour.
func (g *EGraph[D]) carveLists(nid NodeID) (nodes, parents []NodeID) {
	const per = 1 + initialParents
	if len(g.slab)+per > cap(g.slab) {
		g.slab = make([]NodeID, 0, 1024*per)
	}
	i := len(g.slab)
	g.slab = g.slab[:i+per]
	g.slab[i] = nid
	return g.slab[i : i+1 : i+1], g.slab[i+1 : i+1 : i+per]
}

// initialParents is the parents capacity reserved with each class: most
// classes are used by one or two nodes.
const initialParents = 2

func (g *EGraph[D]) indexOp(op Op, id ClassID) {
	ix := g.byOp[op]
	if ix == nil {
		ix = &opIndex{}
		g.byOp[op] = ix
	}
	ix.classes = append(ix.classes, id)
}

func (g *EGraph[D]) markOpDirty(op Op) {
	if ix := g.byOp[op]; !ix.dirty {
		ix.dirty = true
		g.dirtyOps = append(g.dirtyOps, op)
	}
}

func (g *EGraph[D]) markClassDirty(id ClassID) {
	if c := &g.classes[id]; !c.dirty {
		c.dirty = true
		g.dirtyClasses = append(g.dirtyClasses, id)
	}
}

// Union merges the classes of a and b and reports whether they were
// distinct. Congruences it implies are found by the next Rebuild.
func (g *EGraph[D]) Union(a, b ClassID) bool {
	a, b = g.uf.find(a), g.uf.find(b)
	if a == b {
		return false
	}
	// Keep the class with more parents as root: the other's parents are
	// the nodes that must be re-canonicalized.
	if len(g.classes[a].parents) < len(g.classes[b].parents) {
		a, b = b, a
	}
	g.uf.link(a, b)
	g.numClasses--
	g.version++

	ca, cb := &g.classes[a], &g.classes[b]
	g.pending = append(g.pending, cb.parents...)
	res := g.analysis.Merge(&g.data[a], g.data[b])
	if res.IntoChanged {
		g.analysisPending = append(g.analysisPending, ca.parents...)
	}
	if res.FromChanged {
		g.analysisPending = append(g.analysisPending, cb.parents...)
	}
	for _, nid := range cb.nodes {
		g.markOpDirty(g.nodes[nid].op)
	}
	ca.nodes = append(ca.nodes, cb.nodes...)
	ca.parents = append(ca.parents, cb.parents...)
	var zero D
	g.data[b] = zero
	*cb = eclass{}
	g.markClassDirty(a)

	g.analysis.Modify(g, a)
	return true
}

// grow makes room for n more elements, doubling the capacity of large
// slices where append would grow them by only a quarter: the graph's
// per-node arrays reach 10^5-10^6 entries in a run, and the repeated copying
// and re-scanning of 1.25x growth dominated insertion time.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	return slices.Grow(s, max(n, len(s), 64))
}
