package harness

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/storel/storel/storage"
)

// TestLayoutLoopsAgreeWithTheReferenceInterpreter runs every layout loop
// on the variants experiment's cases over tiny stand-ins for the real
// data (rows of unequal lengths, so that ELL pads; a sparse B with empty
// columns, so that DCSC lists fewer columns than CSC; fibers of several
// entries, so that COO loops find where fibers end) and checks its
// answer against the reference interpreter's for the kernel's first
// form, as the experiment checks the kernel's loop.
func TestLayoutLoopsAgreeWithTheReferenceInterpreter(t *testing.T) {
	dir := t.TempDir()
	writeStandIns(t, dir)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Quick: true, Repo: repo, DataDir: dir, OutDir: dir, TmpDir: filepath.Join(dir, "tmp"), FactorDensity: 0.05})
	n := 0
	for _, k := range variantKernels {
		keys := slices.Sorted(maps.Keys(layoutLoops[k.kernel]))
		for _, d := range h.variantInputs() {
			if len(keys) == 0 || d.order() != k.order {
				continue
			}
			c, _, err := h.variantInput(&k, d)
			if err != nil {
				t.Fatal(err)
			}
			if b, ok := c.files["B"]; ok && k.order == 2 {
				if m, err := readTensor(b, nil); err != nil || len(cscOf(m, true).ids) == int(m.Dims[1]) {
					t.Fatalf("%s: B should have an empty column (%v)", k.kernel, err)
				}
			}
			ref := filepath.Join(dir, k.kernel+"-oracle.tns")
			args := append([]string{h.variantProgram(k.forms[0].program)}, variantInputArgs(&k.forms[0], c)...)
			if err := Oracle(append(args, "--output", ref)); err != nil {
				t.Fatal(err)
			}
			want, err := ReadTNSAnswer(ref)
			if err != nil || len(want.Entries) == 0 {
				t.Fatalf("%s: the reference answer %v (%v)", k.kernel, want, err)
			}
			for _, key := range keys {
				out := filepath.Join(dir, fmt.Sprintf("%s-%s.tns", k.kernel, key))
				if err := HandLoop(h.handLoopArgs(k.kernel, key, c, out)[2:]); err != nil {
					t.Errorf("%s %s: %v", k.kernel, key, err)
					continue
				}
				got, err := ReadTNSAnswer(out)
				if err == nil {
					err = Compare(want, got, DefaultTolerance)
				}
				if err != nil {
					t.Errorf("%s %s: %v", k.kernel, key, err)
				}
				n++
			}
		}
	}
	if n != 10 {
		t.Errorf("%d layout loops checked, want 10", n)
	}
}

// TestCOOLoopsEndFibersWhereIOrJChanges: the COO loops of TTV, TTM and
// MTTKRP give the CSF loops' output on a tensor whose consecutive fibers
// share j across a change of i, or i across a change of j.
func TestCOOLoopsEndFibersWhereIOrJChanges(t *testing.T) {
	c := &storage.COO{Dims: []int64{3, 2, 3}, Coords: [][]int64{
		{0, 0, 1, 1, 1, 2},
		{1, 1, 1, 0, 1, 1},
		{0, 2, 1, 2, 0, 2},
	}, Vals: []float64{1, 2, 3, 4, 5, 6}}
	f, m := csfOf(c), coo3Of(c)
	v := []float64{0.5, 2, 3}
	b := &dense{rows: 3, cols: 2, val: []float64{1, 2, 3, 4, 5, 6}}    // l-major B: 3 l by 2 k
	cm := &dense{rows: 2, cols: 2, val: []float64{1, -1, 2, 0.5}}      // C(k,:)
	dt := &dense{rows: 3, cols: 2, val: []float64{2, 1, 0.5, 3, 1, 1}} // D stored l-major
	for _, tc := range []struct {
		name      string
		csf, coo3 []float64
	}{
		{"ttv", ttvLoop(&outBuf{}, f, v), ttvCooLoop(&outBuf{}, m, v)},
		{"ttm", ttmLoop(&outBuf{}, f, b), ttmCooLoop(&outBuf{}, m, b)},
		{"mttkrp", mttkrpLoop(&outBuf{}, f, cm, dt), mttkrpCooLoop(&outBuf{}, m, cm, dt)},
	} {
		if !slices.Equal(tc.csf, tc.coo3) {
			t.Errorf("%s: COO loop %v, CSF loop %v", tc.name, tc.coo3, tc.csf)
		}
	}
}
