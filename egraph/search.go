package egraph

// Match groups the substitutions found for one e-class: the class a
// rewrite's right-hand side will be unioned with.
type Match struct {
	Class  ClassID
	Substs []Subst
}

// CountSubsts totals the substitutions of matches.
func CountSubsts(matches []Match) int {
	n := 0
	for _, m := range matches {
		n += len(m.Substs)
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
	substs := make([]Subst, m.count)
	for i := range substs {
		substs[i] = Subst{vars: p.vars, ids: m.out[i*nv : (i+1)*nv : (i+1)*nv]}
	}
	matches := make([]Match, len(hits))
	next := 0
	for i, h := range hits {
		matches[i] = Match{Class: h.class, Substs: substs[next : next+h.count : next+h.count]}
		next += h.count
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
