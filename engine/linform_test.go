package engine

import (
	"maps"
	"testing"
)

func TestLinearForm(t *testing.T) {
	s, g := atomLinear("s:1"), atomLinear("g:n")
	// (3 + 2s) * g = 3g + 2 g×s; its negation cancels it.
	p, ok := constLinear(3).add(s, 2).times(g)
	want := linear{"g:n": 3, "g:n" + atomTimes + "s:1": 2}
	if !ok || !maps.Equal(p, want) {
		t.Fatalf("(3+2s)*g = %v, %v; want %v", p, ok, want)
	}
	if z := p.add(p, -1); len(z) != 0 {
		t.Errorf("p - p = %v, want the empty form", z)
	}
	// Factors are kept in order: g×s times s is g×s×s, whichever side.
	q1, _ := p.times(s)
	q2, _ := s.times(p)
	if !maps.Equal(q1, q2) || q1["g:n"+atomTimes+"s:1"+atomTimes+"s:1"] != 2 {
		t.Errorf("p*s = %v, s*p = %v", q1, q2)
	}
	if _, ok := constLinear(1).add(s, 1).times(constLinear(1).add(g, 1)); ok {
		t.Error("(1+s)*(1+g) is not linear")
	}
	if c, ok := constLinear(7).add(s, 1).add(s, -1).constant(); !ok || c != 7 {
		t.Errorf("7 + s - s = %d, %v", c, ok)
	}
	if !constLinear(2).add(atomLinear("c"), 8).only("c") || s.only("c") {
		t.Error("only")
	}
	// Evaluated in a frame: 5 + 3*i1 + 2*i1*n, i1 = 4, n = 10.
	f := constLinear(5).add(s, 3).add(linear{"g:n" + atomTimes + "s:1": 2}, 1)
	fr := &frame{i: []int64{0, 4}}
	vals := map[string]linAtom{
		"s:1": {slot: 1},
		"g:n": {slot: -1, cl: &cell{scalarI: 10}},
	}
	at := f.at(func(k string) linAtom { return vals[k] })
	if v := at.at(fr); v != 5+3*4+2*4*10 {
		t.Errorf("at = %d, want %d", v, 5+3*4+2*4*10)
	}
}
