package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// nestOpsRow is SpMV's row loop over A (CSR) with BODY as each entry's
// term; p is the entry, j its column.
func nestOpsRow(body string) string {
	return `sum(<i, _> in 0:A_len1) { @dense i -> sum(<p, j> in A_idx2(A_pos2(i):A_pos2(i + 1))) ` + body + ` }`
}

// TestNestDivModIf runs terms with int and real / and %, comparisons and
// if then else through the loop-nest IR's batches at 1 and 3 threads
// against the interpreter: the loop must run vectorized (not on the
// older paths) and, where nothing fails, without falling back to the
// closures.
func TestNestDivModIf(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	n, m := 200, 90
	a := randCSR(n, m, 40*n, rng) // rows of ~40 entries: batches, not lanes
	for _, tc := range []struct {
		name, body string
		xlen       int
		fallback   bool // some batches run through the closures
	}{
		{"int / and % by constants", `A_val(p) * x_val(j / 2) + j % 3`, m, false},
		{"negative dividends, powers of two", `x_val(j) * ((j - 45) / 8 + (j - 45) % 8 + (j - 45) / 4294967296 + (j - 45) % 4294967296)`, m, false},
		{"negative divisors", `x_val(j) * ((j - 45) / -7 + (j - 45) % -3 + (3 * j + 1) / -16)`, m, false},
		{"a divisor per lane", `x_val(j) * ((j - 45) / (j % 5 - 7) + (j * 7) % (j + 1))`, m, false},
		{"real /", `A_val(p) / (x_val(j) + 0.25) + j / 4.0 + x_val(j) / (j - 33)`, m, false},
		{"if on an int comparison", `if j % 2 == 0 then x_val(j) else A_val(p) * x_val(j / 2)`, m, false},
		{"if on and, or, not", `if j < 10 || j > 50 && !(j == 60) then 2.0 * x_val(j) else A_val(p)`, m, false},
		{"if on a real comparison", `if A_val(p) < 0.5 then A_val(p) else x_val(j % 17)`, m, false},
		{"int if", `x_val(j) * (if j != 3 then j / 3 else j % 7)`, m, false},
		{"sell's halves", `x_val(if p % 2 == 0 then (j * 4294967296 + j / 2) % 4294967296 else (j / 2 * 4294967296 + j) / 4294967296)`, m, false},
		// The branch not taken reads past x: the closures, which take
		// only one branch, run those batches.
		{"an if guarding a read", `if j < x_len1 then x_val(j) else A_val(p)`, m / 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.Store{}
			a.store(st, "A")
			vecStore(st, "x", tc.xlen, rng)
			plan := nestOpsRow(tc.body)
			e := parse(t, plan, st)
			vectorized(t, e, st)
			seen := events(func() { agree(t, e, st) })
			if (seen["fallback"] > 0) != tc.fallback {
				t.Errorf("fallback events %d, want some: %v", seen["fallback"], tc.fallback)
			}
		})
	}
}

// TestNestDivideByZero: an int / or % by zero inside a batch is the
// interpreter's error, at the operator's position, at 1 and 3 threads,
// and in rows of a few entries; a zero divisor in a
// branch not taken is no error.
func TestNestDivideByZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	for _, tc := range []struct {
		name, body, msg string
		nnz             int
		fails           bool
	}{
		{"/ in batches", `x_val(j) * (100 / (j - 33))`, "integer division by zero", 40, true},
		{"% in batches", `x_val(j) * (100 % (j - 33))`, "integer modulo by zero", 40, true},
		{"/ in short rows", `x_val(j) * (100 / (j - 33))`, "integer division by zero", 2, true},
		{"% in short rows", `x_val(j) * (100 % (j - 33))`, "integer modulo by zero", 2, true},
		{"a branch not taken", `if j == 33 then 1.0 else x_val(j) * (100 / (j - 33))`, "", 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := randCSR(120, 80, tc.nnz*120, rng)
			st := storage.Store{}
			a.store(st, "A")
			vecStore(st, "x", 80, rng)
			plan := nestOpsRow(tc.body)
			e := parse(t, plan, st)
			vectorized(t, e, st)
			agree(t, e, st)
			// The column of the operator in the plan's text: test.sdql:1:COL.
			op := "/ (j"
			if strings.Contains(tc.msg, "modulo") {
				op = "% (j"
			}
			pos := "test.sdql:1:" + strconv.Itoa(strings.Index(plan, op)+1) + ": "
			for _, threads := range []int{1, 3} {
				_, err := runEngine(e, st, threads)
				switch {
				case !tc.fails && err != nil:
					t.Fatalf("threads=%d: %v", threads, err)
				case !tc.fails:
				case err == nil:
					t.Fatalf("threads=%d: no error", threads)
				case !strings.Contains(err.Error(), pos+tc.msg):
					t.Errorf("threads=%d: %v; want %q", threads, err, pos+tc.msg)
				}
			}
		})
	}
}

// vectorized fails t unless e's inner loop runs in the IR's batches.
func vectorized(t *testing.T, e *ir.Expr, st storage.Store) {
	t.Helper()
	if ex := explainOf(t, e, st); !strings.Contains(ex, "vectorized batches") {
		t.Fatalf("%s: not vectorized:\n%s", ir.Format(e), ex)
	}
}

// TestSetSlice: a batch value's slice set in place (same array) or
// anew reads back as the slice given: its length, capacity and array.
func TestSetSlice(t *testing.T) {
	buf := make([]int64, 8, 16)
	other := make([]int64, 3)
	for _, c := range []struct {
		from, to []int64
	}{
		{nil, buf[:5]},   // anew
		{buf[:5], buf},   // same array, longer
		{buf, buf[:2:4]}, // same array, shorter capacity
		{buf[:2:4], buf}, // same array, capacity past the held one's
		{buf, other},     // another array
		{buf, nil},       // no slice
		{nil, nil},
	} {
		dst := c.from
		setSlice(&dst, c.to)
		if len(dst) != len(c.to) || cap(dst) != cap(c.to) || unsafe.SliceData(dst) != unsafe.SliceData(c.to) {
			t.Errorf("setSlice from len %d cap %d to len %d cap %d: got len %d cap %d (same array %v)",
				len(c.from), cap(c.from), len(c.to), cap(c.to), len(dst), cap(dst), unsafe.SliceData(dst) == unsafe.SliceData(c.to))
		}
	}
}
