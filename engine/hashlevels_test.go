package engine

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// hashStore holds a real hash map H of arity 2 (n x m), an int one Hi
// of the same keys, a 3-level real one T (n x m x 5), one V of arity 1
// (below), a vector x of m
// entries and the CSR arrays of an n x n matrix A. The entries go in
// shuffled when shuffle is set (the layout then sorts them) and in key
// order otherwise (the layout reads the map's own value slices); some
// values are explicit zeros, which a view of stored data lists.
func hashStore(t *testing.T, n, m int, shuffle, long bool, rng *rand.Rand) storage.Store {
	t.Helper()
	type ent struct {
		k []int64
		v float64
	}
	var e2, e3 []ent
	for i := range n {
		if rng.IntN(4) == 0 {
			continue // an empty row: its key is absent
		}
		for j := range m {
			if rng.IntN(3) != 0 {
				continue
			}
			v := float64(rng.IntN(7) - 3)
			e2 = append(e2, ent{[]int64{int64(i), int64(j)}, v})
			for k := range 5 {
				if rng.IntN(2) == 0 {
					e3 = append(e3, ent{[]int64{int64(i), int64(j), int64(k)}, v + float64(k)})
				}
			}
		}
	}
	if shuffle {
		rng.Shuffle(len(e2), func(a, b int) { e2[a], e2[b] = e2[b], e2[a] })
		rng.Shuffle(len(e3), func(a, b int) { e3[a], e3[b] = e3[b], e3[a] })
	}
	h := storage.NewHashMap(ir.Real, []int64{int64(n), int64(m)})
	hi := storage.NewHashMap(ir.Int, []int64{int64(n), int64(m)})
	tt := storage.NewHashMap(ir.Real, []int64{int64(n), int64(m), 5})
	for _, e := range e2 {
		if err := h.Put(e.k, 0, e.v); err != nil {
			t.Fatal(err)
		}
		if err := hi.Put(e.k, int64(e.v), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range e3 {
		if err := tt.Put(e.k, 0, e.v); err != nil {
			t.Fatal(err)
		}
	}
	// V, of arity 1, has keys past x's end when long is set.
	v := storage.NewHashMap(ir.Real, []int64{int64(m + 3)})
	for _, j := range rng.Perm(m + 3) {
		if j < m || long {
			if err := v.Put([]int64{int64(j)}, 0, float64(j%4)); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := storage.Store{"H": h, "Hi": hi, "T": tt, "V": v, "x": storage.RealArray(randVec(m, rng))}
	csr(st, "A", n, n, 4*n, rng)
	return st
}

// levelWalks are walks of H, Hi and T (hashStore's maps, or tries of
// their entries) in the forms the optimizer writes for such inputs.
var levelWalks = []string{
	// SpMV over H.
	`sum(<i, r> in H) { @dense i -> sum(<j, v> in r) v * x(j) }`,
	// A scalar sum of every entry, int-valued.
	`sum(<i, r> in Hi) sum(<j, v> in r) v * i`,
	// Rows of a nested result scattered by the map's keys.
	`sum(<i, r> in H) { @dense i -> sum(<j, v> in r) { @dense j -> v * x(j) } }`,
	// MMM with B hashed: a row of H looked up per entry of A.
	`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) let t = A_val(p) in sum(<j, v> in H(k)) { @dense j -> v * t } }`,
	// SumMMM's row sums of a hashed B, keys past the map's and negative.
	`sum(<k, _> in -3:A_len1 + 40) { @dense k + 3 -> sum(<_, v> in H(k)) v }`,
	// TTV over three levels.
	`sum(<i, r> in T) { @dense i -> sum(<j, s> in r) { @dense j -> sum(<k, v> in s) v * x(k) } }`,
	// A row looked up inside the walk of another.
	`sum(<i, r> in H) sum(<j, v> in r) v * Hi(i)(j + 1)`,
}

// TestHashLevelsInNest runs plans over physical hash maps, the forms the
// optimizer writes for hash-stored inputs (SpMV, a row scattered into a
// nested result, MMM's rows of B looked up by key, TTV's three levels,
// int values, keys looked up outside the map), on maps stored in and out
// of key order: each agrees with the interpreter at 1 and 3 threads, and
// the hash map is walked through its level layout (loops of the nest
// over its rows, or over its arrays as over a sparse format's), not as a
// nested dictionary by the closure paths.
func TestHashLevelsInNest(t *testing.T) {
	mapSource := regexp.MustCompile(` in (H|Hi|T|r|s)[()]`)
	// A singleton of a dictionary value in a leaf loop is not the nest's
	// (hash map or not): checked against the interpreter only.
	// Nor is a read of a hash map at keys that change within the loop
	// before the last.
	const (
		transposed     = `sum(<i, r> in H) sum(<j, v> in r) { j -> { i -> v * 2.0 } }`
		transposedRead = `sum(<i, r> in H) sum(<j, v> in r) v * H(j)(i)`
	)
	plans := append([]string{
		// One level: a read of x at each key (past x's end when V is
		// long: both report it).
		`sum(<i, v> in V) v * x(i)`,
		`sum(<i, v> in V) { @dense i -> v * 2.0 }`,
		// A row also looked up (so not rewritten into segments): its
		// entries read in batches from the layout's slices.
		`sum(<i, r> in H) { @dense i -> sum(<j, v> in r) v * x(j) * r(0) }`,
		`sum(<i, r> in Hi) { @dense i -> sum(<j, v> in r) v * r(1) }`,
		transposed, transposedRead,
	}, levelWalks...)
	rng := rand.New(rand.NewPCG(29, 5))
	for _, shuffle := range []bool{false, true} {
		for _, size := range [][2]int{{1, 1}, {7, 5}, {60, 40}, {4, 1200}} {
			st := hashStore(t, size[0], size[1], shuffle, size[0] == 7, rng)
			for _, src := range plans {
				e := parse(t, src, st)
				agree(t, e, st)
				if src == transposed || src == transposedRead {
					continue
				}
				ex := explainOf(t, e, st)
				// Walked as a nested dictionary by the closure paths, a
				// loop would name the map or its row as its source.
				walked := !strings.Contains(ex, "iterator: hash map row") && !strings.Contains(ex, "·key")
				for _, line := range strings.Split(ex, "\n") {
					if strings.HasPrefix(line, "older path") && mapSource.MatchString(line) {
						walked = true
					}
				}
				if walked {
					t.Fatalf("%s: the hash map is not walked through its layout:\n%s", src, ex)
				}
			}
		}
	}
}

// TestHashRowsShared: a walk of a hash map writing the entry of each of
// its first-level keys splits across workers into one shared result, as a
// loop over a range of rows does, and agrees with the interpreter.
func TestHashRowsShared(t *testing.T) {
	st := hashStore(t, 300, 40, true, false, rand.New(rand.NewPCG(3, 9)))
	e := parse(t, `sum(<i, r> in H) { @dense i -> sum(<j, v> in r) v * x(j) }`, st)
	agree(t, e, st)
	k, err := Compile(e, SchemaOf(st), Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	var ex strings.Builder
	k.Explain(&ex)
	if !strings.Contains(ex.String(), "writing disjoint entries of one shared result") {
		t.Fatalf("the walk is not split over one shared result:\n%s", ex.String())
	}
	// Negative keys: the result is not reserved up front, and the
	// workers' private results are merged.
	n := storage.NewHashMap(ir.Real, []int64{8, 40})
	for i := int64(-3); i < 5; i++ {
		if err := n.Put([]int64{i, i + 3}, 0, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	st["H"] = n
	agree(t, e, st)
}

// TestHashLevelsLayout checks the layout of a map stored out of order
// against its entries: the rows of each level, their keys and values,
// and lookups at present, absent, negative and far keys.
func TestHashLevelsLayout(t *testing.T) {
	h := storage.NewHashMap(ir.Real, []int64{10, 10})
	for _, e := range [][3]int64{{5, 2, 52}, {0, 9, 9}, {5, 0, 50}, {2, 2, 22}, {0, 1, 1}} {
		if err := h.Put(e[:2], 0, float64(e[2])); err != nil {
			t.Fatal(err)
		}
	}
	var c cell
	v, err := c.hashView(h)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.keySlice(); len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 5 {
		t.Fatalf("level 0 keys %v, want [0 2 5]", got)
	}
	want := map[int64][][2]int64{0: {{1, 1}, {9, 9}}, 2: {{2, 22}}, 5: {{0, 50}, {2, 52}}}
	for i, row := range want {
		r, ok := v.getDict(i).(*hashRow)
		if !ok || r.size() != len(row) {
			t.Fatalf("row %d: %v", i, v.getDict(i))
		}
		for p, kv := range row {
			if r.keyAt(p) != kv[0] || r.realAt(p) != float64(kv[1]) {
				t.Fatalf("row %d entry %d: %d -> %g, want %v", i, p, r.keyAt(p), r.realAt(p), kv)
			}
			if got, _ := r.getReal(kv[0]); got != float64(kv[1]) {
				t.Fatalf("row %d lookup %d: %g", i, kv[0], got)
			}
		}
		if listed(r, 3) {
			t.Fatalf("row %d has key 3", i)
		}
	}
	for _, k := range []int64{-1, 1, 3, 9, 1 << 40} {
		if listed(v, k) || v.getDict(k).size() != 0 {
			t.Fatalf("key %d found", k)
		}
	}
	// The values are read again at every bind: a change in place shows.
	h.F[0] = 7
	if v, err = c.hashView(h); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.getDict(5).getReal(2); got != 7 {
		t.Fatalf("H(5)(2) = %g after the change, want 7", got)
	}
}

// hashOf stores the entries of CSR matrix p of st as a hash map name.
func hashOf(t testing.TB, st storage.Store, p, name string) {
	t.Helper()
	pos, idx, val := st[p+"_pos2"].(*storage.Array).I, st[p+"_idx2"].(*storage.Array).I, st[p+"_val"].(*storage.Array).F
	n, m := st[p+"_len1"].(*storage.Scalar).I, st[p+"_dim2"].(*storage.Scalar).I
	h := storage.NewHashMap(ir.Real, []int64{n, m})
	for i := range n {
		for q := pos[i]; q < pos[i+1]; q++ {
			if err := h.Put([]int64{i, idx[q]}, 0, val[q]); err != nil {
				t.Fatal(err)
			}
		}
	}
	st[name] = h
}

// BenchmarkHashInputs runs the optimizer's plans over a hash-stored
// matrix beside the same plans over the matrix in CSR, the same entries
// (a 4884-row matrix of 60 entries a row, bcsstk16's shape; B 4884 x 250
// at density 1/32, the variants experiment's): SpMV walks A, SumMMM's
// row sums and MMM look rows of B up by key. One thread.
//
//	go test ./engine -run '^$' -bench HashInputs -count 5
func BenchmarkHashInputs(b *testing.B) {
	rng := rand.New(rand.NewPCG(48, 84))
	st := storage.Store{}
	csr(st, "A", 4884, 4884, 4884*60, rng)
	csr(st, "B", 4884, 250, 4884*250/32, rng)
	hashOf(b, st, "A", "Ah")
	hashOf(b, st, "B", "Bh")
	st["x"] = storage.RealArray(randVec(4884, rng))
	for _, c := range []struct{ name, plan string }{
		{"spmv/csr", `sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) A_val(p) * x(j) }`},
		{"spmv/hash", `sum(<i, r> in Ah) { @dense i -> sum(<j, v> in r) v * x(j) }`},
		{"rowsum/csr", `sum(<k, _> in 0:4884) { @dense k -> sum(<p, _> in B_idx2(B_pos2(k):B_pos2(k + 1))) B_val(p) }`},
		{"rowsum/hash", `sum(<k, _> in 0:4884) { @dense k -> sum(<_, v> in Bh(k)) v }`},
		{"mmm/csr", `sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) let t = A_val(p) in sum(<q, j> in B_idx2(B_pos2(k):B_pos2(k + 1))) { @dense j -> B_val(q) * t } }`},
		{"mmm/hash", `sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) let t = A_val(p) in sum(<j, v> in Bh(k)) { @dense j -> v * t } }`},
	} {
		e := parse(b, c.plan, st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		k.Prepare(st)
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := k.Exec(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHashRowLookedUp: a row of a hash map looked up by key (MMM's and
// SumMMM's rows of a hashed B, a row of a 3-level map walked two levels
// down, a row found by two keys) runs as a segment of the layout's arrays,
// as a CSR row does, not as a hash map row: by the table of every key's
// bounds (·at) where the first level's keys are dense, else by a probe
// for the row's slot (·row); keys missing, negative, out of range and far
// apart (no position table) give the interpreter's empty row, on maps
// stored in and out of key order, at 1 and 3 threads.
func TestHashRowLookedUp(t *testing.T) {
	plans := []string{
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, k> in A_idx2(A_pos2(i):A_pos2(i + 1))) let t = A_val(p) in sum(<j, v> in H(k)) { @dense j -> v * t } }`,
		`sum(<k, _> in -3:A_len1 + 40) { @dense k + 3 -> sum(<_, v> in H(k)) v }`,
		`sum(<i, _> in -2:A_len1 + 3) { @dense i + 2 -> sum(<j, s> in T(i)) sum(<k, v> in s) v * x(k) }`,
		`sum(<i, r> in H) sum(<j, v> in r) sum(<k, w> in T(i)(j - 1)) v * w * k`,
		`sum(<i, _> in -1:A_len1 + 1) sum(<j, v> in Hi(i)) v * j`,
		`sum(<i, _> in 0:A_len1) { @dense i -> sum(<j, v> in F(i * 1000000007 - 5)) { @dense j -> v } }`,
	}
	rng := rand.New(rand.NewPCG(41, 7))
	for _, shuffle := range []bool{false, true} {
		for _, size := range [][2]int{{1, 1}, {7, 5}, {60, 40}} {
			st := hashStore(t, size[0], size[1], shuffle, false, rng)
			// F: rows at keys far apart and negative, too sparse for a
			// position table.
			f := storage.NewHashMap(ir.Real, []int64{1 << 50, int64(size[1])})
			for _, i := range rng.Perm(size[0]) {
				for j := range size[1] {
					if rng.IntN(2) == 0 {
						if err := f.Put([]int64{int64(i)*1000000007 - 5, int64(j)}, 0, float64(i+j)); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			st["F"] = f
			for _, src := range plans {
				e := parse(t, src, st)
				agree(t, e, st)
				ex := explainOf(t, e, st)
				if strings.Contains(ex, "iterator: hash map row") || !strings.Contains(ex, "·row") {
					t.Fatalf("%s: the looked-up row is not a segment of the layout:\n%s", src, ex)
				}
				if strings.Contains(src, "T(i)(j - 1)") {
					continue // two keys: a probe only
				}
				primary, _, _ := strings.Cut(ex, "with a hash map whose")
				if !strings.Contains(primary, "·at2(") {
					t.Fatalf("%s: a row looked up by one key does not read the table of the keys' bounds:\n%s", src, ex)
				}
			}
		}
	}
}

// trieOf stores the entries of hash map h as a trie of its arity.
func trieOf(t *testing.T, h *storage.HashMap) *storage.Trie {
	t.Helper()
	tr := storage.NewTrie(h.Elem, h.Dims)
	for q := range h.Keys {
		var i int64
		var f float64
		if h.Elem == ir.Real {
			f = h.F[q]
		} else {
			i = h.I[q]
		}
		if err := tr.Put(h.Keys[q][:h.Arity], i, f); err != nil {
			t.Fatal(err)
		}
	}
	tr.Finish()
	return tr
}

// TestTrieLevelsInNest: walks of a trie, whole or from a row looked up
// by key, run over the level layout a hash map of its entries has (the
// explain names its arrays) and agree with the interpreter at 1 and 3
// threads; values changed in place are read again at the next run, and a
// new trie of other entries is laid out again.
func TestTrieLevelsInNest(t *testing.T) {
	plans := levelWalks
	rng := rand.New(rand.NewPCG(31, 7))
	for _, size := range [][2]int{{1, 1}, {7, 5}, {60, 40}} {
		st := hashStore(t, size[0], size[1], true, false, rng)
		for _, name := range []string{"H", "Hi", "T"} {
			st[name] = trieOf(t, st[name].(*storage.HashMap))
		}
		for _, src := range plans {
			e := parse(t, src, st)
			agree(t, e, st)
			if ex := explainOf(t, e, st); !strings.Contains(ex, "·key") {
				t.Fatalf("%s: the trie is not walked through its level layout:\n%s", src, ex)
			}
		}
		// One kernel, run again after the values change in place and
		// after the trie is replaced by one of other entries.
		e := parse(t, plans[0], st)
		k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string) {
			t.Helper()
			got, err := k.Exec(st)
			if err != nil {
				t.Fatal(err)
			}
			want, err := eval.Eval(e, st)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got.Value(), want, 1e-9) {
				t.Fatalf("%s: engine %s, interpreter %s", what, value.Format(got.Value()), value.Format(want))
			}
		}
		check("first run")
		tr := st["H"].(*storage.Trie)
		for _, ch := range tr.Root.Children {
			for q := range ch.F {
				ch.F[q] = float64(rng.IntN(9) - 4)
			}
		}
		check("values changed in place")
		st["H"] = trieOf(t, hashStore(t, size[0]+3, size[1], false, false, rng)["H"].(*storage.HashMap))
		check("another trie")
	}
}
