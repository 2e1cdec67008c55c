package egraph

import (
	"fmt"
	"slices"
)

// Rewrite is a named rule: wherever Searcher matches (and Condition, if
// set, accepts the substitution), the classes returned by Applier are
// unioned with the matched class.
type Rewrite[D any] struct {
	Name      string
	Searcher  Searcher[D]
	Applier   Applier[D]
	Condition Condition[D] // nil: always apply
}

// Applier produces the classes to union with a matched class: instantiate
// a pattern (PatternApplier), or run client code (ApplierFunc). The
// returned slice may be scratch space reused by the next call.
type Applier[D any] interface {
	Apply(g *EGraph[D], class ClassID, s Subst) []ClassID
}

// ApplierFunc is an Applier written as code.
type ApplierFunc[D any] func(g *EGraph[D], class ClassID, s Subst) []ClassID

// Apply implements Applier.
func (f ApplierFunc[D]) Apply(g *EGraph[D], class ClassID, s Subst) []ClassID {
	return f(g, class, s)
}

// Condition decides whether a match may be applied, e.g. by consulting the
// analysis data of the bound classes (the graph may be dirty: use g.Find and
// g.Data, which are always safe).
type Condition[D any] func(g *EGraph[D], class ClassID, s Subst) bool

// NewRewrite builds a rule and checks that a pattern applier only uses
// variables the searcher binds.
func NewRewrite[D any](name string, searcher Searcher[D], applier Applier[D]) (*Rewrite[D], error) {
	if pa, ok := applier.(*patternApplier[D]); ok {
		if err := pa.bind(searcher.Vars()); err != nil {
			return nil, fmt.Errorf("rewrite %s: %w", name, err)
		}
	}
	return &Rewrite[D]{Name: name, Searcher: searcher, Applier: applier}, nil
}

// ParseRewrite builds the rule lhs => rhs from two patterns.
func ParseRewrite[D any](lang Language, name, lhs, rhs string) (*Rewrite[D], error) {
	l, err := ParsePattern(lang, lhs)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: left-hand side: %w", name, err)
	}
	r, err := ParsePattern(lang, rhs)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: right-hand side: %w", name, err)
	}
	return NewRewrite(name, PatternSearcher[D](l), PatternApplier[D](r))
}

// NewBidirectional builds lhs => rhs (named name) and rhs => lhs (named
// name+"-rev"); both sides must use the same variables.
func NewBidirectional[D any](name string, lhs, rhs *Pattern) ([]*Rewrite[D], error) {
	fwd, err := NewRewrite(name, PatternSearcher[D](lhs), PatternApplier[D](rhs))
	if err != nil {
		return nil, err
	}
	rev, err := NewRewrite(name+"-rev", PatternSearcher[D](rhs), PatternApplier[D](lhs))
	if err != nil {
		return nil, err
	}
	return []*Rewrite[D]{fwd, rev}, nil
}

// ParseBidirectional builds lhs => rhs (named name) and rhs => lhs (named
// name+"-rev"); both sides must use the same variables.
func ParseBidirectional[D any](lang Language, name, lhs, rhs string) ([]*Rewrite[D], error) {
	l, err := ParsePattern(lang, lhs)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: left-hand side: %w", name, err)
	}
	r, err := ParsePattern(lang, rhs)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: right-hand side: %w", name, err)
	}
	return NewBidirectional[D](name, l, r)
}

// If adds a condition (conjoined with any existing one) and returns rw.
func (rw *Rewrite[D]) If(c Condition[D]) *Rewrite[D] {
	if prev := rw.Condition; prev != nil {
		rw.Condition = func(g *EGraph[D], class ClassID, s Subst) bool {
			return prev(g, class, s) && c(g, class, s)
		}
	} else {
		rw.Condition = c
	}
	return rw
}

// Search runs the rule's searcher (limit as in Searcher.Search).
func (rw *Rewrite[D]) Search(g *EGraph[D], limit int) []Match {
	g.ensureClean()
	return rw.Searcher.Search(g, limit)
}

// Apply applies the rule to matches found by Search and returns the number
// of unions that changed the graph. Call Rebuild afterwards.
func (rw *Rewrite[D]) Apply(g *EGraph[D], matches []Match) int {
	n, _ := rw.apply(g, matches, nil)
	return n
}

// stopCheckEvery is how many substitutions are applied between two calls
// of the runner's limit check.
const stopCheckEvery = 256

// apply is Apply with an optional stop check polled every stopCheckEvery
// substitutions; it reports whether it stopped early.
func (rw *Rewrite[D]) apply(g *EGraph[D], matches []Match, stop func() bool) (int, bool) {
	applied, seen := 0, 0
	for _, m := range matches {
		for i := range m.n {
			s := m.Subst(i)
			seen++
			if stop != nil && seen%stopCheckEvery == 0 && stop() {
				return applied, true
			}
			if rw.Condition != nil && !rw.Condition(g, m.Class, s) {
				continue
			}
			for _, id := range rw.Applier.Apply(g, m.Class, s) {
				if g.Union(m.Class, id) {
					applied++
				}
			}
		}
	}
	return applied, false
}

// PatternApplier makes p an Applier: it adds p's term under the
// substitution and returns its class.
func PatternApplier[D any](p *Pattern) Applier[D] { return &patternApplier[D]{p: p} }

type patternApplier[D any] struct {
	p *Pattern
	// For substitutions over boundVars, slots[i] is the position of
	// p.vars[i] in them; others are looked up by name.
	boundVars []Var
	slots     []int
	ids, kids []ClassID // scratch
	out       [1]ClassID
}

// bind precomputes variable positions for substitutions over vars.
func (a *patternApplier[D]) bind(vars []Var) error {
	slots := make([]int, len(a.p.vars))
	for i, v := range a.p.vars {
		j := slices.Index(vars, v)
		if j < 0 {
			return fmt.Errorf("variable %s of %s is not bound by the searcher", v, a.p)
		}
		slots[i] = j
	}
	a.boundVars, a.slots = vars, slots
	return nil
}

func (a *patternApplier[D]) Apply(g *EGraph[D], _ ClassID, s Subst) []ClassID {
	id, ok := a.instantiate(g, s)
	if !ok {
		return nil
	}
	a.out[0] = id
	return a.out[:]
}

func (a *patternApplier[D]) instantiate(g *EGraph[D], s Subst) (ClassID, bool) {
	fast := sameVars(s.vars, a.boundVars)
	ids := a.ids[:0]
	for _, n := range a.p.nodes {
		if n.isVar {
			var id ClassID
			if fast {
				id = s.ids[a.slots[n.slot]]
			} else {
				var ok bool
				if id, ok = s.Get(a.p.vars[n.slot]); !ok {
					return 0, false
				}
			}
			ids = append(ids, id)
			continue
		}
		kids := a.kids[:0]
		for _, k := range n.kids {
			kids = append(kids, ids[k])
		}
		a.kids = kids
		ids = append(ids, g.Add(Node{Op: n.op, Payload: n.payload, Children: kids}))
	}
	a.ids = ids
	return ids[len(ids)-1], true
}

// Instantiate adds p's term with its variables replaced as s binds them and
// returns the root's class; false if s lacks one of p's variables.
func Instantiate[D any](g *EGraph[D], p *Pattern, s Subst) (ClassID, bool) {
	a := patternApplier[D]{p: p}
	return a.instantiate(g, s)
}
