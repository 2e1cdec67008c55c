package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// linear is an int expression in linear normal form: the coefficient of
// each atom, "1" the constant's. An atom is named by its key (a variable,
// a global scalar, an array read at an index in normal form, a closure, a
// lane's chunk, or a product of atoms, their keys in order joined by
// atomTimes), so equal forms denote equal values: forms compare with
// maps.Equal. Sums and products wrap as Go's ints do, so regrouping is
// exact; a caller that compares or folds forms bounds the coefficients
// (smallCoef) where overflow would change the answer.
type linear map[string]int64

// atomTimes joins the keys of a product's factors; no atom key holds it.
const atomTimes = "×"

// constLinear is the form of constant v.
func constLinear(v int64) linear { return linear{"1": v}.add(nil, 0) }

// atomLinear is the form of atom key.
func atomLinear(key string) linear { return linear{key: 1} }

// add returns f + s*g, without zero terms.
func (f linear) add(g linear, s int64) linear {
	out := maps.Clone(f)
	if out == nil {
		out = linear{}
	}
	for k, v := range g {
		out[k] += s * v
	}
	maps.DeleteFunc(out, func(_ string, v int64) bool { return v == 0 })
	return out
}

// times returns f * g where the product is linear: one of them a
// constant, or one a lone atom (each term of the other then gains it as a
// factor); false otherwise.
func (f linear) times(g linear) (linear, bool) {
	if gc, ok := g.constant(); ok {
		return linear{}.add(f, gc), true
	}
	if fc, ok := f.constant(); ok {
		return linear{}.add(g, fc), true
	}
	if len(g) != 1 || g["1"] != 0 {
		f, g = g, f
	}
	if len(g) != 1 || g["1"] != 0 {
		return nil, false
	}
	var atom string
	var k int64
	for key, v := range g {
		atom, k = key, v
	}
	out := linear{}
	for key, v := range f {
		if key != "1" {
			factors := append(strings.Split(key, atomTimes), atom)
			slices.Sort(factors)
			key = strings.Join(factors, atomTimes)
		} else {
			key = atom
		}
		out[key] += v * k
	}
	return out.add(nil, 0), true
}

// constant returns f's value when it has no atoms.
func (f linear) constant() (int64, bool) {
	for k := range f {
		if k != "1" {
			return 0, false
		}
	}
	return f["1"], true
}

// only reports whether f's atoms are among keys (and the constant).
func (f linear) only(keys ...string) bool {
	for k := range f {
		if k != "1" && !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

func (f linear) String() string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(f)) {
		fmt.Fprintf(&sb, "%+d*%s", f[k], k)
	}
	return sb.String()
}

// linearAt is a form to evaluate in a frame: c plus each term, a
// coefficient times the values of its atoms (slot > 0: c + k*fr.i[slot-1]).
type linearAt struct {
	c, k, slot int64
	terms      []linTerm
}

type linTerm struct {
	k     int64
	atoms []linAtom // a product's factors
}

// linAtom is where an atom's value is: an int slot of the frame (slot >=
// 0), a global int scalar (cl), or a closure (f). Slots and scalars are
// read in place: a form is evaluated once per run of lanes, or per entry
// of an inner loop. A closure that reads an int array at an int slot
// names them too (arr, at), so an inner loop over that slot's positions
// can walk the array as it walks its own keys.
type linAtom struct {
	slot int
	cl   *cell
	f    intFn
	arr  *cell
	at   int
}

func (a *linAtom) value(fr *frame) int64 {
	switch {
	case a.slot >= 0:
		return fr.i[a.slot]
	case a.cl != nil:
		return a.cl.scalarI
	}
	return a.f(fr)
}

// at compiles f, atom locating each key that is not a product.
func (f linear) at(atom func(key string) linAtom) linearAt {
	a := linearAt{c: f["1"]}
	for _, key := range slices.Sorted(maps.Keys(f)) {
		if key == "1" {
			continue
		}
		t := linTerm{k: f[key]}
		for _, k := range strings.Split(key, atomTimes) {
			t.atoms = append(t.atoms, atom(k))
		}
		a.terms = append(a.terms, t)
	}
	if len(a.terms) == 1 && len(a.terms[0].atoms) == 1 && a.terms[0].atoms[0].slot >= 0 {
		a.k, a.slot = a.terms[0].k, int64(a.terms[0].atoms[0].slot)+1
	}
	return a
}

// at is the form's value, inlined where the form is one slot.
func (a *linearAt) at(fr *frame) int64 {
	if a.slot > 0 {
		return a.c + a.k*fr.i[a.slot-1]
	}
	return a.terms1(fr)
}

func (a *linearAt) terms1(fr *frame) int64 {
	v := a.c
	for i := range a.terms {
		t := &a.terms[i]
		x := t.k
		for j := range t.atoms {
			x *= t.atoms[j].value(fr)
		}
		v += x
	}
	return v
}

// smallCoef bounds the constants and coefficients of a normal form, so
// that its sums and products cannot overflow.
func smallCoef(v int64) bool { return v > -1<<31 && v < 1<<31 }
