package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// walksRunLayout reports whether the kernel of e walks runs through a run
// layout (runwalk.go).
func walksRunLayout(t *testing.T, e *ir.Expr, st storage.Store) bool {
	t.Helper()
	k, err := Compile(e, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return len(k.runs) > 0
}

// TestRunsCOOPlans: the optimized plans of the paper's kernels and TTV
// over a COO walk its runs (a 3-tensor's first two levels) through the
// run layout, and agree with the interpreter at 1 and 3 threads.
func TestRunsCOOPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ttv := `CREATE real ARRAY x(B_dim3);
CREATE TENSOR Q AS
  sum(<i, Bi> in B) sum(<j, Bij> in Bi) sum(<k, b> in Bij) { (i, j) -> b * x(k) };`
	for _, pc := range []paperCase{
		{"spmv", map[string][]int64{"A": {60, 50}}, map[string]string{"A": "coo"}},
		{"batax", map[string][]int64{"A": {60, 50}}, map[string]string{"A": "coo"}},
		{"ttm", map[string][]int64{"A": {10, 12, 14}, "B": {8, 14}}, map[string]string{"A": "coo", "B": "csc"}},
		{"mttkrp", map[string][]int64{"B": {10, 12, 14}, "C": {12, 8}, "D": {8, 14}}, map[string]string{"B": "coo", "C": "dense", "D": "dense"}},
		{"ttv", map[string][]int64{"B": {10, 12, 14}}, map[string]string{"B": "coo"}},
	} {
		t.Run(pc.name, func(t *testing.T) {
			var naive *ir.Expr
			var st storage.Store
			if pc.name == "ttv" {
				naive, st = userProgram(t, rng, ttv, pc.tensors["B"], "coo")
			} else {
				naive, st = paperProgram(t, pc.name, pc.tensors, pc.formats, 300, rng)
			}
			res, err := opt.Optimize(naive, st, planLimits)
			if err != nil {
				t.Fatal(err)
			}
			if !walksRunLayout(t, res.Plan, st) {
				t.Errorf("the plan walks no runs:\n%s", ir.Format(res.Plan))
			}
			agree(t, res.Plan, st)
		})
	}
}

// userProgram composes program src with tensor B, random, stored in
// format, and x, a random vector as long as B's last dimension.
func userProgram(t *testing.T, rng *rand.Rand, src string, dims []int64, format string) (*ir.Expr, storage.Store) {
	f, err := storage.ParseFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Build("B", randCOO(dims, 300, rng), f)
	if err != nil {
		t.Fatal(err)
	}
	st["x"] = storage.RealArray(randVec(int(dims[len(dims)-1]), rng))
	prog, err := sdql.Compile(sdql.Source{Name: "B.sdql", Text: []byte(storage.Mapping("B", f, len(dims), ir.Real))},
		sdql.Source{Name: "p.sdql", Text: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	return prog.Compose(""), st
}

// userPlan composes program src (named name) with a user's storage
// mapping and optimizes it for st, returning the naive and optimized
// plans.
func userPlan(t *testing.T, mappingName, mapping, name, src string, st storage.Store) (*ir.Expr, *ir.Expr) {
	t.Helper()
	prog, err := sdql.Compile(sdql.Source{Name: mappingName + ".sdql", Text: []byte(mapping)}, sdql.Source{Name: name + ".sdql", Text: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	naive := prog.Compose("")
	res, err := opt.Optimize(naive, st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	return naive, res.Plan
}

// agreeNaive checks the optimized plan against the interpreter's value of
// the naive one, and against the interpreter at 1 and 3 threads.
func agreeNaive(t *testing.T, naive, plan *ir.Expr, st storage.Store) {
	t.Helper()
	want, err := eval.Eval(naive, st)
	if err != nil {
		t.Fatal(err)
	}
	agreeValue(t, plan, st, want)
	agree(t, plan, st)
}

// cooUser is a user's COO mapping written entry by entry.
const cooUser = `CREATE int SCALAR A_dim1;
CREATE int SCALAR A_dim2;
CREATE int SCALAR A_nnz;
CREATE int ARRAY A_row(A_nnz);
CREATE int ARRAY A_col(A_nnz);
CREATE real ARRAY A_val(A_nnz);
CREATE TENSOR A AS
  sum(<p, i> in A_row(0:A_nnz))
    { i -> { A_col(p) -> A_val(p) } };`

// sortedEntries lists the positions of matrix c's entries sorted by row,
// then column, each coordinate pair once, as a COO stores them: a row's
// columns never repeat, so they are not walked as runs (rule RN1w).
func sortedEntries(c *storage.COO) []int {
	order := make([]int, len(c.Vals))
	for p := range order {
		order[p] = p
	}
	slices.SortFunc(order, func(a, b int) int {
		if d := c.Coords[0][a] - c.Coords[0][b]; d != 0 {
			return int(d)
		}
		return int(c.Coords[1][a] - c.Coords[1][b])
	})
	return slices.CompactFunc(order, func(a, b int) bool {
		return c.Coords[0][a] == c.Coords[0][b] && c.Coords[1][a] == c.Coords[1][b]
	})
}

// TestRunsUserCOO: SpMV and BATAX over a user's COO mapping walk the rows
// as runs when the row coordinates are sorted (the plan the built-in coo
// gets), and add every entry into its row when they are not; both agree
// with the interpreter at 1 and 3 threads.
func TestRunsUserCOO(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	c := randCOO([]int64{50, 40}, 400, rng)
	order := sortedEntries(c)
	x := storage.RealArray(randVec(40, rng))
	for _, sorted := range []bool{true, false} {
		if !sorted {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		row, col, val := make([]int64, len(order)), make([]int64, len(order)), make([]float64, len(order))
		for q, p := range order {
			row[q], col[q], val[q] = c.Coords[0][p], c.Coords[1][p], c.Vals[p]
		}
		st := storage.Store{"A_dim1": storage.IntScalar(50), "A_dim2": storage.IntScalar(40), "A_nnz": storage.IntScalar(int64(len(row))),
			"A_row": storage.IntArray(row), "A_col": storage.IntArray(col), "A_val": storage.RealArray(val), "x": x, "beta": storage.RealScalar(0.5)}
		for _, name := range []string{"spmv", "batax"} {
			src := `CREATE real ARRAY x(A_dim2);
CREATE TENSOR y AS sum(<(i, j), a> in A) { i -> a * x(j) };`
			if name == "batax" {
				src = `CREATE real ARRAY x(A_dim2);
CREATE real SCALAR beta;
CREATE TENSOR y AS sum(<i, r> in A) sum(<j, a> in r) { j -> beta * a * sum(<k, b> in r) b * x(k) };`
			}
			naive, plan := userPlan(t, "coo_user", cooUser, name, src, st)
			runs := strings.Contains(ir.Format(plan), "runs(A_row")
			if runs != sorted || walksRunLayout(t, plan, st) != sorted {
				t.Errorf("%s, rows sorted %v: the plan walks runs %v:\n%s", name, sorted, runs, ir.Format(plan))
			}
			// A row's positions, read as columns, are walked as the
			// segment of A_col, as a compressed level's are.
			if walked, _, _ := runWalks(plan, SchemaOf(st)); sorted && !strings.Contains(ir.Format(walked), "in A_col(A_row·rs") {
				t.Errorf("%s: the rows' columns are not walked as segments:\n%s", name, ir.Format(walked))
			}
			agreeNaive(t, naive, plan, st)
		}
	}
}

// TestRunsIterator: walks of runs the run layout does not take (a window
// that starts inside a run, unsorted values, a window read from a loop's
// variable) run as a loop over runs, found while walking, and agree with
// the interpreter at 1 and 3 threads.
func TestRunsIterator(t *testing.T) {
	st := storage.Store{
		"G": storage.IntArray([]int64{0, 0, 2, 2, 2, 5, 1, 1, 3}),
		"V": storage.RealArray([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}),
		"n": storage.IntScalar(9),
	}
	for _, s := range []string{
		// runs of unsorted values: 1 appears in one run, 2 in one, ...
		"sum(<p, i> in runs(G(0:n))) { @dense i -> sum(<q, _> in p:runend(G, p, n)) V(q) }",
		// a window that starts inside a run, from a loop's variable
		"sum(<k, _> in 0:4) sum(<p, i> in runs(G(k:n))) { @dense i -> sum(<q, _> in p:runend(G, p, n)) V(q) * k }",
		// a window that ends inside a run: runend stops at its end
		"sum(<p, i> in runs(G(0:4))) { @dense i -> sum(<q, _> in p:runend(G, p, 4)) V(q) }",
		// runend read with another bound than the walk's
		"sum(<p, i> in runs(G(0:n))) { @dense i -> sum(<q, _> in p:runend(G, p, 3)) V(q) }",
		// runs as a scalar sum: how many runs
		"sum(<p, i> in runs(G(1:n))) 1",
	} {
		agree(t, parse(t, s, st), st)
	}
}

// TestRunLayoutPrepared: Prepare finds a COO's run layout, so no run
// finds it again, the first included; a run without Prepare finds it
// once, and a store with other arrays has its own found.
func TestRunLayoutPrepared(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	ttv := `CREATE real ARRAY x(B_dim3);
CREATE TENSOR Q AS
  sum(<i, Bi> in B) sum(<j, Bij> in Bi) sum(<k, b> in Bij) { (i, j) -> b * x(k) };`
	naive, st := userProgram(t, rng, ttv, []int64{10, 12, 14}, "coo")
	res, err := opt.Optimize(naive, st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	builds := func(k *Kernel) []int {
		var n []int
		for _, r := range k.runs {
			n = append(n, r.builds)
		}
		return n
	}
	for _, prepare := range []bool{true, false} {
		k, err := Compile(res.Plan, SchemaOf(st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(k.runs) != 2 {
			t.Fatalf("the plan walks %d levels of runs, not 2:\n%s", len(k.runs), ir.Format(res.Plan))
		}
		if prepare {
			k.Prepare(st)
			if got := builds(k); !slices.Equal(got, []int{1, 1}) {
				t.Fatalf("Prepare found the levels' layouts %v times, not once each", got)
			}
		}
		for run := range 2 {
			v, err := k.Run(st)
			if err != nil {
				t.Fatal(err)
			}
			agreeValue(t, naive, st, v)
			if got := builds(k); !slices.Equal(got, []int{1, 1}) {
				t.Fatalf("prepared %v, after run %d: the levels' layouts were found %v times, not once each", prepare, run+1, got)
			}
		}
	}
	// Other arrays (a copy of the coordinates) have their layout found.
	k, err := Compile(res.Plan, SchemaOf(st), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	k.Prepare(st)
	st2 := maps.Clone(st)
	for name, o := range st {
		if a, ok := o.(*storage.Array); ok && a.Elem == ir.Int {
			st2[name] = storage.IntArray(slices.Clone(a.I))
		}
	}
	v, err := k.Run(st2)
	if err != nil {
		t.Fatal(err)
	}
	agreeValue(t, naive, st2, v)
	if got := builds(k); !slices.Equal(got, []int{2, 2}) {
		t.Fatalf("after a run on other arrays the levels' layouts were found %v times, not twice each", got)
	}
}

// TestRunEndOutside: runend at a position before A's start or past its
// end, below the bound, fails as in the interpreter; at or past the
// bound it is the position, and a bound past A's end stops the run at
// A's end.
func TestRunEndOutside(t *testing.T) {
	st := storage.Store{
		"G": storage.IntArray([]int64{0, 0, 2, 2, 2, 5, 1, 1, 3}),
		"V": storage.RealArray([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}),
		"n": storage.IntScalar(9),
	}
	for _, c := range []struct{ src, fails string }{
		{"runend(G, n + 3, n + 11)", "runend: position 12 is outside G"},
		{"runend(G, n, n + 1)", "runend: position 9 is outside G"},
		{"runend(G, n - 10, n)", "runend: position -1 is outside G"},
		{"sum(<k, _> in 0:n + 2) { @dense k -> runend(G, k, n + 2) }", "runend: position 9 is outside G"},
		{"runend(G, n + 3, n)", ""},
		{"runend(G, n - 2, n + 5)", ""},
		{"sum(<k, _> in 0:n) { @dense k -> runend(G, k, n + 2) }", ""},
	} {
		e := parse(t, c.src, st)
		agree(t, e, st)
		if c.fails == "" {
			continue
		}
		_, werr := eval.Eval(e, st)
		if werr == nil || !strings.Contains(werr.Error(), c.fails) {
			t.Fatalf("%s: the interpreter's error is %v", c.src, werr)
		}
		for _, threads := range []int{1, 3} {
			if _, err := runEngine(e, st, threads); err == nil || !strings.Contains(err.Error(), c.fails) {
				t.Errorf("%s, threads=%d: the engine's error is %v, the interpreter's %v", c.src, threads, err, werr)
			}
		}
	}
}

// coo3User is a user's mapping of a 3-tensor's COO written entry by entry.
const coo3User = `CREATE int SCALAR T_dim1;
CREATE int SCALAR T_dim2;
CREATE int SCALAR T_dim3;
CREATE int SCALAR T_nnz;
CREATE int ARRAY T_i(T_nnz);
CREATE int ARRAY T_j(T_nnz);
CREATE int ARRAY T_k(T_nnz);
CREATE real ARRAY T_val(T_nnz);
CREATE TENSOR T AS
  sum(<p, i> in T_i(0:T_nnz))
    { i -> { T_j(p) -> { T_k(p) -> T_val(p) } } };`

// TestRunsUserCOO3: TTV and a contraction of two modes over a user's 3-tensor COO mapping walk
// both leading levels as runs through the run layout when the entries are
// sorted (rules RN1 and RN1w), the first only when the second coordinates
// are not sorted within each first one, and neither when the first are
// not sorted; all agree with the interpreter at 1 and 3 threads.
func TestRunsUserCOO3(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	dims := []int64{12, 10, 14}
	c := randCOO(dims, 400, rng)
	order := make([]int, len(c.Vals))
	for p := range order {
		order[p] = p
	}
	slices.SortFunc(order, func(a, b int) int {
		for l := range c.Coords {
			if d := c.Coords[l][a] - c.Coords[l][b]; d != 0 {
				return int(d)
			}
		}
		return 0
	})
	byRow := slices.Clone(order) // sorted by i only, j shuffled within each i
	rng.Shuffle(len(byRow), func(a, b int) { byRow[a], byRow[b] = byRow[b], byRow[a] })
	slices.SortStableFunc(byRow, func(a, b int) int { return int(c.Coords[0][a] - c.Coords[0][b]) })
	shuffled := slices.Clone(order)
	rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
	progs := map[string]string{
		"ttv": `CREATE real ARRAY x(T_dim3);
CREATE TENSOR Q AS sum(<(i, j, k), t> in T) { (i, j) -> t * x(k) };`,
		"ttvv": `CREATE real ARRAY x(T_dim3);
CREATE real ARRAY y(T_dim2);
CREATE TENSOR Q AS sum(<(i, j, k), t> in T) { i -> t * y(j) * x(k) };`,
	}
	for _, tc := range []struct {
		name   string
		order  []int
		levels int // levels walked as runs
	}{{"sorted", order, 2}, {"rows sorted", byRow, 1}, {"shuffled", shuffled, 0}} {
		n := len(tc.order)
		ci, cj, ck, val := make([]int64, n), make([]int64, n), make([]int64, n), make([]float64, n)
		for q, p := range tc.order {
			ci[q], cj[q], ck[q], val[q] = c.Coords[0][p], c.Coords[1][p], c.Coords[2][p], c.Vals[p]
		}
		st := storage.Store{"T_dim1": storage.IntScalar(dims[0]), "T_dim2": storage.IntScalar(dims[1]), "T_dim3": storage.IntScalar(dims[2]),
			"T_nnz": storage.IntScalar(int64(n)), "T_i": storage.IntArray(ci), "T_j": storage.IntArray(cj), "T_k": storage.IntArray(ck),
			"T_val": storage.RealArray(val), "x": storage.RealArray(randVec(int(dims[2]), rng)),
			"y": storage.RealArray(randVec(int(dims[1]), rng))}
		for _, name := range []string{"ttv", "ttvv"} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				naive, plan := userPlan(t, "coo3_user", coo3User, name, progs[name], st)
				k, err := Compile(plan, SchemaOf(st), Options{Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				if len(k.runs) != tc.levels {
					t.Errorf("the plan walks %d levels as runs, not %d:\n%s", len(k.runs), tc.levels, ir.Format(plan))
				}
				agreeNaive(t, naive, plan, st)
			})
		}
	}
}

// TestRunsMerged: MMM with B a COO merges the runs of B's rows (a sorted
// vector of distinct coordinates) with a row of A, as it merges a dcsr's
// rows, and the merge walks them through the run layout; the result
// agrees with the interpreter at 1 and 3 threads.
func TestRunsMerged(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	naive, st := paperProgram(t, "mmm", map[string][]int64{"A": {60, 50}, "B": {50, 40}}, map[string]string{"A": "csr", "B": "coo"}, 300, rng)
	res, err := opt.Optimize(naive, st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	merged := false
	ir.Walk(res.Plan, func(n *ir.Expr) bool {
		if n.Op == ir.OpMerge {
			for _, a := range n.Args[:2] {
				merged = merged || a.Op == ir.OpCall && a.Name == "runs"
			}
		}
		return true
	})
	if !merged {
		t.Errorf("the plan merges no runs:\n%s", ir.Format(res.Plan))
	}
	if !walksRunLayout(t, res.Plan, st) {
		t.Errorf("the plan walks no runs:\n%s", ir.Format(res.Plan))
	}
	agree(t, res.Plan, st)
}

// TestRunsMergedClosedWindows: a COO's runs merge only where the run
// layout finds them once, before the loops: B's rows in a user's mapping
// whose window ends at B_nnz - B_skip (no constant, global or global
// read at a constant) are walked, not merged, and the plan runs and
// agrees with the interpreter (a merge with runs the engine could not
// rewrite would not compile).
func TestRunsMergedClosedWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	f, err := storage.ParseFormat("csr")
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Build("A", randCOO([]int64{30, 20}, 120, rng), f)
	if err != nil {
		t.Fatal(err)
	}
	b := randCOO([]int64{20, 16}, 80, rng)
	order := sortedEntries(b)
	row, col, val := make([]int64, len(order)), make([]int64, len(order)), make([]float64, len(order))
	for q, p := range order {
		row[q], col[q], val[q] = b.Coords[0][p], b.Coords[1][p], b.Vals[p]
	}
	st["B_dim1"], st["B_dim2"] = storage.IntScalar(20), storage.IntScalar(16)
	st["B_nnz"], st["B_skip"] = storage.IntScalar(int64(len(row))), storage.IntScalar(0)
	st["B_row"], st["B_col"], st["B_val"] = storage.IntArray(row), storage.IntArray(col), storage.RealArray(val)
	mapping := storage.Mapping("A", f, 2, ir.Real) + "\nCREATE int SCALAR B_skip;\n" +
		strings.NewReplacer("A_", "B_", "TENSOR A", "TENSOR B", "0:A_nnz", "0:B_nnz - B_skip").Replace(cooUser)
	naive, plan := userPlan(t, "ab", mapping, "mmm", `CREATE TENSOR Q AS sum(<(i, k), a> in A, <(k, j), b> in B) { (i, j) -> a * b };`, st)
	agreeNaive(t, naive, plan, st)
}
