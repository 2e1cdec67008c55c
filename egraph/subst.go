package egraph

import (
	"fmt"
	"strings"
)

// Var is a pattern variable, written with its leading '?' (e.g. "?a").
type Var string

// Subst binds pattern variables to e-classes: the result of one match. The
// variable list is shared with the searcher that produced it, so a Subst is
// just two slices and is cheap to pass by value.
type Subst struct {
	vars []Var
	ids  []ClassID
}

// NewSubst pairs vars with ids (same length); custom searchers use it to
// build their matches. The slices are kept, not copied.
func NewSubst(vars []Var, ids []ClassID) Subst {
	if len(vars) != len(ids) {
		panic(fmt.Sprintf("egraph: NewSubst: %d variables, %d classes", len(vars), len(ids)))
	}
	return Subst{vars: vars, ids: ids}
}

// Get returns the class bound to v.
func (s Subst) Get(v Var) (ClassID, bool) {
	for i, w := range s.vars {
		if w == v {
			return s.ids[i], true
		}
	}
	return 0, false
}

// Len reports the number of bound variables.
func (s Subst) Len() int { return len(s.vars) }

// At returns the i-th binding.
func (s Subst) At(i int) (Var, ClassID) { return s.vars[i], s.ids[i] }

// Vars returns the bound variables (shared; don't modify).
func (s Subst) Vars() []Var { return s.vars }

// String prints the bindings as {?a: 3, ?b: 5}.
func (s Subst) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range s.vars {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", v, s.ids[i])
	}
	b.WriteByte('}')
	return b.String()
}

// sameVars reports whether two variable lists are the same slice, the cheap
// test that lets a pattern applier use precomputed positions.
func sameVars(a, b []Var) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
