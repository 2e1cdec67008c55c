package eval

import (
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// hashOf stores the first order coordinates of c in a real hash map.
func hashOf(c coords, order int) *storage.HashMap {
	dims := make([]int64, order)
	h := storage.NewHashMap(ir.Real, dims)
	for _, k := range c.sortedKeys() {
		if err := h.Put(k[:order], 0, c[k]); err != nil {
			panic(err)
		}
	}
	return h
}

// trieOf stores c in a real trie of the given depth without calling
// Finish, so its nodes keep insertion order (reversed here).
func trieOf(c coords, order int) *storage.Trie {
	t := storage.NewTrie(ir.Real, make([]int64, order))
	keys := c.sortedKeys()
	for i := len(keys) - 1; i >= 0; i-- {
		if err := t.Put(keys[i][:order], 0, c[keys[i]]); err != nil {
			panic(err)
		}
	}
	return t
}

func randVector(seed uint64, n int) coords {
	m := randSparse(newRand(seed), n, 1, 0.5, true)
	c := coords{}
	for k, v := range m {
		c[[4]int64{k[0]}] = v
	}
	return c
}

func TestSingletonZeroElimination(t *testing.T) {
	tests := []struct {
		e    *ir.Expr
		want value.Value
	}{
		{single(n(3), n(0)), value.Empty},
		{single(n(3), re(0)), value.Empty},
		{single(n(1), single(n(2), n(0))), value.Empty},
		{single(n(3), n(4)), &value.Dict{Keys: []int64{3}, Vals: []value.Value{int64(4)}}},
		// {1 -> 2} + {1 -> -2} cancels to the empty dictionary.
		{add(single(n(1), n(2)), single(n(1), n(-2))), value.Empty},
		{sub(single(n(1), n(2)), single(n(1), n(2))), value.Empty},
		{mul(n(0), single(n(1), n(2))), value.Empty},
		// Adding scalar zero to a dictionary is the identity.
		{add(single(n(1), n(2)), n(0)), &value.Dict{Keys: []int64{1}, Vals: []value.Value{int64(2)}}},
		{ifte(eq(n(1), n(2)), single(n(1), re(2)), nil), value.Empty},
	}
	for _, tc := range tests {
		got := run(t, tc.e, nil)
		d, ok := got.(*value.Dict)
		if !ok {
			t.Fatalf("%s = %v, not a dictionary", tc.e, got)
		}
		if !value.Equal(d, tc.want, 0) {
			t.Errorf("%s = %s, want %s", tc.e, value.Format(d), value.Format(tc.want))
		}
		for _, v := range d.Vals {
			if value.IsZero(v) {
				t.Errorf("%s = %s keeps a zero entry", tc.e, value.Format(d))
			}
		}
	}
}

func TestDictionaryArithmetic(t *testing.T) {
	const size = 30
	u, v := randVector(1, size), randVector(2, size)
	a, b := randSparse(newRand(3), 8, 9, 0.3, true), randSparse(newRand(4), 8, 9, 0.3, true)
	st := storage.Store{"U": hashOf(u, 1), "V": hashOf(v, 1), "A": hashOf(a, 2), "B": hashOf(b, 2), "s": storage.RealScalar(1.5)}

	vec := func(f func(x, y float64) float64) value.Value {
		c := coords{}
		for i := range int64(size) {
			c[[4]int64{i}] = f(u[[4]int64{i}], v[[4]int64{i}])
		}
		return c.toValue(1)
	}
	same(t, "U + V", run(t, add(gl("U"), gl("V")), st), vec(func(x, y float64) float64 { return x + y }))
	same(t, "U - V", run(t, sub(gl("U"), gl("V")), st), vec(func(x, y float64) float64 { return x - y }))
	same(t, "U * V", run(t, mul(gl("U"), gl("V")), st), vec(func(x, y float64) float64 { return x * y }))
	same(t, "s * U", run(t, mul(gl("s"), gl("U")), st), vec(func(x, _ float64) float64 { return 1.5 * x }))
	same(t, "U * 3", run(t, mul(gl("U"), n(3)), st), vec(func(x, _ float64) float64 { return x * 3 }))
	same(t, "-U", run(t, ir.Neg(gl("U")), st), vec(func(x, _ float64) float64 { return -x }))
	same(t, "U - U", run(t, sub(gl("U"), gl("U")), st), value.Empty)

	mat := func(f func(x, y float64) float64) value.Value {
		c := coords{}
		for i := range int64(8) {
			for j := range int64(9) {
				k := [4]int64{i, j}
				c[k] = f(a[k], b[k])
			}
		}
		return c.toValue(2)
	}
	same(t, "A + B", run(t, add(gl("A"), gl("B")), st), mat(func(x, y float64) float64 { return x + y }))
	same(t, "A * B", run(t, mul(gl("A"), gl("B")), st), mat(func(x, y float64) float64 { return x * y }))
	same(t, "A - 2*B", run(t, sub(gl("A"), mul(n(2), gl("B"))), st), mat(func(x, y float64) float64 { return x - 2*y }))

	// Lookups: present, missing (zero of the node's type), nested.
	same(t, "U(7)", run(t, look(gl("U"), n(7)), st), u[[4]int64{7}])
	same(t, "U(99)", run(t, look(gl("U"), n(99)), st), 0.0)
	same(t, "A(99)", run(t, look(gl("A"), n(99)), st), value.Empty)
	same(t, "A(3)(4)", run(t, look(look(gl("A"), n(3)), n(4)), st), a[[4]int64{3, 4}])

	// The §2 filter: sum(<i,v> in V) if v > 0 then {i -> 5*v}, on a
	// vector with negative entries.
	w := coords{}
	for k, x := range u {
		w[k] = x - 5
	}
	st["W"] = hashOf(w, 1)
	filter := sum("i", "v", gl("W"), ifte(ir.Binary(ir.OpGt, vr("v"), n(0)), single(vr("i"), mul(n(5), vr("v"))), nil))
	want := coords{}
	for k, x := range w {
		if x > 0 {
			want[k] = 5 * x
		}
	}
	same(t, "filter", run(t, filter, st), want.toValue(1))

	// The §2 dot and element-wise products, desugared (Table 1, repeated
	// key): sum(<i,u> in U) sum(<j,v> in V) if i == j then ...
	dot := sum("i", "x", gl("U"), sum("j", "y", gl("V"), ifte(eq(vr("i"), vr("j")), mul(vr("x"), vr("y")), nil)))
	ew := sum("i", "x", gl("U"), sum("j", "y", gl("V"), ifte(eq(vr("i"), vr("j")), single(vr("i"), mul(vr("x"), vr("y"))), nil)))
	var wantDot float64
	wantEW := coords{}
	for k, x := range u {
		wantDot += x * v[k]
		wantEW[k] = x * v[k]
	}
	same(t, "dot", run(t, dot, st), wantDot)
	same(t, "elementwise", run(t, ew, st), wantEW.toValue(1))
	// Scalar-vector product written as a sum.
	same(t, "a * V", run(t, sum("i", "y", gl("V"), single(vr("i"), mul(gl("s"), vr("y")))), st),
		vec(func(_, y float64) float64 { return 1.5 * y }))
}

func TestArrayRangeSubarrayIteration(t *testing.T) {
	vals := []float64{0, 4, 0, 0, 7, 1, 0}
	st := storage.Store{"A": storage.RealArray(vals), "U": hashOf(coords{{1}: 2, {4}: 3, {6}: 0}, 1)}
	count := func(src *ir.Expr) value.Value { return run(t, sum("k", "_", src, n(1)), st) }

	// Every position of an array is visited, zeros included.
	if got := count(gl("A")); got != int64(len(vals)) {
		t.Fatalf("sum over A visits %v positions, want %d", got, len(vals))
	}
	keys := coords{}
	for i, x := range vals {
		keys[[4]int64{int64(i)}] = x + 1
	}
	same(t, "{i -> A(i)+1}", run(t, sum("i", "x", gl("A"), single(vr("i"), add(vr("x"), n(1)))), st), keys.toValue(1))

	// Ranges: {i -> i} for lo <= i < hi, position 0 included.
	if got := count(rng(n(0), n(5))); got != int64(5) {
		t.Fatalf("sum over 0:5 visits %v", got)
	}
	if got := count(rng(n(5), n(2))); got != int64(0) {
		t.Fatalf("sum over 5:2 visits %v", got)
	}
	r := coords{}
	for i := int64(0); i < 5; i++ {
		r[[4]int64{i}] = float64(i + 10)
	}
	same(t, "{i -> x+10} over 0:5", run(t, sum("i", "x", rng(n(0), n(5)), single(vr("i"), add(vr("x"), re(10)))), st), r.toValue(1))
	same(t, "(2:6)(4)", run(t, look(rng(n(2), n(6)), n(4)), st), int64(4))
	same(t, "(2:6)(7)", run(t, look(rng(n(2), n(6)), n(7)), st), int64(0))
	// Materialized, a range equals its non-zero part.
	same(t, "0:4", run(t, rng(n(0), n(4)), st), coords{{1}: 1, {2}: 2, {3}: 3}.toValue(1))

	// Subarrays keep the original positions as keys and every position.
	if got := count(subarr(gl("A"), n(2), n(5))); got != int64(3) {
		t.Fatalf("sum over A(2:5) visits %v", got)
	}
	sumKeys := run(t, sum("p", "x", subarr(gl("A"), n(2), n(5)), vr("p")), st)
	if sumKeys != int64(2+3+4) {
		t.Fatalf("keys of A(2:5) sum to %v, want 9", sumKeys)
	}
	same(t, "A(2:5)(4)", run(t, look(subarr(gl("A"), n(2), n(5)), n(4)), st), vals[4])
	same(t, "A(2:5)(5) (outside the window: zero)", run(t, look(subarr(gl("A"), n(2), n(5)), n(5)), st), 0.0)
	same(t, "A(1:6)(2:4)", run(t, sum("p", "x", subarr(subarr(gl("A"), n(1), n(6)), n(2), n(4)), single(vr("p"), add(vr("x"), n(1)))), st),
		coords{{2}: vals[2] + 1, {3}: vals[3] + 1}.toValue(1))
	same(t, "A(2:2) is empty", count(subarr(gl("A"), n(2), n(2))), int64(0))
	same(t, "A(0:7) (whole)", count(subarr(gl("A"), n(0), n(7))), int64(7))

	// A subarray of a dictionary visits every position of the window.
	if got := count(subarr(gl("U"), n(0), n(8))); got != int64(8) {
		t.Fatalf("sum over U(0:8) visits %v", got)
	}
	same(t, "U(0:8) as a value", run(t, subarr(gl("U"), n(0), n(8)), st), coords{{1}: 2, {4}: 3}.toValue(1))
	same(t, "(0:5)(3:9)", run(t, sum("p", "x", subarr(rng(n(0), n(5)), n(3), n(9)), single(vr("p"), add(vr("x"), n(1)))), st),
		coords{{3}: 4, {4}: 5, {5}: 1, {6}: 1, {7}: 1, {8}: 1}.toValue(1))

	// An array as a value is the dictionary of its positions.
	same(t, "A", run(t, gl("A"), st), coords{{1}: 4, {4}: 7, {5}: 1}.toValue(1))
	same(t, "let B = A in B(4)", run(t, let("B", gl("A"), look(vr("B"), n(4))), st), 7.0)
}

func TestHashMapAndTrie(t *testing.T) {
	r := newRand(9)
	c := coords{}
	for range 60 {
		c[[4]int64{int64(r.IntN(5)), int64(r.IntN(6)), int64(r.IntN(7))}] = float64(r.IntN(4)) // some explicit zeros
	}
	st := storage.Store{"H": hashOf(c, 3), "T": trieOf(c, 3)}
	// Transpose (i,j,k) -> (k,j,i), and count stored entries.
	transpose := func(src string) *ir.Expr {
		return sum("i", "a", gl(src), sum("j", "b", vr("a"), sum("k", "x", vr("b"),
			single(vr("k"), single(vr("j"), single(vr("i"), add(vr("x"), re(0.5))))))))
	}
	want := coords{}
	for k, x := range c {
		want[[4]int64{k[2], k[1], k[0]}] = x + 0.5
	}
	for _, src := range []string{"H", "T"} {
		same(t, src+" transposed", run(t, transpose(src), st), want.toValue(3))
		got := run(t, sum("i", "a", gl(src), sum("j", "b", vr("a"), sum("k", "x", vr("b"), n(1)))), st)
		if got != int64(len(c)) {
			t.Fatalf("%s: %v entries visited, want %d (explicit zeros included)", src, got, len(c))
		}
	}
	// Sums visit keys in increasing order: with these values only that
	// order gives exactly 1 (1e16 + 1 rounds back to 1e16).
	ordered := coords{{0}: 1e16, {1}: -1e16, {2}: 1}
	st["O"] = trieOf(ordered, 1)
	p := storage.NewHashMap(ir.Real, []int64{3}) // stored in decreasing key order
	for k := int64(2); k >= 0; k-- {
		if err := p.Put([]int64{k}, 0, ordered[[4]int64{k}]); err != nil {
			t.Fatal(err)
		}
	}
	st["P"] = p
	for _, src := range []string{"O", "P"} {
		if got := run(t, sum("i", "x", gl(src), vr("x")), st); got != 1.0 {
			t.Fatalf("sum over %s = %v: keys not visited in increasing order", src, got)
		}
	}
	st["s"] = storage.IntScalar(3)
	same(t, "scalar global", run(t, mul(gl("s"), n(2)), st), int64(6))
}
