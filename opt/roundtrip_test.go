package opt

import (
	"fmt"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// checkPrintedPlan prints a plan as SDQLite, compiles the text with the
// front end against the store's objects, and checks the front end's types
// are the plan's, node by node: the optimizer's own typing of new nodes
// (types.go) must agree with the type checker.
func checkPrintedPlan(plan *ir.Expr, st storage.Store) error {
	env := map[string]ir.Type{}
	for name, o := range st {
		t := ir.Type{Base: o.ElemType()}
		switch x := o.(type) {
		case *storage.Array:
			t.Depth = 1
		case *storage.HashMap:
			t.Depth = x.Arity
		case *storage.Trie:
			t.Depth = x.Depth
		}
		env[name] = t
	}
	text := ir.Format(plan)
	back, err := sdql.CompileExpr("plan", []byte(text), env)
	if err != nil {
		return fmt.Errorf("the printed plan does not compile: %v\n%s", err, text)
	}
	var cmp func(a, b *ir.Expr) error
	cmp = func(a, b *ir.Expr) error {
		if a.Op != b.Op || len(a.Args) != len(b.Args) {
			return fmt.Errorf("the printed plan reads back differently: %s became %s", a, b)
		}
		if a.Type != b.Type {
			return fmt.Errorf("%s has type %s in the plan, %s for the type checker", a, a.Type, b.Type)
		}
		for i := range a.Args {
			if err := cmp(a.Args[i], b.Args[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return cmp(plan, back)
}
