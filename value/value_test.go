package value

import (
	"math"
	"testing"
)

func dict(kv ...any) *Dict {
	b := NewBuilder()
	for i := 0; i < len(kv); i += 2 {
		if err := b.Add(int64(kv[i].(int)), kv[i+1]); err != nil {
			panic(err)
		}
	}
	return b.Dict()
}

func TestAddIsKeyWiseAndDropsZeros(t *testing.T) {
	a := dict(0, 1.5, 2, 2.0, 5, dict(1, 1.0))
	b := dict(2, -2.0, 3, 4.0, 5, dict(1, -1.0))
	s, err := Add(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Format(s), "{0 -> 1.5, 3 -> 4.0}"; got != want {
		t.Fatalf("a+b = %s, want %s", got, want)
	}
	if d := s.(*Dict); d.Len() != 2 {
		t.Fatalf("zero entries kept: %d entries", d.Len())
	}
	// int + real promotes; adding the scalar zero to a dictionary is identity.
	if v, _ := Add(int64(2), 0.5); v != 2.5 {
		t.Fatalf("2 + 0.5 = %v", v)
	}
	if v, _ := Add(int64(0), a); v != a {
		t.Fatalf("0 + dict changed the dictionary")
	}
	if _, err := Add(int64(1), a); err == nil {
		t.Fatalf("1 + dict: no error")
	}
}

func TestMul(t *testing.T) {
	a := dict(0, 2.0, 1, 3.0, 4, 1.0)
	b := dict(1, 2.0, 4, 0.5, 7, 9.0)
	p, _ := Mul(a, b)
	if got, want := Format(p), "{1 -> 6.0, 4 -> 0.5}"; got != want {
		t.Fatalf("a*b = %s, want %s", got, want)
	}
	s, _ := Mul(int64(2), a)
	if got, want := Format(s), "{0 -> 4.0, 1 -> 6.0, 4 -> 2.0}"; got != want {
		t.Fatalf("2*a = %s, want %s", got, want)
	}
	z, _ := Mul(a, int64(0))
	if !IsZero(z) || z.(*Dict).Len() != 0 {
		t.Fatalf("a*0 = %s, want {}", Format(z))
	}
	n, _ := Neg(dict(3, int64(2)))
	if got := Format(n); got != "{3 -> -2}" {
		t.Fatalf("-{3 -> 2} = %s", got)
	}
}

func TestEqualIgnoresExplicitZeros(t *testing.T) {
	withZero := &Dict{Keys: []int64{0, 1, 2}, Vals: []Value{0.0, 1.0, &Dict{}}}
	if !Equal(withZero, dict(1, 1.0), 0) {
		t.Fatalf("explicit zeros made dictionaries unequal")
	}
	if Equal(dict(1, 1.0), dict(1, 1.0, 2, 1.0), 0) {
		t.Fatalf("different dictionaries compared equal")
	}
	if !Equal(int64(3), 3.0, 0) || Equal(int64(3), 3.5, 0) {
		t.Fatalf("int/real comparison wrong")
	}
	if !Equal(1.0, 1.0+1e-12, 1e-9) || Equal(1.0, 1.001, 1e-9) {
		t.Fatalf("tolerance wrong")
	}
	if !Equal(math.NaN(), math.NaN(), 0) {
		t.Fatalf("NaN should equal NaN for result comparison")
	}
	if !Equal(Empty, 0.0, 0) {
		t.Fatalf("the empty dictionary is zero")
	}
}

func TestEntriesFlattenInOrder(t *testing.T) {
	v := dict(2, dict(0, 1.0), 0, dict(3, 2.0, 1, 0.0))
	es := Entries(v)
	if len(es) != 2 || es[0].Coords[0] != 0 || es[0].Coords[1] != 3 || es[1].Coords[0] != 2 {
		t.Fatalf("Entries = %v", es)
	}
	if s := Entries(int64(0)); len(s) != 1 || s[0].Val != int64(0) {
		t.Fatalf("a scalar flattens to one entry, even zero: %v", s)
	}
}
