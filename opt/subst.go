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
	s         *session
	memo      map[substKey]egraph.ClassID
	replaced  map[replaceKey]egraph.ClassID // memo of replace
	replacing map[replaceKey]bool
	active    map[substKey]bool
	budget    int
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
	return &substituter{s: s, memo: map[substKey]egraph.ClassID{}, active: map[substKey]bool{},
		replaced: map[replaceKey]egraph.ClassID{}, replacing: map[replaceKey]bool{}}
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
	// A copy of c keeps c's source position.
	defer t.s.restorePos(t.s.at(g.Data(c).Pos))
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

// replaceKey memoizes replace: the class, the replaced term's class and
// the replacement; for replaceFiltered, t is the walked source and k the
// key (0 for replace).
type replaceKey struct{ c, t, r, k egraph.ClassID }

// replaceTarget is what replaceWalk replaces: the class t, or (filtered)
// the walks of t filtered to the key k. fv are the target's variables.
type replaceTarget struct {
	t, k     egraph.ClassID
	filtered bool
	fv       varSet
}

// replace returns the class of c with the occurrences of the term of
// class t replaced by r, where the variables of t and r mean what they
// mean at c: below a binder of one of them, nothing is replaced. The
// rules that use it (LK7) hold where t equals r, so replacing some
// occurrences and not others is as correct as replacing all, and a class
// none of whose nodes changes is its own result. The new classes are
// never united with the old ones: t equals r only within the binder that
// makes them equal, while a class of the graph means the same wherever
// it is used.
func (t *substituter) replace(c, target, r egraph.ClassID) (egraph.ClassID, bool) {
	t.budget = maxSubstNodes
	g := t.s.g
	fv := g.Data(target).FV
	return t.replaceWalk(c, replaceTarget{t: g.Find(target), fv: fv}, g.Find(r), fv.union(g.Data(r).FV))
}

// replaceFiltered returns the class of c with the walks of src filtered
// to the key k (sum(<k2, v2> in src) if k == k2 then e, or k2 == k)
// replaced by let k2 = k in let v2 = r in e, where r is src's value at k:
// such a walk visits that one entry. As for replace, the variables of
// src, k and r mean what they mean at c.
func (t *substituter) replaceFiltered(c, src, k, r egraph.ClassID) (egraph.ClassID, bool) {
	t.budget = maxSubstNodes
	g := t.s.g
	fv := g.Data(src).FV.union(g.Data(k).FV)
	target := replaceTarget{t: g.Find(src), k: g.Find(k), filtered: true, fv: fv}
	return t.replaceWalk(c, target, g.Find(r), fv.union(g.Data(r).FV))
}

// filteredWalk returns the class of e where n is sum(<k2, v2> in src) if
// k == k2 then e (or k2 == k).
func (s *session) filteredWalk(n egraph.Node, src, k egraph.ClassID) (egraph.ClassID, bool) {
	g := s.g
	if n.Op != opSum || g.Find(n.Children[2]) != g.Find(src) {
		return 0, false
	}
	k, k2 := g.Find(k), g.Find(n.Children[0])
	for _, bid := range g.Nodes(n.Children[3]) {
		b := g.Node(bid)
		if b.Op != opIf {
			continue
		}
		for _, cid := range g.Nodes(b.Children[0]) {
			eq := g.Node(cid)
			if eq.Op != opEq {
				continue
			}
			l, r := g.Find(eq.Children[0]), g.Find(eq.Children[1])
			if l == k && r == k2 || l == k2 && r == k {
				return b.Children[1], true
			}
		}
	}
	return 0, false
}

// filteredWalkOf is filteredWalk for a filtered target outside a
// shadowing scope; other replacements look at no node's body.
func (t *substituter) filteredWalkOf(n egraph.Node, target replaceTarget, shadow bool) (egraph.ClassID, bool) {
	if !target.filtered || shadow {
		return 0, false
	}
	return t.s.filteredWalk(n, target.t, target.k)
}

func (t *substituter) replaceWalk(c egraph.ClassID, target replaceTarget, r egraph.ClassID, bound varSet) (egraph.ClassID, bool) {
	g := t.s.g
	c = g.Find(c)
	if !target.filtered && c == target.t {
		return r, true
	}
	for _, v := range target.fv {
		if !g.Data(c).FV.has(v) {
			return c, true // no term of c need hold the target
		}
	}
	key := replaceKey{c, target.t, r, target.k}
	if id, ok := t.replaced[key]; ok {
		return g.Find(id), true
	}
	if t.replacing[key] || t.budget <= 0 {
		return 0, false
	}
	t.replacing[key] = true
	defer delete(t.replacing, key)
	result, have := c, false
nodes:
	for _, nid := range append([]egraph.NodeID(nil), g.Nodes(c)...) {
		n := g.Node(nid)
		nb := binderCount(n.Op)
		shadow := false
		for i := 0; i < nb; i++ {
			b, ok := bindSym(g, n.Children[i])
			if !ok || bound.has(uint32(b)) {
				shadow = true
			}
		}
		out := append([]egraph.ClassID(nil), n.Children...)
		changed := false
		op, payload := n.Op, n.Payload
		if e, ok := t.filteredWalkOf(n, target, shadow); ok {
			// The walk visits one entry: let k2 = k in let v2 = r in e.
			e, ok := t.replaceWalk(e, target, r, bound)
			if !ok {
				continue
			}
			inner := t.s.add(egraph.Node{Op: opLet, Children: []egraph.ClassID{n.Children[1], r, e}})
			op, payload, out, changed = opLet, 0, []egraph.ClassID{n.Children[0], target.k, inner}, true
		}
		for i := nb; i < len(out) && op == n.Op; i++ {
			if shadow && inScope(n.Op, i) {
				continue
			}
			k, ok := t.replaceWalk(out[i], target, r, bound)
			if !ok {
				continue nodes
			}
			changed = changed || g.Find(k) != g.Find(out[i])
			out[i] = k
		}
		if !changed {
			continue
		}
		t.budget--
		id := t.s.add(egraph.Node{Op: op, Payload: payload, Children: out})
		if !have {
			result, have = id, true
		} else {
			g.Union(result, id)
			result = g.Find(result)
		}
	}
	t.replaced[key] = result
	return result, true
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
