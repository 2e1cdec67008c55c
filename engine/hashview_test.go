package engine

import (
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestHashViewReused runs plans that walk a hash map as a dictionary over
// entries stored out of key order: each run agrees with the interpreter,
// repeated runs reuse the grouped view Prepare built, and a map whose
// keys change is grouped again.
func TestHashViewReused(t *testing.T) {
	build := func() storage.Store {
		h := storage.NewHashMap(ir.Real, []int64{6, 5})
		// Descending key order, so grouping must sort.
		for i := int64(5); i >= 0; i-- {
			for j := int64(4); j >= 0; j-- {
				if (i+j)%3 != 0 {
					if err := h.Put([]int64{i, j}, 0, float64(i*10+j)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return storage.Store{"H": h}
	}
	for _, src := range []string{
		`H`,
		`sum(<i, r> in H) sum(<j, v> in r) { j -> { i -> v * 2.0 } }`,
		`sum(<i, r> in H) sum(<j, v> in H(i)) v * r(j)`,
	} {
		e := parse(t, src, build())
		for _, threads := range []int{1, 3} {
			st := build()
			h := st["H"].(*storage.HashMap)
			k, err := Compile(e, SchemaOf(st), Options{Threads: threads})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			var cl *cell
			for _, c := range k.cells {
				if c.name == "H" {
					cl = c
				}
			}
			if cl == nil || !cl.needView && !cl.needLevels {
				t.Fatalf("%s: the plan does not walk H as a dictionary", src)
			}
			k.Prepare(st)
			prepared := cl.groups
			if prepared == nil {
				t.Fatalf("%s: Prepare built no grouped view", src)
			}
			check := func(round string) {
				t.Helper()
				want, err := eval.Eval(e, st)
				if err != nil {
					t.Fatal(err)
				}
				got, err := k.Run(st)
				if err != nil {
					t.Fatalf("%s threads=%d %s: %v", src, threads, round, err)
				}
				if !value.Equal(got, want, 1e-9) {
					t.Fatalf("%s threads=%d %s:\nengine:      %s\ninterpreter: %s", src, threads, round, value.Format(got), value.Format(want))
				}
			}
			for r := 0; r < 3; r++ {
				check("repeat")
				if cl.groups != prepared {
					t.Fatalf("%s threads=%d: run %d grouped H again", src, threads, r)
				}
			}
			// A new key (smaller than every other) changes Keys.
			if err := h.Put([]int64{0, 0}, 0, 7); err != nil {
				t.Fatal(err)
			}
			check("after Put")
			if cl.groups == prepared {
				t.Fatalf("%s threads=%d: the view of the old keys was kept", src, threads)
			}
		}
	}
}

// TestLayOutHashMapDuplicate: a key stored twice is reported whether or
// not the entries are otherwise in key order.
func TestLayOutHashMapDuplicate(t *testing.T) {
	for _, keys := range [][]storage.HKey{{{0, 1}, {0, 1}}, {{2, 0}, {0, 1}, {2, 0}}} {
		h := &storage.HashMap{Elem: ir.Real, Arity: 2, Dims: []int64{3, 3}, Keys: keys, F: make([]float64, len(keys))}
		if _, err := layOutHashMap(h); err == nil {
			t.Fatalf("keys %v: no error", keys)
		}
	}
}
