package opt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// compiledRule is one direction of a rule of the rule file, for one choice
// of the annotations its singletons match.
type compiledRule struct {
	def      *ruleDef
	name     string // rewrite name: the rule's, with "<" for right-to-left
	lhs, rhs *pat
	sexpr    string // the left-hand side as an egraph pattern
	pattern  *egraph.Pattern
	anns     map[int]ir.Ann
	lits     []string        // the constant each literal 0 or 1 of the left-hand side matches
	binders  map[string]bool // metavariables the left-hand side binds as variables
	dropUniq bool
}

// ruleSet is the compiled rule file.
type ruleSet struct {
	defs   []*ruleDef
	rules  []*compiledRule
	stages []*stageDef
}

var defaultRules = mustRuleSet()

func mustRuleSet() *ruleSet {
	rs, err := compileRuleFile("rules.txt", rulesText)
	if err != nil {
		panic("opt: " + err.Error())
	}
	return rs
}

// compileRuleFile parses and checks a rule file. Compiling against a
// session's language happens in (*session).rewrites.
func compileRuleFile(name, text string) (*ruleSet, error) {
	defs, stages, err := parseRuleFile(name, text)
	if err != nil {
		return nil, err
	}
	rs := &ruleSet{defs: defs, stages: stages}
	var errs []string
	for _, d := range defs {
		dirs := [][2]*pat{{d.LHS, d.RHS}}
		if d.Bidir {
			dirs = append(dirs, [2]*pat{d.RHS, d.LHS})
		}
		for i, dir := range dirs {
			nm := d.Name
			if i == 1 {
				nm += "<"
			}
			crs, err := compileDirection(d, nm, dir[0], dir[1])
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s:%d: rule %s: %v", name, d.Line, nm, err))
				continue
			}
			rs.rules = append(rs.rules, crs...)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return rs, nil
}

// patternLang parses left-hand sides; it interns no name (see
// compileDirection).
var patternLang = &lang{}

// annotation slots: every singleton written without annotation shares the
// slot annAny; every @unphysical one shares annLogicalOrUnique.
var slotValues = map[int][]ir.Ann{
	annAny:             {ir.AnnNone, ir.AnnUnique, ir.AnnDense, ir.AnnHash},
	annLogicalOrUnique: {ir.AnnNone, ir.AnnUnique},
}

func compileDirection(d *ruleDef, name string, lhs, rhs *pat) ([]*compiledRule, error) {
	if lhs.kind != pNode {
		return nil, fmt.Errorf("the left-hand side must be an operator, not %s", lhs)
	}
	metas := map[string]bool{}
	binders := map[string]bool{}
	slots := map[int]bool{}
	var check func(p *pat, side string) error
	check = func(p *pat, side string) error {
		switch p.kind {
		case pMeta:
			if side == "lhs" {
				metas[p.name] = true
			}
		case pSubst:
			return fmt.Errorf("a left-hand side cannot substitute")
		case pKeys, pWidth:
			return fmt.Errorf("keys(x) and width(x) may only appear on a right-hand side")
		case pNode:
			if p.op == opSingle && p.ann < 0 && side == "lhs" {
				slots[p.ann] = true
			}
			if p.op == opCall && side == "lhs" {
				return fmt.Errorf("a left-hand side cannot match a function call")
			}
			for i := 0; i < binderCount(p.op); i++ {
				if side == "lhs" {
					binders[p.kids[i].name] = true
				}
			}
		}
		for _, k := range p.kids {
			if err := check(k, side); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(lhs, "lhs"); err != nil {
		return nil, err
	}
	// Right-hand side metavariables: bound by the left, or binders the
	// right-hand side introduces (fresh variables).
	rhsBinders := map[string]bool{}
	var checkRHS func(p *pat) error
	checkRHS = func(p *pat) error {
		switch p.kind {
		case pMeta:
			if !metas[p.name] && !rhsBinders[p.name] {
				return fmt.Errorf("%s is not bound by the left-hand side", p.name)
			}
		case pNode:
			if p.op == opSingle && p.ann == annLogicalOrUnique {
				return fmt.Errorf("the right-hand side singleton %s: @unphysical matches two annotations and builds neither (write @logical)", p)
			}
			if p.op == opSingle && p.ann == annAny && !slots[annAny] && !slots[annLogicalOrUnique] {
				return fmt.Errorf("the right-hand side singleton %s needs an annotation: the left-hand side has no singleton to copy it from", p)
			}
			for i := 0; i < binderCount(p.op); i++ {
				if !metas[p.kids[i].name] {
					rhsBinders[p.kids[i].name] = true
				}
			}
		case pKeys, pWidth:
			if !metas[p.kids[0].name] {
				return fmt.Errorf("%s: %s is not bound by the left-hand side", p, p.kids[0].name)
			}
			return nil
		case pSubst:
			if len(p.kids) > 2 {
				// findTerm looks the term up: a lookup of a metavariable
				// at a bound variable, never something to build.
				if t := p.kids[2]; t.kind != pNode || t.op != opLookup || t.kids[0].kind != pMeta || t.kids[1].kind != pMeta || !binders[t.kids[1].name] {
					return fmt.Errorf("%s[%s := ...]: a replaced term must be a lookup x(k) of a metavariable at a variable the left-hand side binds", p.kids[0], t)
				}
			} else if !binders[p.name] {
				return fmt.Errorf("%s[%s := ...]: %s must be a variable the left-hand side binds", p.kids[0], p.name, p.name)
			}
		case pZero:
			if p != rhs {
				return fmt.Errorf("0 may only be a whole right-hand side (its type is the rewritten class's)")
			}
		}
		for _, k := range p.kids {
			if err := checkRHS(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := checkRHS(rhs); err != nil {
		return nil, err
	}
	for _, c := range d.Conds {
		if _, ok := condFuncs[c.Name]; !ok {
			return nil, fmt.Errorf("unknown condition %s", c.Name)
		}
		for _, a := range c.Args {
			if !metas[a] {
				return nil, fmt.Errorf("condition %s: %s is not a metavariable of the left-hand side", c, a)
			}
		}
	}
	// Expand the annotation slots.
	var variants []map[int]ir.Ann
	variants = append(variants, map[int]ir.Ann{})
	for _, slot := range []int{annAny, annLogicalOrUnique} {
		if !slots[slot] {
			continue
		}
		var next []map[int]ir.Ann
		for _, v := range variants {
			for _, a := range slotValues[slot] {
				m := map[int]ir.Ann{}
				for k, x := range v {
					m[k] = x
				}
				m[slot] = a
				next = append(next, m)
			}
		}
		variants = next
	}
	// Expand the literals: 0 matches the zero of each type, 1 the ones.
	lits := [][]string{nil}
	var walkLits func(p *pat)
	walkLits = func(p *pat) {
		var choices []string
		switch p.kind {
		case pZero:
			choices = zeroHeads
		case pOne:
			choices = []string{"int:1", "real:1"}
		}
		if choices != nil {
			var next [][]string
			for _, l := range lits {
				for _, c := range choices {
					next = append(next, append(append([]string(nil), l...), c))
				}
			}
			lits = next
		}
		for _, k := range p.kids {
			walkLits(k)
		}
	}
	walkLits(lhs)
	var out []*compiledRule
	for _, anns := range variants {
		for _, l := range lits {
			cr := &compiledRule{def: d, name: name, lhs: lhs, rhs: rhs, anns: anns, lits: l, binders: binders, dropUniq: d.DropUnique}
			zn := 0
			cr.sexpr = cr.lhsSexpr(lhs, &zn)
			// Left-hand sides name no variable, global or function, so
			// their operators and payloads are the same in every
			// session's language: parse once, share (patterns are
			// read-only).
			p, err := egraph.ParsePattern(patternLang, cr.sexpr)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", cr.sexpr, err)
			}
			cr.pattern = p
			out = append(out, cr)
		}
	}
	return out, nil
}

// zeroHeads are the zeros a literal 0 of a left-hand side matches: each a
// ground constant, so a rule whose constant is absent from the graph costs
// one lookup per search.
var zeroHeads = []string{"int:0", "real:0", "empty:1:int", "empty:1:real", "empty:2:int", "empty:2:real",
	"empty:3:int", "empty:3:real", "empty:4:int", "empty:4:real"}

// lhsSexpr writes the left-hand side as an egraph pattern; literal 0 and 1
// become metavariables tested by implicit conditions.
func (cr *compiledRule) lhsSexpr(p *pat, zn *int) string {
	switch p.kind {
	case pMeta:
		return "?" + p.name
	case pZero, pOne:
		head := cr.lits[*zn]
		*zn++
		return head
	case pConst:
		if p.op == opBool {
			return "bool:" + strconv.FormatBool(p.payload != 0)
		}
		return "int:" + strconv.FormatInt(int64(p.payload), 10)
	}
	head := opNames[p.op]
	switch p.op {
	case opCall:
		head = "call:" + p.fn
	case opSingle:
		ann := ir.Ann(p.ann)
		if p.ann < 0 {
			ann = cr.anns[p.ann]
		}
		head = "single" + ann.String()
	}
	parts := []string{head}
	for _, k := range p.kids {
		parts = append(parts, cr.lhsSexpr(k, zn))
	}
	if len(p.kids) == 0 {
		return head
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// rewrites compiles the rule set for session s.
func (s *session) rewrites(rs *ruleSet, enabled func(name string) bool) ([]*egraph.Rewrite[Data], error) {
	var out []*egraph.Rewrite[Data]
	for _, cr := range rs.rules {
		if enabled != nil && !enabled(cr.name) {
			continue
		}
		p := cr.pattern
		cr := cr
		idx := map[string]int{}
		for i, v := range p.Vars() {
			idx[strings.TrimPrefix(string(v), "?")] = i
		}
		rw, err := egraph.NewRewrite[Data](cr.name, egraph.PatternSearcher[Data](p),
			egraph.ApplierFunc[Data](func(g *graph, class egraph.ClassID, sub egraph.Subst) []egraph.ClassID {
				return s.applyRule(cr, class, match{sub, idx})
			}))
		if err != nil {
			return nil, err
		}
		conds := cr.def.Conds
		// A rule that replaces a term applies only where the graph
		// holds it: checked before the match counts as applied, so that
		// a term that appears later still gets replaced.
		replaced := replacedTerms(cr.rhs)
		ruleID := len(out)
		rw.If(func(g *graph, class egraph.ClassID, sub egraph.Subst) bool {
			// The runner finds every match again in each iteration; one
			// applied before with the same classes would build nothing new.
			if s.seen[s.matchKey(ruleID, class, sub)] {
				return false
			}
			m := match{sub, idx}
			for _, c := range conds {
				if !condFuncs[c.Name](s, m, c.Args) {
					return false
				}
			}
			for _, t := range replaced {
				env := &rhsEnv{cr: cr, class: class, m: m}
				if cr.def.Filtered {
					if !s.hasFilteredWalk(env, t) {
						return false
					}
				} else if _, ok := s.findTerm(env, t); !ok {
					return false
				}
			}
			return true
		})
		rw.Applier = egraph.ApplierFunc[Data](func(g *graph, class egraph.ClassID, sub egraph.Subst) []egraph.ClassID {
			s.seen[s.matchKey(ruleID, class, sub)] = true
			return s.applyRule(cr, class, match{sub, idx})
		})
		out = append(out, rw)
	}
	return out, nil
}

// rhsEnv is the state of one instantiation of a right-hand side.
type rhsEnv struct {
	cr    *compiledRule
	class egraph.ClassID // the matched class
	m     match
	fresh map[string]uint64 // binders the right-hand side introduces
	dry   bool              // compute types only, add nothing
}

// applyRule adds the right-hand side of cr for one match and returns its
// class, or nothing if it would be ill-typed, of another type than the
// matched class, or not buildable (a substitution that gave up).
func (s *session) applyRule(cr *compiledRule, class egraph.ClassID, m match) []egraph.ClassID {
	want := s.g.Data(class).Type
	// What the right-hand side builds replaces the matched class: it
	// takes its source position.
	defer s.restorePos(s.at(s.g.Data(class).Pos))
	env := &rhsEnv{cr: cr, class: class, m: m, fresh: map[string]uint64{}, dry: true}
	if t, ok := s.rhsType(env, cr.rhs); !ok || t != want {
		return nil
	}
	env.dry = false
	env.fresh = map[string]uint64{}
	id, ok := s.instantiate(env, cr.rhs)
	if !ok {
		return nil
	}
	if s.g.Data(class).Safe != s.g.Data(id).Safe {
		// A rewrite must not turn an expression that cannot fail into
		// one that might (a read moved out of its guard). Nor may it
		// unite an unsafe class with a safe one: the union would be
		// unsafe, and rewrites of an unsafe class go unchecked. Such a
		// class is most often the leftover of a rewrite refused here (its
		// nodes stay in the graph), which a later rule matches (LT2 on
		// the let x = e of a refused F1r), and the union would then let
		// the refused term in.
		return nil
	}
	return []egraph.ClassID{id}
}

// match is one substitution found for a rule, with the positions of the
// rule's metavariables in it.
type match struct {
	sub egraph.Subst
	idx map[string]int
}

// metaClass returns the class a metavariable is bound to.
func metaClass(m match, name string) (egraph.ClassID, bool) {
	i, ok := m.idx[name]
	if !ok {
		return 0, false
	}
	_, c := m.sub.At(i)
	return c, true
}

// rhsType computes the type the right-hand side would have.
func (s *session) rhsType(env *rhsEnv, p *pat) (ir.Type, bool) {
	switch p.kind {
	case pMeta:
		if sym, ok := env.fresh[p.name]; ok {
			return s.vars[sym].typ, true
		}
		c, ok := metaClass(env.m, p.name)
		if !ok {
			return ir.Type{}, false
		}
		return s.g.Data(c).Type, true
	case pZero:
		return s.g.Data(env.class).Type, true
	case pOne:
		return ir.IntType, true
	case pKeys:
		return ir.Type{Depth: 1, Base: ir.Int}, true
	case pWidth:
		return ir.IntType, true
	case pSubst:
		if _, ok := s.rhsType(env, p.kids[1]); !ok {
			return ir.Type{}, false
		}
		return s.rhsType(env, p.kids[0])
	case pConst:
		return nodeType(s, egraph.Node{Op: p.op, Payload: p.payload}, nil)
	}
	n := egraph.Node{Op: p.op}
	if p.op == opCall {
		n.Payload = s.sym(p.fn)
	}
	kids := make([]ir.Type, len(p.kids))
	nb := binderCount(p.op)
	for i, k := range p.kids {
		if i < nb {
			continue
		}
		if inScope(p.op, i) {
			// Binders the right-hand side invents get the type of
			// what they are bound to, before the body is typed.
			s.declareDryBinders(env, p, kids)
		}
		t, ok := s.rhsType(env, k)
		if !ok {
			return ir.Type{}, false
		}
		kids[i] = t
	}
	return nodeType(s, n, kids)
}

// binderInfo gives the type and cardinality of binder i of node p, whose
// non-body children have the types kids (and classes srcs when known).
func binderInfo(op egraph.Op, i int, kids []ir.Type, card Card) (ir.Type, Card) {
	switch op {
	case opLet:
		return kids[1], card
	case opSum:
		if i == 0 {
			return ir.IntType, nil
		}
		return kids[2].Elem(), card.Elem()
	}
	return ir.IntType, nil
}

// declareDryBinders records placeholder variables for the fresh binders
// of p during type computation.
func (s *session) declareDryBinders(env *rhsEnv, p *pat, kids []ir.Type) {
	for i := 0; i < binderCount(p.op); i++ {
		name := p.kids[i].name
		if env.cr.binders[name] {
			continue
		}
		if _, ok := env.fresh[name]; ok {
			continue
		}
		t, _ := binderInfo(p.op, i, kids, nil)
		sym := s.sym("$dry$" + name)
		s.vars[sym] = varInfo{typ: t}
		env.fresh[name] = sym
	}
}

// instantiate adds the right-hand side p and returns its class.
func (s *session) instantiate(env *rhsEnv, p *pat) (egraph.ClassID, bool) {
	switch p.kind {
	case pMeta:
		if sym, ok := env.fresh[p.name]; ok {
			return s.varClass(sym), true
		}
		return metaClass(env.m, p.name)
	case pZero:
		return s.add(zeroNode(s.g.Data(env.class).Type)), true
	case pConst:
		return s.add(egraph.Node{Op: p.op, Payload: p.payload}), true
	case pOne:
		return s.add(egraph.Node{Op: opInt, Payload: 1}), true
	case pKeys:
		// The interval analysis bounds x by the data; a dense vector
		// over it must stay within what a dense array may hold.
		c, ok := metaClass(env.m, p.kids[0].name)
		if !ok {
			return 0, false
		}
		r := s.g.Data(c).Range
		if !r.ok || r.lo < 0 || r.hi >= maxDenseKey || s.g.Data(c).Type != ir.IntType {
			return 0, false
		}
		lo := s.add(egraph.Node{Op: opInt, Payload: uint64(r.lo)})
		hi := s.add(egraph.Node{Op: opInt, Payload: uint64(r.hi + 1)})
		return s.add(egraph.Node{Op: opRange, Children: []egraph.ClassID{lo, hi}}), true
	case pWidth:
		// A position row * width + coordinate (M5) needs the coordinates
		// of the data: non-negative and within maxDenseKey.
		c, ok := metaClass(env.m, p.kids[0].name)
		if !ok {
			return 0, false
		}
		name, ok := s.globalName(s.g, c)
		if !ok {
			return 0, false
		}
		xa, ok := s.store[name].(*storage.Array)
		if !ok || xa.Elem != ir.Int || xa.Len() == 0 {
			return 0, false
		}
		lo, hi := xa.IntRange()
		if lo < 0 || hi >= maxDenseKey {
			return 0, false
		}
		return s.add(egraph.Node{Op: opInt, Payload: uint64(hi + 1)}), true
	case pSubst:
		body, ok := s.instantiate(env, p.kids[0])
		if !ok {
			return 0, false
		}
		r, ok := s.instantiate(env, p.kids[1])
		if !ok {
			return 0, false
		}
		if len(p.kids) > 2 && env.cr.def.Filtered {
			src, key, ok := s.lookupOperands(env, p.kids[2])
			if !ok {
				return 0, false
			}
			return s.subst.replaceFiltered(body, src, key, r)
		}
		if len(p.kids) > 2 {
			t, ok := s.findTerm(env, p.kids[2])
			if !ok {
				return 0, false
			}
			return s.subst.replace(body, t, r)
		}
		xc, _ := metaClass(env.m, p.name)
		x, ok := bindSym(s.g, xc)
		if !ok {
			return 0, false
		}
		return s.subst.subst(body, x, r)
	}
	n := egraph.Node{Op: p.op, Children: make([]egraph.ClassID, len(p.kids))}
	switch p.op {
	case opCall:
		n.Payload = s.sym(p.fn)
	case opSingle:
		ann := ir.Ann(p.ann)
		if p.ann == annAny {
			ann = env.cr.anns[annAny]
			if _, ok := env.cr.anns[annAny]; !ok {
				ann = env.cr.anns[annLogicalOrUnique]
			}
			if env.cr.dropUniq && ann == ir.AnnUnique {
				ann = ir.AnnNone
			}
		}
		n.Payload = uint64(ann)
	}
	nb := binderCount(p.op)
	types := make([]ir.Type, len(p.kids))
	for i, k := range p.kids {
		if i < nb {
			continue
		}
		if inScope(p.op, i) {
			if !s.bindFresh(env, p, n.Children, types) {
				return 0, false
			}
		}
		c, ok := s.instantiate(env, k)
		if !ok {
			return 0, false
		}
		n.Children[i] = c
		types[i] = s.g.Data(c).Type
	}
	for i := 0; i < nb; i++ {
		name := p.kids[i].name
		if sym, ok := env.fresh[name]; ok {
			n.Children[i] = s.varClass(sym)
		} else {
			c, ok := metaClass(env.m, name)
			if !ok {
				return 0, false
			}
			n.Children[i] = c
		}
		types[i] = s.g.Data(n.Children[i]).Type
	}
	if _, ok := nodeType(s, n, types); !ok {
		return 0, false
	}
	return s.add(n), true
}

// findTerm returns the class of the term p (metavariables and operators)
// if the graph holds it, adding nothing.
func (s *session) findTerm(env *rhsEnv, p *pat) (egraph.ClassID, bool) {
	if p.kind == pMeta {
		return metaClass(env.m, p.name)
	}
	if p.kind != pNode || binderCount(p.op) > 0 || p.op == opCall || p.op == opSingle {
		return 0, false
	}
	n := egraph.Node{Op: p.op, Children: make([]egraph.ClassID, len(p.kids))}
	for i, k := range p.kids {
		c, ok := s.findTerm(env, k)
		if !ok {
			return 0, false
		}
		n.Children[i] = c
	}
	return s.g.Lookup(n)
}

// lookupOperands returns the classes of the dictionary and the key of
// the lookup term t (s(k)) of a filtered rule.
func (s *session) lookupOperands(env *rhsEnv, t *pat) (src, key egraph.ClassID, ok bool) {
	src, ok1 := s.findTerm(env, t.kids[0])
	key, ok2 := s.findTerm(env, t.kids[1])
	return src, key, ok1 && ok2
}

// hasFilteredWalk reports whether the graph holds a walk of s filtered
// to the key k, for the replaced term s(k) of a filtered rule.
func (s *session) hasFilteredWalk(env *rhsEnv, t *pat) bool {
	src, key, ok := s.lookupOperands(env, t)
	if !ok {
		return false
	}
	for _, nid := range s.g.Parents(src) {
		if _, ok := s.filteredWalk(s.g.Node(nid), src, key); ok {
			return true
		}
	}
	return false
}

// replacedTerms are the terms a right-hand side replaces (e[t := r]).
func replacedTerms(p *pat) []*pat {
	var out []*pat
	if p.kind == pSubst && len(p.kids) > 2 {
		out = append(out, p.kids[2])
	}
	for _, k := range p.kids {
		out = append(out, replacedTerms(k)...)
	}
	return out
}

// bindFresh creates the variables for the binders of p that the
// right-hand side invents, once the non-body children are built. The name
// is remembered per rule, matched class and type, so that applying the same
// match again (the runner re-applies matches every iteration) builds the
// same term instead of a new copy.
func (s *session) bindFresh(env *rhsEnv, p *pat, kids []egraph.ClassID, types []ir.Type) bool {
	for i := 0; i < binderCount(p.op); i++ {
		name := p.kids[i].name
		if env.cr.binders[name] {
			continue
		}
		if _, ok := env.fresh[name]; ok {
			continue
		}
		var card Card
		zeroful := false
		switch p.op {
		case opLet:
			card, zeroful = s.g.Data(kids[1]).Card, s.g.Data(kids[1]).Zeroful
		case opSum:
			card, zeroful = s.g.Data(kids[2]).Card, s.g.Data(kids[2]).Zeroful && i == 1
		}
		t, c := binderInfo(p.op, i, types, card)
		var rng interval
		switch p.op {
		case opLet:
			rng = s.g.Data(kids[1]).Range
		case opSum:
			kr, vr := s.sourceRanges(s.g, kids[2])
			rng = [2]interval{kr, vr}[i]
		case opMerge:
			k1, v1 := s.sourceRanges(s.g, kids[3])
			k2, v2 := s.sourceRanges(s.g, kids[4])
			rng = [3]interval{k1, k2, v1.meet(v2)}[i]
		}
		key := freshKey{rule: env.cr.name, class: s.g.Find(env.class), meta: name, typ: t}
		sym, ok := s.freshNames[key]
		if ok {
			// The name binds here as it did before, maybe over another
			// source (another match at the class). The classes built
			// under it were judged with its recorded range: values
			// beyond it would make them unsound, and a narrower range
			// would be wrong for the binders already built.
			old := s.vars[sym].rng
			if old.ok && !rng.within(old.lo, old.hi) {
				return false
			}
			rng = old
		} else {
			base := name
			if name == "_" {
				base = "u"
			}
			sym = s.sym(s.namer.Fresh(base))
			s.freshNames[key] = sym
		}
		s.vars[sym] = varInfo{typ: t, card: c, zeroful: zeroful && t.Depth > 0, rng: rng}
		env.fresh[name] = sym
	}
	return true
}

// matchKey identifies a match of rule id by a 64-bit hash of its
// canonical classes. A collision would only skip one application (a lost
// opportunity, never a wrong plan), and is improbable at these sizes.
func (s *session) matchKey(id int, class egraph.ClassID, sub egraph.Subst) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint32) {
		h ^= uint64(x)
		h *= 1099511628211
		h ^= h >> 29
	}
	mix(uint32(id))
	mix(uint32(s.g.Find(class)))
	for i := 0; i < sub.Len(); i++ {
		_, c := sub.At(i)
		mix(uint32(s.g.Find(c)))
	}
	return h
}

type freshKey struct {
	rule  string
	class egraph.ClassID
	meta  string
	// Two matches at a class may bind values of different types (LT7
	// hoisting an int factor and a real one): each type has its own name.
	typ ir.Type
}
