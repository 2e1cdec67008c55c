package egraph

import (
	"slices"
	"testing"
)

// checkInvariants verifies, on a rebuilt graph, everything Rebuild promises.
func checkInvariants[D any](t *testing.T, g *EGraph[D]) {
	t.Helper()
	if !g.Clean() {
		t.Fatalf("graph not clean")
	}
	roots, live := 0, 0
	opClasses := map[Op][]ClassID{}
	for c := range g.Classes() {
		roots++
		cl := &g.classes[c]
		if len(cl.nodes) == 0 {
			t.Errorf("class %d has no nodes", c)
		}
		if !slices.IsSortedFunc(cl.nodes, g.compareNodes) {
			t.Errorf("class %d: nodes not sorted", c)
		}
		for _, nid := range cl.nodes {
			live++
			if g.dead[nid] {
				t.Errorf("class %d holds dead node %d", c, nid)
			}
			if got := g.NodeClass(nid); got != c {
				t.Errorf("node %d listed in class %d but belongs to %d", nid, c, got)
			}
			n := g.Node(nid)
			for _, k := range n.Children {
				if g.Find(k) != k {
					t.Errorf("node %d has non-canonical child %d", nid, k)
				}
				if !slices.Contains(g.classes[k].parents, nid) {
					t.Errorf("node %d missing from parents of its child %d", nid, k)
				}
			}
			if got, _, ok := g.memoGet(n.Op, n.Payload, n.Children); !ok || got != nid {
				t.Errorf("hash-cons entry of node %d is %d, %v", nid, got, ok)
			}
			if l := opClasses[n.Op]; len(l) == 0 || l[len(l)-1] != c {
				opClasses[n.Op] = append(opClasses[n.Op], c)
			}
		}
		for _, p := range cl.parents {
			if g.dead[p] {
				t.Errorf("class %d lists dead parent %d", c, p)
			}
			if !slices.Contains(g.Node(p).Children, c) {
				t.Errorf("class %d lists parent %d that does not use it", c, p)
			}
		}
	}
	if roots != g.NumClasses() {
		t.Errorf("NumClasses %d, counted %d", g.NumClasses(), roots)
	}
	if live != g.NumNodes() {
		t.Errorf("NumNodes %d, counted %d", g.NumNodes(), live)
	}
	if m := g.memo.count; m != live {
		t.Errorf("hash-cons holds %d entries for %d live nodes", m, live)
	}
	for op, want := range opClasses {
		if got := g.ClassesWithOp(op); !slices.Equal(got, want) {
			t.Errorf("op %d index %v, want %v", op, got, want)
		}
	}
	for op, ix := range g.byOp {
		if _, ok := opClasses[op]; !ok && len(ix.classes) > 0 {
			t.Errorf("op %d index lists %v but no class has it", op, ix.classes)
		}
	}
}
