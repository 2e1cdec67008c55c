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
// on small generated data (rows of unequal lengths and an empty one, so
// that ELL pads; a sparse B with empty rows and columns, so that DCSC
// lists fewer columns than CSC) and checks its answer against the
// reference interpreter's for the kernel's first form, as the variants
// experiment checks the kernel's loop.
func TestLayoutLoopsAgreeWithTheReferenceInterpreter(t *testing.T) {
	dir := t.TempDir()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Repo: repo, TmpDir: dir, OutDir: dir})
	dims := []int64{30, 30}
	a := RandomSparse(dims[0], dims[1], 0.15, 5)
	empty := &storage.COO{Dims: a.Dims, Coords: [][]int64{nil, nil}, Field: a.Field}
	for p, v := range a.Vals {
		if a.Coords[0][p] != 3 {
			empty.Coords[0] = append(empty.Coords[0], a.Coords[0][p])
			empty.Coords[1] = append(empty.Coords[1], a.Coords[1][p])
			empty.Vals = append(empty.Vals, v)
		}
	}
	aPath := filepath.Join(dir, "a.mtx")
	if err := WriteMTX(aPath, empty); err != nil {
		t.Fatal(err)
	}
	bPath, err := h.genMatrix(dims[1], 12, 0.05, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := readTensor(bPath, nil); err != nil || len(cscOf(b, true).ids) >= 12 {
		t.Fatalf("B should have an empty column (%v)", err)
	}
	n := 0
	for _, k := range variantKernels {
		keys := slices.Sorted(maps.Keys(layoutLoops[k.kernel]))
		if len(keys) == 0 {
			continue
		}
		c := &variantCase{files: map[string]string{"A": aPath, "B": bPath}, dims: map[string][]int64{}, data: map[string]string{}}
		if k.kernel == "spmv" {
			delete(c.files, "B")
			if c.data["x"], err = h.genVector(dims[1], 1); err == nil {
				err = h.ellArrays(c, aPath, dims)
			}
			if err != nil {
				t.Fatal(err)
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
	if n != 7 {
		t.Errorf("%d layout loops checked, want 7", n)
	}
}
