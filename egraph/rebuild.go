package egraph

import (
	"cmp"
	"slices"
)

// Rebuild restores the e-graph invariants after a batch of Adds and Unions:
//
//   - congruence: nodes that became equal because their children were merged
//     are found through the hash-cons table, and their classes are merged
//     (which may cascade upward);
//   - hash-consing: every live node has canonical children and is the only
//     live node with its key;
//   - analysis: data of classes whose children's data changed are recomputed
//     and joined, to a fixed point, calling Modify on every class whose
//     datum changed;
//   - tidiness: class node lists drop duplicates and are sorted by operator,
//     parents lists drop dead entries, the operator index is canonical.
//
// Deferring this work to once per batch (egg's rebuilding) instead of after
// each union is what makes equality saturation affordable. Rebuild returns
// the number of unions it performed.
func (g *EGraph[D]) Rebuild() int {
	unions := 0
	for len(g.pending) > 0 || len(g.analysisPending) > 0 {
		for len(g.pending) > 0 {
			nid := g.pending[len(g.pending)-1]
			g.pending = g.pending[:len(g.pending)-1]
			if g.repairNode(nid) {
				unions++
			}
		}
		for len(g.analysisPending) > 0 {
			nid := g.analysisPending[len(g.analysisPending)-1]
			g.analysisPending = g.analysisPending[:len(g.analysisPending)-1]
			g.repairData(nid)
		}
	}
	g.cleanClasses()
	g.cleanOpIndex()
	return unions
}

// repairNode re-canonicalizes the children of nid in place and re-files it
// in the hash-cons table. If an equal live node already exists, nid is
// dropped and the two classes are merged; it reports whether that union
// changed anything.
func (g *EGraph[D]) repairNode(nid NodeID) bool {
	if g.dead[nid] {
		return false
	}
	r := g.nodes[nid]
	kids := g.kidsOf(nid)
	g.memoRemove(r.op, r.payload, kids, nid)
	for i, c := range kids {
		kids[i] = g.uf.find(c)
	}
	twin, twinClass, found := g.memoGet(r.op, r.payload, kids)
	if !found || twin == nid {
		g.memoPut(r.op, r.payload, kids, nid)
		return false
	}
	g.dead[nid] = true
	g.liveNodes--
	// The lists naming nid (its class's nodes, its children's parents)
	// must drop it when cleaned.
	g.markClassDirty(g.uf.find(r.class))
	for _, c := range kids {
		g.markClassDirty(c)
	}
	return g.Union(r.class, twinClass)
}

// repairData recomputes the datum of nid and joins it into its class.
func (g *EGraph[D]) repairData(nid NodeID) {
	if g.dead[nid] {
		return
	}
	c := g.uf.find(g.nodes[nid].class)
	d := g.analysis.Make(g, g.Node(nid))
	if g.analysis.Merge(&g.data[c], d).IntoChanged {
		g.analysisPending = append(g.analysisPending, g.classes[c].parents...)
		g.analysis.Modify(g, c)
	}
}

// cleanClasses tidies the node and parent lists of classes touched since the
// last rebuild.
func (g *EGraph[D]) cleanClasses() {
	isDead := func(n NodeID) bool { return g.dead[n] }
	for _, id := range g.dirtyClasses {
		c := &g.classes[g.uf.find(id)]
		if !c.dirty {
			continue
		}
		c.dirty = false
		c.nodes = slices.DeleteFunc(c.nodes, isDead)
		slices.SortFunc(c.nodes, g.compareNodes)
		c.parents = slices.DeleteFunc(c.parents, isDead)
		slices.Sort(c.parents)
		c.parents = slices.Compact(c.parents)
	}
	g.dirtyClasses = g.dirtyClasses[:0]
}

// compareNodes orders nodes by operator, payload, then children, so that the
// nodes of one operator are contiguous in a class.
func (g *EGraph[D]) compareNodes(a, b NodeID) int {
	x, y := &g.nodes[a], &g.nodes[b]
	if c := cmp.Compare(x.op, y.op); c != 0 {
		return c
	}
	if c := cmp.Compare(x.payload, y.payload); c != 0 {
		return c
	}
	return slices.Compare(g.kidsOf(a), g.kidsOf(b))
}

// cleanOpIndex makes the operator index hold canonical IDs once each.
func (g *EGraph[D]) cleanOpIndex() {
	for _, op := range g.dirtyOps {
		ix := g.byOp[op]
		ix.dirty = false
		for i, c := range ix.classes {
			ix.classes[i] = g.uf.find(c)
		}
		slices.Sort(ix.classes)
		ix.classes = slices.Compact(ix.classes)
	}
	g.dirtyOps = g.dirtyOps[:0]
}
