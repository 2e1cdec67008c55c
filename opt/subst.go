package opt

import (
	"github.com/storel/storel/egraph"
)

// substituter performs capture-avoiding substitution e[x := r] directly on
// the e-graph: the result class holds the substitution of every node of e
// (so every form of e found so far carries over), children are substituted
// recursively, and only classes in which x occurs are copied: a class whose
// terms need not mention x is its own substitution. A binder that would
// capture a variable of r is renamed to a fresh variable. Results are
// memoized per (class, variable, replacement), so applying the same rule
// again costs nothing.
//
// A node that leads back to a class being substituted (a cycle, such as
// e = e * 1) is skipped: the other nodes of its class still give a correct,
// if smaller, result. Each call may add at most maxSubstNodes nodes; past
// that it gives up (the rule is not applied), which bounds the copies an
// inlining into a large body can make.
type substituter struct {
	s      *session
	memo   map[substKey]egraph.ClassID
	active map[substKey]bool
	budget int
	// firstOnly substitutes only the first node of each class (a term
	// rather than the class): a variant kept to measure the design.
	firstOnly bool
}

type substKey struct {
	c egraph.ClassID
	x uint64
	r egraph.ClassID
}

const maxSubstNodes = 4000

func newSubstituter(s *session) *substituter {
	return &substituter{s: s, memo: map[substKey]egraph.ClassID{}, active: map[substKey]bool{}}
}

// subst returns the class of c[x := r].
func (t *substituter) subst(c egraph.ClassID, x uint64, r egraph.ClassID) (egraph.ClassID, bool) {
	t.budget = maxSubstNodes
	return t.walk(c, x, r)
}

func (t *substituter) walk(c egraph.ClassID, x uint64, r egraph.ClassID) (egraph.ClassID, bool) {
	g := t.s.g
	c, r = g.Find(c), g.Find(r)
	if !g.Data(c).FV.has(uint32(x)) {
		return c, true
	}
	key := substKey{c, x, r}
	if id, ok := t.memo[key]; ok {
		return g.Find(id), true
	}
	if t.active[key] || t.budget <= 0 {
		return 0, false
	}
	t.active[key] = true
	defer delete(t.active, key)
	var result egraph.ClassID
	have := false
	for _, nid := range append([]egraph.NodeID(nil), g.Nodes(c)...) {
		n := g.Node(nid)
		kids := append([]egraph.ClassID(nil), n.Children...)
		id, ok := t.node(n.Op, n.Payload, kids, x, r)
		if !ok {
			continue
		}
		if !have {
			result, have = id, true
		} else {
			g.Union(result, id)
			result = g.Find(result)
		}
		if t.firstOnly {
			break
		}
	}
	if have {
		t.memo[key] = result
	}
	return result, have
}

// node substitutes in one node.
func (t *substituter) node(op egraph.Op, payload uint64, kids []egraph.ClassID, x uint64, r egraph.ClassID) (egraph.ClassID, bool) {
	s := t.s
	g := s.g
	if op == opVar && payload == x {
		return r, true
	}
	if len(kids) == 0 {
		return s.add(egraph.Node{Op: op, Payload: payload}), true
	}
	nb := binderCount(op)
	shadowed := false
	rfv := g.Data(r).FV
	for i := 0; i < nb; i++ {
		b, ok := bindSym(g, kids[i])
		if !ok {
			return 0, false
		}
		if b == x {
			shadowed = true
		}
	}
	out := make([]egraph.ClassID, len(kids))
	copy(out, kids)
	for i := 0; i < nb; i++ {
		b, _ := bindSym(g, kids[i])
		if shadowed || !rfv.has(uint32(b)) {
			continue
		}
		// b would capture r's b: rename it in the body first.
		body := bodyIndex(op)
		if !g.Data(kids[body]).FV.has(uint32(x)) {
			continue
		}
		fresh := s.freshVar(b)
		fc := s.varClass(fresh)
		nb, ok := t.walk(out[body], b, fc)
		if !ok {
			return 0, false
		}
		out[body] = nb
		out[i] = fc
	}
	for i := nb; i < len(kids); i++ {
		if shadowed && inScope(op, i) {
			continue
		}
		c, ok := t.walk(out[i], x, r)
		if !ok {
			return 0, false
		}
		out[i] = c
	}
	t.budget--
	return s.add(egraph.Node{Op: op, Payload: payload, Children: out}), true
}

// bodyIndex is the child index of a binder operator's body.
func bodyIndex(op egraph.Op) int {
	switch op {
	case opLet:
		return 2
	case opSum:
		return 3
	}
	return 5
}
