package opt

import (
	"fmt"
	"math"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// varInfo is what the optimizer knows of a variable. Binder names are
// made unique before optimization (uniquify) and every name a rule invents
// is fresh, so a name has one binding site and its type and cardinality
// can be kept per name rather than per scope.
type varInfo struct {
	typ     ir.Type
	card    Card
	zeroful bool     // bound to a dictionary that may store explicit zeros (Data.Zeroful)
	rng     interval // bounds of an int variable's values
}

// session is one optimization: an e-graph and what its analysis and rules
// need.
type session struct {
	g       *graph
	lang    *lang
	vars    map[uint64]varInfo
	globals map[uint64]ir.Type
	stats   *Stats
	store   storage.Store
	namer   *ir.Namer
	conds   *condCache
	subst   *substituter
	// freshNames remembers the variables rules invented (see bindFresh).
	freshNames map[freshKey]uint64

	// logicalAsHash makes extraction cost a logical singleton as a hash
	// insert (for stages before the physical rules have run).
	logicalAsHash bool
	// unguarded makes extraction refuse a branch judged safe only under
	// its test (see guardedOnly).
	unguarded bool
	// inPlace makes extraction cost a closed build where it runs, per run
	// of the loops around it, and leave it there (see closedBuild).
	inPlace bool
	// scansAsSeeks prices a loop filtered on a key (sum(<x, v> in row)
	// if x == j) as the seek the physical stage makes of it (F1v): run
	// again per step of the loop that binds j, it is charged no
	// loopRerun (see keyTestFV). The physical stage, where the seek is
	// there to be picked, and whole plans price the scan as what it is.
	scansAsSeeks bool
	// noHoist makes a sum or merge charge its body's invariants per step
	// (see planCost.parts): a test's baseline.
	noHoist bool

	// seen holds the matches already applied (see matchKey).
	seen map[uint64]bool

	typeScratch []ir.Type

	// positions interns the source positions of classes (Data.Pos);
	// positions[0] is "none". curPos is the position new classes get:
	// the node's own while a plan is loaded, the matched class's while a
	// rewrite builds its right-hand side, the copied class's while a
	// substitution copies it.
	positions []ir.Pos
	posIndex  map[ir.Pos]uint32
	curPos    uint32
}

func newSession(store storage.Store, stats *Stats) *session {
	s := &session{
		lang:       &lang{},
		vars:       map[uint64]varInfo{},
		globals:    map[uint64]ir.Type{},
		stats:      stats,
		store:      store,
		namer:      ir.NewNamer(nil),
		freshNames: map[freshKey]uint64{},
		seen:       map[uint64]bool{},
		positions:  []ir.Pos{{}},
		posIndex:   map[ir.Pos]uint32{},
	}
	s.g = egraph.New[Data](s.lang, analysis{s})
	s.conds = newCondCache(s)
	s.subst = newSubstituter(s)
	return s
}

// typeEnv implementation.
func (s *session) varType(sym uint64) (ir.Type, bool) {
	v, ok := s.vars[sym]
	return v.typ, ok
}

func (s *session) globalType(sym uint64) (ir.Type, bool) {
	t, ok := s.globals[sym]
	return t, ok
}

func (s *session) symName(sym uint64) string { return s.lang.syms.Name(sym) }

func (s *session) sym(name string) uint64 { return s.lang.syms.Intern(name) }

// declareVar records a binder's type and cardinality.
func (s *session) declareVar(name string, t ir.Type, c Card, zeroful bool) uint64 {
	sym := s.sym(name)
	s.namer.Reserve(name)
	s.vars[sym] = varInfo{typ: t, card: c, zeroful: zeroful && t.Depth > 0}
	return sym
}

func (s *session) setRange(sym uint64, r interval) {
	v := s.vars[sym]
	v.rng = r
	s.vars[sym] = v
}

// freshVar returns a new variable like sym (same type and cardinality).
func (s *session) freshVar(sym uint64) uint64 {
	name := s.namer.Fresh(s.symName(sym))
	nsym := s.sym(name)
	s.vars[nsym] = s.vars[sym]
	return nsym
}

func (s *session) add(n egraph.Node) egraph.ClassID { return s.g.Add(n) }

// internPos returns the Data.Pos index of p (0 for no position).
func (s *session) internPos(p ir.Pos) uint32 {
	if !p.IsValid() {
		return 0
	}
	if i, ok := s.posIndex[p]; ok {
		return i
	}
	i := uint32(len(s.positions))
	s.positions = append(s.positions, p)
	s.posIndex[p] = i
	return i
}

// at makes the classes added from now on take position index p (when p
// is not 0) and returns the index they took before, for restorePos:
//
//	defer s.restorePos(s.at(p))
func (s *session) at(p uint32) uint32 {
	old := s.curPos
	if p != 0 {
		s.curPos = p
	}
	return old
}

func (s *session) restorePos(p uint32) { s.curPos = p }

func (s *session) varClass(sym uint64) egraph.ClassID {
	return s.add(egraph.Node{Op: opVar, Payload: sym})
}

// reserveNames makes the namer avoid every name in e.
func (s *session) reserveNames(e *ir.Expr) {
	for n := range ir.AllNames(e, nil) {
		s.namer.Reserve(n)
	}
}

// addExpr loads a typed expression into the e-graph, declaring its
// binders. Binder names must be unique (see uniquify).
func (s *session) addExpr(e *ir.Expr) (egraph.ClassID, error) {
	defer s.restorePos(s.at(s.internPos(e.Pos)))
	switch e.Op {
	case ir.OpConst:
		return s.add(constNode(e)), nil
	case ir.OpVar:
		sym := s.sym(e.Name)
		if _, ok := s.vars[sym]; !ok {
			return 0, fmt.Errorf("opt: free variable %s in the plan", e.Name)
		}
		return s.add(egraph.Node{Op: opVar, Payload: sym}), nil
	case ir.OpGlobal:
		sym := s.sym(e.Name)
		s.globals[sym] = e.Type
		return s.add(egraph.Node{Op: opGlobal, Payload: sym}), nil
	case ir.OpIf:
		kids, err := s.addArgs(e.Args)
		if err != nil {
			return 0, err
		}
		if len(kids) == 3 {
			return s.add(egraph.Node{Op: opIfElse, Children: kids}), nil
		}
		return s.add(egraph.Node{Op: opIf, Children: kids}), nil
	case ir.OpLet:
		val, err := s.addExpr(e.Args[0])
		if err != nil {
			return 0, err
		}
		vd := s.g.Data(val)
		x := s.declareVar(e.Vars[0], e.Args[0].Type, vd.Card, vd.Zeroful)
		s.setRange(x, vd.Range)
		body, err := s.addExpr(e.Args[1])
		if err != nil {
			return 0, err
		}
		return s.add(egraph.Node{Op: opLet, Children: []egraph.ClassID{s.varClass(x), val, body}}), nil
	case ir.OpSum:
		src, err := s.addExpr(e.Args[0])
		if err != nil {
			return 0, err
		}
		sd := s.g.Data(src)
		k := s.declareVar(e.Vars[0], ir.IntType, nil, false)
		v := s.declareVar(e.Vars[1], e.Args[0].Type.Elem(), sd.Card.Elem(), sd.Zeroful)
		kr, vr := s.sourceRanges(s.g, src)
		s.setRange(k, kr)
		s.setRange(v, vr)
		body, err := s.addExpr(e.Args[1])
		if err != nil {
			return 0, err
		}
		return s.add(egraph.Node{Op: opSum, Children: []egraph.ClassID{s.varClass(k), s.varClass(v), src, body}}), nil
	case ir.OpMerge:
		e1, err := s.addExpr(e.Args[0])
		if err != nil {
			return 0, err
		}
		e2, err := s.addExpr(e.Args[1])
		if err != nil {
			return 0, err
		}
		var binds [3]egraph.ClassID
		k1, v1 := s.sourceRanges(s.g, e1)
		k2, v2 := s.sourceRanges(s.g, e2)
		for i, v := range e.Vars {
			sym := s.declareVar(v, ir.IntType, nil, false)
			s.setRange(sym, [3]interval{k1, k2, v1.meet(v2)}[i])
			binds[i] = s.varClass(sym)
		}
		body, err := s.addExpr(e.Args[2])
		if err != nil {
			return 0, err
		}
		return s.add(egraph.Node{Op: opMerge, Children: []egraph.ClassID{binds[0], binds[1], binds[2], e1, e2, body}}), nil
	}
	op, ok := irToOp[e.Op]
	if !ok {
		return 0, fmt.Errorf("opt: cannot optimize a %s node", e.Op)
	}
	kids, err := s.addArgs(e.Args)
	if err != nil {
		return 0, err
	}
	n := egraph.Node{Op: op, Children: kids}
	switch e.Op {
	case ir.OpCall:
		n.Payload = s.sym(e.Name)
	case ir.OpSingleton:
		n.Payload = uint64(e.Ann)
	}
	return s.add(n), nil
}

func (s *session) addArgs(args []*ir.Expr) ([]egraph.ClassID, error) {
	kids := make([]egraph.ClassID, len(args))
	for i, a := range args {
		c, err := s.addExpr(a)
		if err != nil {
			return nil, err
		}
		kids[i] = c
	}
	return kids, nil
}

// nodeToIR builds the ir node of n with the given children (ir arguments
// for the non-binder children, in order) and type t.
func (s *session) nodeToIR(g *graph, n egraph.Node, args []*ir.Expr, t ir.Type) *ir.Expr {
	e := &ir.Expr{Type: t}
	switch n.Op {
	case opVar:
		e.Op, e.Name = ir.OpVar, s.symName(n.Payload)
	case opGlobal:
		e.Op, e.Name = ir.OpGlobal, s.symName(n.Payload)
	case opInt:
		e.Op, e.I = ir.OpConst, int64(n.Payload)
	case opReal:
		e.Op, e.F = ir.OpConst, math.Float64frombits(n.Payload)
	case opBool:
		e.Op, e.I = ir.OpConst, int64(n.Payload)
	case opEmpty:
		e.Op = ir.OpConst
	default:
		e.Op = opToIR[n.Op]
		e.Args = args
		nb := binderCount(n.Op)
		for i := 0; i < nb; i++ {
			sym, _ := bindSym(g, n.Children[i])
			e.Vars = append(e.Vars, s.symName(sym))
		}
		switch n.Op {
		case opCall:
			e.Name = s.symName(n.Payload)
		case opSingle:
			e.Ann = ir.Ann(n.Payload)
		}
	}
	return e
}

// uniquify renames binders so that no name is bound twice in e (nor
// shadows a free name), keeping the first binding of each name. Types and
// positions are kept.
func uniquify(e *ir.Expr) *ir.Expr {
	nm := ir.NewNamer(ir.AllNames(e, nil))
	seen := map[string]bool{}
	for v := range ir.FreeVars(e) {
		seen[v] = true
	}
	return renameBinders(e, func(v string) string {
		nv := v
		if seen[v] {
			nv = nm.Fresh(v)
		}
		seen[nv] = true
		return nv
	})
}

// renameBinders gives each binder of e, in pre-order, the name rename
// returns for it, and its uses that name. Unchanged subtrees are shared.
func renameBinders(e *ir.Expr, rename func(v string) string) *ir.Expr {
	var walk func(e *ir.Expr, ren map[string]string) *ir.Expr
	walk = func(e *ir.Expr, ren map[string]string) *ir.Expr {
		if e == nil {
			return nil
		}
		if e.Op == ir.OpVar {
			if nv, ok := ren[e.Name]; ok && nv != e.Name {
				c := *e
				c.Name = nv
				return &c
			}
			return e
		}
		c := e.Shallow()
		inner := ren
		if len(e.Vars) > 0 {
			inner = make(map[string]string, len(ren)+len(e.Vars))
			for k, v := range ren {
				inner[k] = v
			}
			for i, v := range e.Vars {
				nv := rename(v)
				inner[v] = nv
				c.Vars[i] = nv
			}
		}
		for i, a := range e.Args {
			if e.BinderScope(i) {
				c.Args[i] = walk(a, inner)
			} else {
				c.Args[i] = walk(a, ren)
			}
		}
		return c
	}
	return walk(e, map[string]string{})
}
