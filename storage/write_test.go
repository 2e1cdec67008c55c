package storage

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// dictOf builds a nested dictionary from coordinate/value pairs.
func dictOf(t *testing.T, entries map[[2]int64]value.Value) *value.Dict {
	t.Helper()
	rows := map[int64]*value.Builder{}
	for k, v := range entries {
		if rows[k[0]] == nil {
			rows[k[0]] = value.NewBuilder()
		}
		if err := rows[k[0]].Add(k[1], v); err != nil {
			t.Fatal(err)
		}
	}
	b := value.NewBuilder()
	for i, r := range rows {
		if err := b.Add(i, r.Dict()); err != nil {
			t.Fatal(err)
		}
	}
	return b.Dict()
}

func TestWriteTNS(t *testing.T) {
	m := dictOf(t, map[[2]int64]value.Value{{2, 0}: 0.1, {0, 3}: 2.0, {0, 1}: -1e-300, {1, 1}: 0.0})
	var b bytes.Buffer
	if err := WriteValue(&b, "tns", m, ir.Type{Depth: 2, Base: ir.Real}); err != nil {
		t.Fatal(err)
	}
	want := "1 2 -1e-300\n1 4 2\n3 1 0.1\n"
	if b.String() != want {
		t.Errorf("tns:\n%s\nwant\n%s", b.String(), want)
	}
	// Scalars: one line with the value, zero included.
	for _, tc := range []struct {
		v    value.Value
		t    ir.Type
		want string
	}{
		{int64(-3), ir.IntType, "-3\n"}, {0.0, ir.RealType, "0\n"}, {math.Pi, ir.RealType, "3.141592653589793\n"},
		{value.Empty, ir.Type{Depth: 1, Base: ir.Int}, ""}, {int64(0), ir.Type{Depth: 1, Base: ir.Int}, ""},
	} {
		b.Reset()
		if err := WriteValue(&b, "tns", tc.v, tc.t); err != nil || b.String() != tc.want {
			t.Errorf("%v: %q %v, want %q", tc.v, b.String(), err, tc.want)
		}
	}
	if err := WriteValue(&b, "tns", int64(3), ir.Type{Depth: 1, Base: ir.Int}); err == nil {
		t.Errorf("scalar written as a vector")
	}
	neg := dictOf(t, map[[2]int64]value.Value{{-1, 0}: 1.0})
	if err := WriteValue(&b, "tns", neg, ir.Type{Depth: 2, Base: ir.Real}); err == nil {
		t.Errorf("negative key written")
	}
	if err := WriteValue(&b, "csv", neg, ir.Type{Depth: 2, Base: ir.Real}); err == nil {
		t.Errorf("unknown format accepted")
	}
}

// TestWriteReadRoundTrip writes random results in each format and reads
// them back with the readers.
func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	entries := map[[2]int64]value.Value{{0, 0}: 1.5, {3, 2}: -0.1, {1, 4}: 1e20, {3, 4}: 1.0 / 3}
	m := dictOf(t, entries)
	typ := ir.Type{Depth: 2, Base: ir.Real}
	check := func(format string, c *COO, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got := map[[2]int64]value.Value{}
		for p, v := range c.Vals {
			if v != 0 {
				got[[2]int64{c.Coords[0][p], c.Coords[1][p]}] = v
			}
		}
		if !reflect.DeepEqual(got, entries) {
			t.Errorf("%s round trip: %v, want %v", format, got, entries)
		}
	}
	for _, format := range []string{"tns", "mtx", "npy"} {
		var b bytes.Buffer
		if err := WriteValue(&b, format, m, typ); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "out."+format)
		os.WriteFile(p, b.Bytes(), 0o644)
		c, err := ReadTensorFile(p, ReadOptions{})
		check(format, c, err)
		if err == nil && format != "tns" && !reflect.DeepEqual(c.Dims, []int64{4, 5}) {
			t.Errorf("%s dims %v, want [4 5]", format, c.Dims)
		}
	}
	// Given sizes; integer results stay integer.
	im := dictOf(t, map[[2]int64]value.Value{{0, 1}: int64(7)})
	var b bytes.Buffer
	if err := WriteValueOpts(&b, "mtx", im, ir.Type{Depth: 2, Base: ir.Int}, WriteOptions{Dims: []int64{3, 3}}); err != nil {
		t.Fatal(err)
	}
	if want := "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 7\n"; b.String() != want {
		t.Errorf("mtx:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteValueOpts(&b, "npy", im, ir.Type{Depth: 2, Base: ir.Int}, WriteOptions{Dims: []int64{2, 3}}); err != nil {
		t.Fatal(err)
	}
	a, err := ReadNPY(&b, "x.npy")
	if err != nil || a.Elem != ir.Int || !reflect.DeepEqual(a.Shape, []int64{2, 3}) || !reflect.DeepEqual(a.I, []int64{0, 7, 0, 0, 0, 0}) {
		t.Errorf("npy int: %+v %v", a, err)
	}
	if err := WriteValueOpts(&b, "npy", im, ir.Type{Depth: 2, Base: ir.Int}, WriteOptions{Dims: []int64{1, 1}}); err == nil {
		t.Errorf("key outside the given dims accepted")
	}
	if err := WriteValue(&b, "mtx", value.Empty, ir.Type{Depth: 1, Base: ir.Int}); err == nil || !strings.Contains(err.Error(), "needs a matrix") {
		t.Errorf("mtx of a vector: %v", err)
	}
	b.Reset()
	if err := WriteValue(&b, "npy", 2.5, ir.RealType); err != nil {
		t.Fatal(err)
	}
	if a, err := ReadNPY(&b, "s.npy"); err != nil || len(a.Shape) != 0 || !reflect.DeepEqual(a.F, []float64{2.5}) {
		t.Errorf("npy scalar: %+v %v", a, err)
	}
	if b.Len() != 0 {
		t.Errorf("reader left %d bytes", b.Len())
	}
}

func TestNPYHeaderAlignment(t *testing.T) {
	for _, shape := range [][]int64{{}, {3}, {2, 5}, {1, 2, 3, 4}} {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		var b bytes.Buffer
		if err := WriteNPY(&b, shape, nil, make([]float64, n)); err != nil {
			t.Fatal(err)
		}
		if (b.Len()-int(n)*8)%64 != 0 {
			t.Errorf("shape %v: data starts at %d, not a multiple of 64", shape, b.Len()-int(n)*8)
		}
	}
}

func TestLoadObject(t *testing.T) {
	dir := t.TempDir()
	txt := writeFile(t, dir, "a.txt", []byte("1\n2\n3\n"), false)
	rtxt := writeFile(t, dir, "r.txt", []byte("1\n2.5\n"), false)
	var npy bytes.Buffer
	WriteNPY(&npy, []int64{2, 2}, []int64{1, 2, 3, 4}, nil)
	np := writeFile(t, dir, "a.npy", npy.Bytes(), false)
	mtx := writeFile(t, dir, "m.mtx", []byte("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n3 3 2\n"), false)
	pat := writeFile(t, dir, "p.mtx", []byte("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n"), false)
	tns := writeFile(t, dir, "t.tns", []byte("1 2 3 4\n"), false)

	decl := func(kind ir.ObjKind, elem ir.Base, dims int) *ir.Decl {
		d := &ir.Decl{Name: "X", Kind: kind, Elem: elem}
		for i := 0; i < dims; i++ {
			d.Dims = append(d.Dims, ir.IntConst(10))
		}
		return d
	}
	obj, err := LoadObject(decl(ir.ObjArray, ir.Int, 1), txt, ReadOptions{})
	if a, ok := obj.(*Array); err != nil || !ok || !reflect.DeepEqual(a.I, []int64{1, 2, 3}) {
		t.Errorf("int txt: %v %v", obj, err)
	}
	obj, err = LoadObject(decl(ir.ObjArray, ir.Real, 1), np, ReadOptions{})
	if a, ok := obj.(*Array); err != nil || !ok || !reflect.DeepEqual(a.F, []float64{1, 2, 3, 4}) {
		t.Errorf("real npy: %v %v", obj, err)
	}
	if _, err := LoadObject(decl(ir.ObjArray, ir.Int, 1), rtxt, ReadOptions{}); err == nil || !strings.HasPrefix(err.Error(), rtxt+":2: real value") {
		t.Errorf("reals into int array: %v", err)
	}
	obj, err = LoadObject(decl(ir.ObjHashMap, ir.Real, 2), mtx, ReadOptions{})
	if h, ok := obj.(*HashMap); err != nil || !ok || h.Len() != 2 || h.F[h.Index[HKey{0, 1}]] != 1.5 {
		t.Errorf("hash from mtx: %+v %v", obj, err)
	}
	obj, err = LoadObject(decl(ir.ObjTrie, ir.Int, 2), pat, ReadOptions{})
	if tr, ok := obj.(*Trie); err != nil || !ok || !reflect.DeepEqual(tr.Root.Keys, []int64{0, 2}) || tr.Elem != ir.Int {
		t.Errorf("trie from pattern mtx: %+v %v", obj, err)
	}
	if _, err := LoadObject(decl(ir.ObjTrie, ir.Int, 2), mtx, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "real values cannot fill int TRIE X") {
		t.Errorf("real mtx into int trie: %v", err)
	}
	if _, err := LoadObject(decl(ir.ObjHashMap, ir.Real, 2), tns, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "order 3 cannot fill HASHMAP X, declared with 2") {
		t.Errorf("arity mismatch: %v", err)
	}
	obj, err = LoadObject(decl(ir.ObjScalar, ir.Int, 0), " 42 ", ReadOptions{})
	if s, ok := obj.(*Scalar); err != nil || !ok || s.I != 42 {
		t.Errorf("int scalar: %v %v", obj, err)
	}
	obj, err = LoadObject(decl(ir.ObjScalar, ir.Real, 0), "1e-3", ReadOptions{})
	if s, ok := obj.(*Scalar); err != nil || !ok || s.F != 1e-3 {
		t.Errorf("real scalar: %v %v", obj, err)
	}
	if _, err := LoadObject(decl(ir.ObjScalar, ir.Int, 0), "1.5", ReadOptions{}); err == nil || !strings.Contains(err.Error(), "is a real") {
		t.Errorf("real into int scalar: %v", err)
	}
	if _, err := LoadObject(decl(ir.ObjArray, ir.Int, 1), filepath.Join(dir, "a.csv"), ReadOptions{}); err == nil {
		t.Errorf("csv array accepted")
	}
}

// TestMinDims: sizes the program knows (MinDims) give empty trailing rows
// and columns their place; a key past them still fits; a size given in
// Dims is checked, 0 there leaves the mode to MinDims and the keys.
func TestMinDims(t *testing.T) {
	m := dictOf(t, map[[2]int64]value.Value{{0, 1}: 2.5, {3, 0}: 1.0})
	typ := ir.Type{Depth: 2, Base: ir.Real}
	for _, c := range []struct {
		opt  WriteOptions
		want string
	}{
		{WriteOptions{MinDims: []int64{6, 5}}, "6 5 2"},
		{WriteOptions{MinDims: []int64{2, 0}}, "4 2 2"},
		{WriteOptions{Dims: []int64{0, 3}, MinDims: []int64{6, 5}}, "6 3 2"},
	} {
		var b bytes.Buffer
		if err := WriteValueOpts(&b, "mtx", m, typ, c.opt); err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(b.String(), "\n")[1]; got != c.want {
			t.Errorf("%+v: header %q, want %q", c.opt, got, c.want)
		}
	}
}

func TestCheckWritable(t *testing.T) {
	for _, c := range []struct {
		format string
		t      ir.Type
		dims   []int64
		ok     bool
	}{
		{"mtx", ir.RealType, nil, false},
		{"mtx", ir.Type{Depth: 3, Base: ir.Real}, nil, false},
		{"mtx", ir.Type{Depth: 2, Base: ir.Int}, nil, true},
		{"npy", ir.Type{Depth: 3, Base: ir.Real}, []int64{10, 10, 10}, true},
		{"npy", ir.Type{Depth: 3, Base: ir.Real}, []int64{1 << 20, 1 << 20, 0}, false},
		{"tns", ir.Type{Depth: 4, Base: ir.Real}, nil, true},
		{"csv", ir.RealType, nil, false},
	} {
		if err := CheckWritable(c.format, c.t, c.dims); (err == nil) != c.ok {
			t.Errorf("%s of %s %v: %v", c.format, c.t, c.dims, err)
		}
	}
}
