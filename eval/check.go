package eval

import (
	"github.com/storel/storel/ir"
)

// check verifies, before anything runs, that e is a well-formed closed
// expression the interpreter can evaluate: every node has the arguments
// and binders its operator needs, every variable is bound, every global
// names an object of the store, and the nodes whose value depends on their
// type (the zero of a sum, an if without else, a missing key) are typed.
func (in *interp) check(e *ir.Expr) error {
	var scope []string
	var walk func(e, parent *ir.Expr) error
	walk = func(e, parent *ir.Expr) error {
		if e == nil {
			return errorf(parent, "malformed expression: missing operand")
		}
		if err := shape(e); err != nil {
			return locate(parent, err)
		}
		switch e.Op {
		case ir.OpVar:
			for i := len(scope) - 1; i >= 0; i-- {
				if scope[i] == e.Name {
					return nil
				}
			}
			return locate(parent, errorf(e, "unbound variable %s", e.Name))
		case ir.OpGlobal:
			if obj, ok := in.st[e.Name]; !ok || obj == nil {
				return locate(parent, errorf(e, "no data for physical object %s", e.Name))
			}
		}
		for i, a := range e.Args {
			if e.BinderScope(i) {
				scope = append(scope, e.Vars...)
				err := walk(a, e)
				scope = scope[:len(scope)-len(e.Vars)]
				if err != nil {
					return err
				}
				continue
			}
			if err := walk(a, e); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(e, e)
}

// shape checks one node's arity, binders and, where it matters, type.
func shape(e *ir.Expr) error {
	if err := ir.CheckShape(e); err != nil {
		return errorf(e, "%v", err)
	}
	switch e.Op {
	case ir.OpVar, ir.OpGlobal, ir.OpCall:
		if e.Name == "" {
			return errorf(e, "malformed %s: no name", e.Op)
		}
	case ir.OpSum, ir.OpMerge, ir.OpLookup:
		if e.Type.Base == ir.Unknown {
			return errorf(e, "%s node has no type (run the type checker first)", e.Op)
		}
	case ir.OpIf:
		if len(e.Args) == 2 && e.Type.Base == ir.Unknown {
			return errorf(e, "if without else has no type (run the type checker first)")
		}
	case ir.OpSubArray:
		if e.Type.Depth < 1 || e.Type.Base == ir.Unknown {
			return errorf(e, "subarray node has type %s, not a dictionary type (run the type checker first)", e.Type)
		}
	}
	return nil
}
