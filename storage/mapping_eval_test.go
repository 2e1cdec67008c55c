package storage_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// logical returns the tensor c as a nested dictionary, repeated
// coordinates summed, in the element type the builders store.
func logical(t *testing.T, c *storage.COO) value.Value {
	t.Helper()
	type node struct {
		children map[int64]*node
		sum      float64
	}
	root := &node{children: map[int64]*node{}}
	for p, v := range c.Vals {
		n := root
		for m := range c.Coords {
			k := c.Coords[m][p]
			if n.children[k] == nil {
				n.children[k] = &node{children: map[int64]*node{}}
			}
			n = n.children[k]
		}
		n.sum += v
	}
	var build func(n *node, depth int) value.Value
	build = func(n *node, depth int) value.Value {
		if depth == c.Order() {
			if c.Elem() == ir.Int {
				return int64(n.sum)
			}
			return n.sum
		}
		b := value.NewBuilder()
		for k, ch := range n.children {
			if err := b.Add(k, build(ch, depth+1)); err != nil {
				t.Fatal(err)
			}
		}
		return b.Dict()
	}
	return build(root, 0)
}

func randomTensor(rng *rand.Rand, dims []int64, n int, field string) *storage.COO {
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: field}
	for p := 0; p < n; p++ {
		for m, d := range dims {
			c.Coords[m] = append(c.Coords[m], rng.Int63n(d))
		}
		v := float64(rng.Intn(7) - 3)
		if field == storage.FieldReal {
			v += rng.Float64()
		}
		c.Vals = append(c.Vals, v)
	}
	return c
}

// TestMappingsEvaluate compiles the generated mapping of every named
// format and several level strings, composes it, evaluates it with the
// reference interpreter over the arrays Build makes (checking every
// @unique promise), and compares with the logical tensor. It also checks
// that the sizes the CREATE statements declare are the sizes built.
func TestMappingsEvaluate(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	cases := []struct {
		format string
		dims   []int64
	}{
		{"dense", []int64{4, 5}}, {"coo", []int64{4, 5}}, {"csr", []int64{5, 4}}, {"csc", []int64{5, 4}},
		{"dcsr", []int64{7, 3}}, {"dcsc", []int64{7, 3}}, {"csf", []int64{3, 4, 5}}, {"hash", []int64{4, 5}},
		{"trie", []int64{4, 5}}, {"dense", []int64{3, 2, 4}}, {"coo", []int64{3, 4, 5}}, {"hash", []int64{3, 4, 2}},
		{"trie", []int64{3, 4, 2}}, {"csf", []int64{9}}, {"coo", []int64{9}}, {"dense", []int64{6}},
		{"sd", []int64{4, 5}}, {"dd:1,0", []int64{4, 5}}, {"sd:1,0", []int64{4, 5}},
		{"sss:0,2,1", []int64{3, 4, 5}}, {"sds:2,0,1", []int64{3, 4, 5}}, {"dsd:1,2,0", []int64{3, 4, 5}},
		{"ssd:2,1,0", []int64{3, 4, 5}}, {"dss:1,0,2", []int64{2, 3, 4}},
		{"sell", []int64{5, 4}}, {"sell", []int64{21, 13}}, {"sell", []int64{9, 1}},
	}
	for _, tc := range cases {
		f, err := storage.ParseFormat(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{storage.FieldReal, storage.FieldInteger} {
			for _, n := range []int{0, 1, 8, 40} {
				name := fmt.Sprintf("%s/%v/%s/%d", tc.format, tc.dims, field, n)
				c := randomTensor(rng, tc.dims, n, field)
				st, err := storage.Build("A", c, f)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				src := storage.Mapping("A", f, len(tc.dims), c.Elem())
				prog, err := sdql.Compile(sdql.Source{Name: tc.format + ".sdql", Text: []byte(src)})
				if err != nil {
					t.Fatalf("%s: mapping does not compile: %v\n%s", name, err, src)
				}
				checkDeclaredSizes(t, name, prog, st)
				plan := prog.Compose("A")
				got, err := eval.EvalWith(plan, st, eval.Options{CheckUnique: true})
				if err != nil {
					t.Fatalf("%s: %v\n%s", name, err, src)
				}
				if want := logical(t, c); !value.Equal(got, want, 1e-12) {
					t.Fatalf("%s: mapping gives\n%s\nwant\n%s\n%s", name, value.Format(got), value.Format(want), src)
				}
				if field == storage.FieldInteger && !hasOnlyInts(got) {
					t.Errorf("%s: integer tensor evaluates to reals: %s", name, value.Format(got))
				}
			}
		}
	}
}

// checkDeclaredSizes evaluates the size expressions of every declared
// object over the store and compares them with what Build made.
func checkDeclaredSizes(t *testing.T, name string, prog *ir.Program, st storage.Store) {
	t.Helper()
	for _, d := range prog.Decls {
		obj, ok := st[d.Name]
		if !ok {
			t.Fatalf("%s: mapping declares %s, which Build did not make", name, d.Name)
		}
		if obj.Kind() != d.Kind || obj.ElemType() != d.Elem {
			t.Errorf("%s: %s declared %s %s, built %s %s", name, d.Name, d.Elem, d.Kind, obj.ElemType(), obj.Kind())
		}
		var built []int64
		switch o := obj.(type) {
		case *storage.Array:
			built = []int64{int64(o.Len())}
		case *storage.HashMap:
			built = o.Dims
		case *storage.Trie:
			built = o.Dims
		}
		if len(d.Dims) != len(built) {
			t.Errorf("%s: %s declared with %d sizes, has %d", name, d.Name, len(d.Dims), len(built))
			continue
		}
		for i, e := range d.Dims {
			v, err := eval.Eval(e, st)
			if err != nil {
				t.Fatalf("%s: size of %s: %v", name, d.Name, err)
			}
			if v != built[i] {
				t.Errorf("%s: %s declared size %s = %v, built %d", name, d.Name, e, v, built[i])
			}
		}
	}
	for obj := range st {
		if prog.Decl(obj) == nil {
			t.Errorf("%s: Build made %s, which the mapping does not declare", name, obj)
		}
	}
}

func hasOnlyInts(v value.Value) bool {
	for _, e := range value.Entries(v) {
		if _, ok := e.Val.(int64); !ok {
			return false
		}
	}
	return true
}

// TestEmbeddedMappingsCompile checks that every hand-written mapping file
// parses and type-checks.
func TestEmbeddedMappingsCompile(t *testing.T) {
	entries, err := storage.Mappings.ReadDir("mappings")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		text, err := storage.Mappings.ReadFile("mappings/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		prog, err := sdql.Compile(sdql.Source{Name: e.Name(), Text: text})
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if prog.Tensor("A") == nil {
			t.Errorf("%s defines no tensor A", e.Name())
		}
	}
}
