package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// randCOO draws a tensor of the given dimensions with about n entries.
func randCOO(dims []int64, n int, rng *rand.Rand) *storage.COO {
	c := &storage.COO{Dims: dims, Coords: make([][]int64, len(dims)), Field: storage.FieldReal}
	for e := 0; e < n; e++ {
		for m, d := range dims {
			c.Coords[m] = append(c.Coords[m], rng.Int64N(d))
		}
		c.Vals = append(c.Vals, float64(rng.IntN(5)+1))
	}
	return c
}

// TestNaivePlans composes the paper's programs with the standard storage
// mappings in many formats and runs the naive plans: lets binding whole
// tensors, joins through repeated variables, lookups into built
// dictionaries.
func TestNaivePlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	matrix := []string{"dense", "coo", "csr", "csc", "dcsr", "dcsc", "hash", "trie", "sd", "ss:1,0"}
	tensor3 := []string{"csf", "coo", "hash", "trie", "dsd:2,0,1", "sss:1,0,2"}
	pick := func(fs []string) string { return fs[rng.IntN(len(fs))] }
	type tensorArg struct {
		name string
		dims []int64
	}
	programs := []struct {
		name    string
		tensors []tensorArg
	}{
		{"spmv", []tensorArg{{"A", []int64{7, 6}}}},
		{"mmm", []tensorArg{{"A", []int64{6, 5}}, {"B", []int64{5, 7}}}},
		{"summmm", []tensorArg{{"A", []int64{6, 5}}, {"B", []int64{5, 7}}}},
		{"batax", []tensorArg{{"A", []int64{6, 7}}}},
		{"ttm", []tensorArg{{"A", []int64{4, 5, 6}}, {"B", []int64{3, 6}}}},
		{"mttkrp", []tensorArg{{"B", []int64{4, 5, 6}}, {"C", []int64{5, 3}}, {"D", []int64{3, 6}}}},
	}
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	for _, p := range programs {
		for r := 0; r < rounds; r++ {
			st := storage.Store{}
			var srcs []sdql.Source
			var desc string
			for _, ta := range p.tensors {
				fname := pick(matrix)
				if len(ta.dims) == 3 {
					fname = pick(tensor3)
				}
				f, err := storage.ParseFormat(fname)
				if err != nil {
					t.Fatal(err)
				}
				objs, err := storage.Build(ta.name, randCOO(ta.dims, 12, rng), f)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range objs {
					st[k] = v
				}
				srcs = append(srcs, sdql.Source{Name: ta.name + ".sdql", Text: []byte(storage.Mapping(ta.name, f, len(ta.dims), ir.Real))})
				desc += fmt.Sprintf(" %s:%s", ta.name, fname)
			}
			text, _ := examples.Source(p.name)
			srcs = append(srcs, sdql.Source{Name: p.name + ".sdql", Text: text})
			st["x"] = storage.RealArray(randVec(7, rng))
			st["beta"] = storage.RealScalar(1.5)
			prog, err := sdql.Compile(srcs...)
			if err != nil {
				t.Fatalf("%s%s: %v", p.name, desc, err)
			}
			plan := prog.Compose("")
			t.Run(p.name+desc, func(t *testing.T) { agree(t, plan, st) })
		}
	}
}
