package egraph

import (
	"fmt"
	"iter"
)

// Match groups the substitutions found for one e-class: the class a
// rewrite's right-hand side will be unioned with. The substitutions are
// stored flat (len(vars) class IDs each, no pointers), because searches of
// explosive rules produce millions of them and per-substitution slices
// dominated allocation and garbage collection.
type Match struct {
	Class ClassID
	vars  []Var
	ids   []ClassID
	n     int
}

// NewMatch starts an empty match of class for substitutions over vars
// (custom searchers build their results with it and Add).
func NewMatch(class ClassID, vars []Var) Match {
	return Match{Class: class, vars: vars}
}

// Add appends a substitution binding vars[i] to ids[i].
func (m *Match) Add(ids ...ClassID) {
	if len(ids) != len(m.vars) {
		panic(fmt.Sprintf("egraph: Match.Add: %d classes for %d variables", len(ids), len(m.vars)))
	}
	m.ids = append(m.ids, ids...)
	m.n++
}

// Len reports the number of substitutions.
func (m Match) Len() int { return m.n }

// Subst returns the i-th substitution (a view; no copying).
func (m Match) Subst(i int) Subst {
	nv := len(m.vars)
	return Subst{vars: m.vars, ids: m.ids[i*nv : (i+1)*nv : (i+1)*nv]}
}

// Substs iterates over the substitutions.
func (m Match) Substs() iter.Seq[Subst] {
	return func(yield func(Subst) bool) {
		for i := range m.n {
			if !yield(m.Subst(i)) {
				return
			}
		}
	}
}

// CountSubsts totals the substitutions of matches.
func CountSubsts(matches []Match) int {
	n := 0
	for _, m := range matches {
		n += m.n
	}
	return n
}

// Searcher finds matches in an e-graph: a Pattern (via PatternSearcher), or
// client code (via SearcherFunc).
type Searcher[D any] interface {
	// Search returns the matches, stopping after limit substitutions when
	// limit > 0. The graph is clean when the runner calls it.
	Search(g *EGraph[D], limit int) []Match
	// Vars lists the variables every substitution binds.
	Vars() []Var
}

// SearchPattern e-matches p against g (rebuilding g first if dirty) and
// returns at most limit substitutions when limit > 0. Only the classes
// holding the root's operator are visited; a variable at the root visits
// every class.
func SearchPattern[D any](g *EGraph[D], p *Pattern, limit int) []Match {
	g.ensureClean()
	m := machine[D]{g: g, prog: &p.prog, regs: make([]ClassID, p.prog.numRegs), limit: limit}
	if len(p.prog.grounds) > 0 {
		m.ground = make([]ClassID, len(p.prog.grounds))
		for i, pi := range p.prog.grounds {
			id, ok := lookupGround(g, p, pi)
			if !ok {
				return nil // a constant part of the pattern is absent
			}
			m.ground[i] = id
		}
	}

	// Record (class, number of substs) while searching; carve the substs
	// from the flat output only at the end, as it may move while growing.
	type found struct {
		class ClassID
		count int
	}
	var hits []found
	visit := func(c ClassID) bool {
		before := m.count
		m.regs[0] = c
		more := m.run(0)
		if m.count > before {
			hits = append(hits, found{c, m.count - before})
		}
		return more
	}
	root := &p.nodes[p.root()]
	if root.isVar {
		for c := range g.Classes() {
			if !visit(c) {
				break
			}
		}
	} else {
		for _, c := range g.ClassesWithOp(root.op) {
			if !visit(c) {
				break
			}
		}
	}
	if len(hits) == 0 {
		return nil
	}

	nv := len(p.vars)
	matches := make([]Match, len(hits))
	next := 0
	for i, h := range hits {
		end := next + h.count*nv
		matches[i] = Match{Class: h.class, vars: p.vars, ids: m.out[next:end:end], n: h.count}
		next = end
	}
	return matches
}

// lookupGround finds the class of a variable-free sub-pattern, if present.
func lookupGround[D any](g *EGraph[D], p *Pattern, pi int) (ClassID, bool) {
	n := &p.nodes[pi]
	kids := make([]ClassID, len(n.kids))
	for i, k := range n.kids {
		id, ok := lookupGround(g, p, k)
		if !ok {
			return 0, false
		}
		kids[i] = id
	}
	return g.Lookup(Node{Op: n.op, Payload: n.payload, Children: kids})
}

// PatternSearcher makes p a Searcher.
func PatternSearcher[D any](p *Pattern) Searcher[D] { return patternSearcher[D]{p} }

type patternSearcher[D any] struct{ p *Pattern }

func (s patternSearcher[D]) Search(g *EGraph[D], limit int) []Match {
	return SearchPattern(g, s.p, limit)
}

func (s patternSearcher[D]) Vars() []Var { return s.p.vars }

// SearcherFunc is a Searcher written as code, for matches patterns cannot
// express. VarList names the variables its substitutions bind (build them
// with NewSubst over the same slice).
type SearcherFunc[D any] struct {
	VarList []Var
	Fn      func(g *EGraph[D], limit int) []Match
}

// Search implements Searcher.
func (s SearcherFunc[D]) Search(g *EGraph[D], limit int) []Match { return s.Fn(g, limit) }

// Vars implements Searcher.
func (s SearcherFunc[D]) Vars() []Var { return s.VarList }
