package eval

import (
	"fmt"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Options tune an evaluation. The zero value is the plain interpreter.
type Options struct {
	// CheckUnique makes a sum whose body is a singleton annotated @unique
	// (possibly under let and if) report an error when two of its
	// iterations produce the same key: a debug mode for the promise that
	// @unique makes to the optimizer. For nested singletons that are all
	// annotated, {@unique i -> {@unique j -> v}}, the key is the tuple (i, j).
	CheckUnique bool
	// MaxSteps stops evaluation with an error after this many steps (one
	// per node evaluated and one per loop iteration); 0 means unlimited.
	MaxSteps int64
	// Check, if set, is called every checkEvery steps; an error it
	// returns stops the evaluation and is returned as it is (a run's
	// memory or time limit).
	Check func() error
}

// checkEvery is how many steps pass between calls of Options.Check.
const checkEvery = 1 << 12

// Error is a runtime error: a data error (an array read past its end, an
// integer division by zero, a broken @unique promise, ...) or an
// expression the interpreter cannot run, with the source position of the
// innermost node that has one.
type Error struct {
	Pos ir.Pos
	Msg string
}

func (e *Error) Error() string {
	switch {
	case e.Pos.IsValid():
		return e.Pos.String() + ": " + e.Msg
	case e.Pos.File != "":
		return e.Pos.File + ": " + e.Msg
	}
	return e.Msg
}

// Eval evaluates the typed expression e over the physical objects in st.
// e must be closed except for globals (ir.OpGlobal), which name objects of
// st; ir.Program.Compose output is the typical input.
func Eval(e *ir.Expr, st storage.Store) (value.Value, error) {
	return EvalWith(e, st, Options{})
}

// EvalWith is Eval with options.
func EvalWith(e *ir.Expr, st storage.Store, opt Options) (value.Value, error) {
	in := newInterp(st, opt)
	if err := in.check(e); err != nil {
		return nil, err
	}
	return in.eval(e)
}

// interp is the state of one evaluation.
type interp struct {
	st  storage.Store
	opt Options

	env   []binding // local variables, innermost last
	steps int64

	// Physical objects materialized as dictionaries, built at most once.
	objects map[string]*value.Dict
	// wholeArrays caches the seq of each physical array.
	wholeArrays map[string]seq
	// arrayAt caches, per global node, the array it names (nil if it
	// names something else), saving a string-keyed lookup per read.
	arrayAt map[*ir.Expr]*storage.Array
	// arrayName names the physical array a materialized dictionary views,
	// so reads past its end are reported as data errors.
	arrayName map[*value.Dict]string

	// uniqueSites maps each @unique singleton under an active CheckUnique
	// sum to its check.
	uniqueSites map[*ir.Expr]uniqueSite
	// shortcutInfo caches, per sum node, whether its body filters on the
	// sum's key (see shortcut.go).
	shortcutInfo map[*ir.Expr]*keyFilter
	// noShortcuts turns off the key-lookup shortcut so tests can compare
	// it with plain iteration.
	noShortcuts bool
}

type binding struct {
	name string
	val  value.Value
}

func newInterp(st storage.Store, opt Options) *interp {
	return &interp{
		st:           st,
		opt:          opt,
		objects:      map[string]*value.Dict{},
		wholeArrays:  map[string]seq{},
		arrayAt:      map[*ir.Expr]*storage.Array{},
		arrayName:    map[*value.Dict]string{},
		shortcutInfo: map[*ir.Expr]*keyFilter{},
	}
}

// errorf returns an Error at e's position (filled in later from an
// enclosing node when e has none).
func errorf(e *ir.Expr, format string, args ...any) error {
	var p ir.Pos
	if e != nil {
		p = e.Pos
	}
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// wrap turns an error from the value package into an Error at e.
func wrap(e *ir.Expr, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Pos: e.Pos, Msg: err.Error()}
}

// locate gives a position-less Error the position of e.
func locate(e *ir.Expr, err error) error {
	if ee, ok := err.(*Error); ok && !ee.Pos.IsValid() && e.Pos.IsValid() {
		ee.Pos = e.Pos
	}
	return err
}

// tick counts one step against Options.MaxSteps.
func (in *interp) tick(e *ir.Expr) error {
	in.steps++
	if in.opt.MaxSteps > 0 && in.steps > in.opt.MaxSteps {
		return errorf(e, "evaluation stopped after %d steps (the step limit)", in.opt.MaxSteps)
	}
	if in.opt.Check != nil && in.steps%checkEvery == 0 {
		return in.opt.Check()
	}
	return nil
}

func (in *interp) push(name string, v value.Value) { in.env = append(in.env, binding{name, v}) }

func (in *interp) lookupVar(name string) (value.Value, bool) {
	for i := len(in.env) - 1; i >= 0; i-- {
		if in.env[i].name == name {
			return in.env[i].val, true
		}
	}
	return nil, false
}

// eval evaluates e in the current environment.
func (in *interp) eval(e *ir.Expr) (value.Value, error) {
	if err := in.tick(e); err != nil {
		return nil, err
	}
	v, err := in.evalNode(e)
	if err != nil {
		return nil, locate(e, err)
	}
	return v, nil
}

func (in *interp) evalNode(e *ir.Expr) (value.Value, error) {
	switch e.Op {
	case ir.OpConst:
		return constValue(e), nil
	case ir.OpVar:
		v, ok := in.lookupVar(e.Name)
		if !ok {
			return nil, errorf(e, "unbound variable %s", e.Name)
		}
		return v, nil
	case ir.OpGlobal:
		return in.globalValue(e)
	case ir.OpNeg:
		a, err := in.eval(e.Args[0])
		if err != nil {
			return nil, err
		}
		if _, ok := a.(bool); ok {
			return nil, errorf(e, "cannot negate a bool (use !)")
		}
		v, err := value.Neg(a)
		return v, wrap(e, err)
	case ir.OpNot:
		a, err := in.evalBool(e.Args[0])
		if err != nil {
			return nil, err
		}
		return !a, nil
	case ir.OpAnd, ir.OpOr:
		a, err := in.evalBool(e.Args[0])
		if err != nil {
			return nil, err
		}
		if a == (e.Op == ir.OpOr) {
			return a, nil
		}
		return in.evalBool(e.Args[1])
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod,
		ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe:
		a, err := in.eval(e.Args[0])
		if err != nil {
			return nil, err
		}
		b, err := in.eval(e.Args[1])
		if err != nil {
			return nil, err
		}
		v, err := binary(e.Op, a, b)
		if err != nil {
			return nil, wrap(e, err)
		}
		if e.Op == ir.OpAdd || e.Op == ir.OpSub {
			v = promoteFrom(v, e, e.Args...)
		}
		return v, nil
	case ir.OpCall:
		switch e.Name {
		case "runs":
			return in.runs(e)
		case "runend":
			return in.runEnd(e)
		}
		args := make([]value.Value, len(e.Args))
		for i, a := range e.Args {
			v, err := in.eval(a)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		v, err := call(e.Name, args)
		return v, wrap(e, err)
	case ir.OpSingleton:
		return in.singleton(e)
	case ir.OpLookup:
		return in.lookup(e)
	case ir.OpRange, ir.OpSubArray:
		s, err := in.seqOf(e)
		if err != nil {
			return nil, err
		}
		return in.materialize(s), nil
	case ir.OpIf:
		c, err := in.evalBool(e.Args[0])
		if err != nil {
			return nil, err
		}
		switch {
		case c:
			v, err := in.eval(e.Args[1])
			return promoteFrom(v, e, e.Args[1]), err
		case len(e.Args) == 3:
			v, err := in.eval(e.Args[2])
			return promoteFrom(v, e, e.Args[2]), err
		}
		return value.Zero(e.Type), nil
	case ir.OpLet:
		x, err := in.eval(e.Args[0])
		if err != nil {
			return nil, err
		}
		in.push(e.Vars[0], x)
		v, err := in.eval(e.Args[1])
		in.env = in.env[:len(in.env)-1]
		return v, err
	case ir.OpSum:
		return in.sum(e)
	case ir.OpMerge:
		return in.merge(e)
	}
	return nil, errorf(e, "cannot evaluate %s node", e.Op)
}

func constValue(e *ir.Expr) value.Value {
	if e.Type.Depth > 0 {
		return value.Empty
	}
	switch e.Type.Base {
	case ir.Real:
		return e.F
	case ir.Bool:
		return e.I != 0
	}
	return e.I
}

func (in *interp) evalBool(e *ir.Expr) (bool, error) {
	v, err := in.eval(e)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errorf(e, "condition is %s, not bool", value.Kind(v))
	}
	return b, nil
}

// evalKey evaluates a dictionary key or an index, which must be an int.
func (in *interp) evalKey(e *ir.Expr) (int64, error) {
	v, err := in.eval(e)
	if err != nil {
		return 0, err
	}
	k, ok := v.(int64)
	if !ok {
		return 0, errorf(e, "dictionary key or index is %s, not int", value.Kind(v))
	}
	return k, nil
}

func (in *interp) singleton(e *ir.Expr) (value.Value, error) {
	k, v, err := in.singletonEntry(e)
	if err != nil {
		return nil, err
	}
	return value.Singleton(k, v), nil
}

// singletonEntry evaluates the key and value of singleton node e.
func (in *interp) singletonEntry(e *ir.Expr) (int64, value.Value, error) {
	k, err := in.evalKey(e.Args[0])
	if err != nil {
		return 0, nil, err
	}
	site, checked := in.uniqueSites[e]
	if checked {
		site.check.enter(site.depth, k)
	}
	v, err := in.eval(e.Args[1])
	if err != nil {
		return 0, nil, err
	}
	if checked {
		if err := site.check.record(e, site.depth); err != nil {
			return 0, nil, err
		}
	}
	if _, ok := v.(bool); ok {
		return 0, nil, errorf(e, "a dictionary cannot hold bool values")
	}
	return k, v, nil
}

func (in *interp) lookup(e *ir.Expr) (value.Value, error) {
	if d := e.Args[0]; d.Op == ir.OpGlobal {
		if a := in.physArray(d); a != nil {
			// A physical array is read in place.
			if err := in.tick(d); err != nil {
				return nil, err
			}
			k, err := in.evalKey(e.Args[1])
			if err != nil {
				return nil, err
			}
			if n := int64(a.Len()); k < 0 || k >= n {
				return nil, boundsError(e, d.Name, k, n)
			}
			if a.Elem == ir.Real {
				return a.F[k], nil
			}
			return a.I[k], nil
		}
	}
	s, err := in.seqOf(e.Args[0])
	if err != nil {
		return nil, err
	}
	k, err := in.evalKey(e.Args[1])
	if err != nil {
		return nil, err
	}
	if name, n, whole := s.array(); whole && (k < 0 || k >= n) {
		return nil, boundsError(e, name, k, n)
	}
	v, ok := s.find(k)
	if !ok {
		return value.Zero(e.Type), nil
	}
	return v, nil
}

// physArray returns the physical array global node g names, or nil if it
// names no usable array.
func (in *interp) physArray(g *ir.Expr) *storage.Array {
	a, ok := in.arrayAt[g]
	if !ok {
		a, _ = in.st[g.Name].(*storage.Array)
		if a != nil && checkArray(g.Name, a) != nil {
			a = nil
		}
		in.arrayAt[g] = a
	}
	return a
}

func boundsError(e *ir.Expr, name string, k, n int64) error {
	if k < 0 {
		return errorf(e, "%s(%d) is before the start of %s: positions start at 0", name, k, name)
	}
	return errorf(e, "%s(%d) is past the end of %s, which has %s", name, k, name, elements(n))
}

func elements(n int64) string {
	if n == 1 {
		return "1 element"
	}
	return fmt.Sprintf("%d elements", n)
}

// promoteFrom converts int leaves of v to real when node e is real but one
// of the operands that produced v is int (int and real mix as real).
func promoteFrom(v value.Value, e *ir.Expr, from ...*ir.Expr) value.Value {
	if e.Type.Base != ir.Real || v == nil {
		return v
	}
	for _, a := range from {
		if a.Type.Base == ir.Int {
			return toReal(v)
		}
	}
	return v
}

// toReal converts every int leaf of v to real.
func toReal(v value.Value) value.Value {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case *value.Dict:
		if !hasIntLeaf(x) {
			return x
		}
		out := &value.Dict{Keys: x.Keys, Vals: make([]value.Value, len(x.Vals))}
		for i, y := range x.Vals {
			out.Vals[i] = toReal(y)
		}
		return out
	}
	return v
}

func hasIntLeaf(d *value.Dict) bool {
	for _, y := range d.Vals {
		switch z := y.(type) {
		case int64:
			return true
		case *value.Dict:
			if hasIntLeaf(z) {
				return true
			}
		}
	}
	return false
}
