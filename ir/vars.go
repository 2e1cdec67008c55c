package ir

import (
	"strconv"
	"strings"
)

// FreeVars returns the set of local variables (OpVar) that occur free in e.
// Globals are not variables.
func FreeVars(e *Expr) map[string]bool {
	fv := map[string]bool{}
	var walk func(e *Expr, bound map[string]int)
	walk = func(e *Expr, bound map[string]int) {
		if e == nil {
			return
		}
		if e.Op == OpVar {
			if bound[e.Name] == 0 {
				fv[e.Name] = true
			}
			return
		}
		for i, a := range e.Args {
			if e.BinderScope(i) {
				for _, v := range e.Vars {
					bound[v]++
				}
				walk(a, bound)
				for _, v := range e.Vars {
					bound[v]--
				}
			} else {
				walk(a, bound)
			}
		}
	}
	walk(e, map[string]int{})
	return fv
}

// Occurs reports whether variable x occurs free in e.
func Occurs(x string, e *Expr) bool { return FreeVars(e)[x] }

// AllNames returns every variable and binder name used anywhere in e.
func AllNames(e *Expr, into map[string]bool) map[string]bool {
	if into == nil {
		into = map[string]bool{}
	}
	Walk(e, func(n *Expr) bool {
		if n.Op == OpVar {
			into[n.Name] = true
		}
		for _, v := range n.Vars {
			into[v] = true
		}
		return true
	})
	return into
}

// Namer hands out variable names that are not in use. Names it produces
// are ordinary identifiers (base followed by digits), so printed plans
// parse again.
type Namer struct {
	used map[string]bool
	next map[string]int
}

// NewNamer returns a Namer that avoids every name in used (which it copies)
// and every name it hands out.
func NewNamer(used map[string]bool) *Namer {
	n := &Namer{used: map[string]bool{}, next: map[string]int{}}
	for k := range used {
		n.used[k] = true
	}
	return n
}

// Reserve marks name as in use.
func (n *Namer) Reserve(name string) { n.used[name] = true }

// Fresh returns an unused name that starts with base (trailing digits of
// base are dropped first, so renaming k1 gives k2, k3, ...).
func (n *Namer) Fresh(base string) string {
	base = strings.TrimRight(base, "0123456789")
	if base == "" || base == "_" {
		base = "v"
	}
	for {
		n.next[base]++
		name := base + strconv.Itoa(n.next[base])
		if !n.used[name] {
			n.used[name] = true
			return name
		}
	}
}

// Subst returns e with every free occurrence of the variables in sub
// replaced by the corresponding expressions. Binders that would capture a
// free variable of a substituted expression are renamed with fresh names
// (occurrences keep their types). Unchanged subtrees are shared with e.
func Subst(e *Expr, sub map[string]*Expr) *Expr {
	if len(sub) == 0 {
		return e
	}
	used := AllNames(e, nil)
	incoming := map[string]bool{}
	for k, r := range sub {
		used[k] = true
		for v := range FreeVars(r) {
			incoming[v] = true
			used[v] = true
		}
	}
	s := &substituter{incoming: incoming, nm: NewNamer(used)}
	return s.subst(e, sub, nil)
}

type substituter struct {
	incoming map[string]bool // free variables of the replacements
	nm       *Namer
}

// subst applies sub (replacements) and ren (binder renamings) to e.
func (s *substituter) subst(e *Expr, sub map[string]*Expr, ren map[string]string) *Expr {
	if e == nil {
		return nil
	}
	if e.Op == OpVar {
		if r, ok := sub[e.Name]; ok {
			return r
		}
		if nv, ok := ren[e.Name]; ok {
			c := *e
			c.Name = nv
			return &c
		}
		return e
	}
	if len(e.Args) == 0 || (len(sub) == 0 && len(ren) == 0) {
		return e
	}
	innerSub, innerRen := sub, ren
	var vars []string
	if len(e.Vars) > 0 {
		vars = append([]string(nil), e.Vars...)
		for i, v := range e.Vars {
			_, inSub := innerSub[v]
			_, inRen := innerRen[v]
			if inSub || inRen {
				// v shadows the outer variable of the same name.
				innerSub = without(innerSub, v)
				innerRen = withoutRen(innerRen, v)
			}
			if s.incoming[v] && (len(innerSub) > 0) {
				// v would capture a free variable of a replacement.
				nv := s.nm.Fresh(v)
				vars[i] = nv
				r := make(map[string]string, len(innerRen)+1)
				for k, x := range innerRen {
					r[k] = x
				}
				r[v] = nv
				innerRen = r
			}
		}
	}
	changed := false
	args := make([]*Expr, len(e.Args))
	for i, a := range e.Args {
		if e.BinderScope(i) {
			args[i] = s.subst(a, innerSub, innerRen)
		} else {
			args[i] = s.subst(a, sub, ren)
		}
		changed = changed || args[i] != a
	}
	for i := range vars {
		changed = changed || vars[i] != e.Vars[i]
	}
	if !changed {
		return e
	}
	c := e.Shallow()
	c.Args = args
	if vars != nil {
		c.Vars = vars
	}
	return c
}

func without(m map[string]*Expr, k string) map[string]*Expr {
	if _, ok := m[k]; !ok {
		return m
	}
	c := make(map[string]*Expr, len(m))
	for x, r := range m {
		if x != k {
			c[x] = r
		}
	}
	return c
}

func withoutRen(m map[string]string, k string) map[string]string {
	if _, ok := m[k]; !ok {
		return m
	}
	c := make(map[string]string, len(m))
	for x, r := range m {
		if x != k {
			c[x] = r
		}
	}
	return c
}

// Rename returns e with free variable old renamed to new (new must not be
// captured; Subst takes care of that).
func Rename(e *Expr, old, new string) *Expr {
	s := &substituter{nm: NewNamer(nil)}
	return s.subst(e, nil, map[string]string{old: new})
}
