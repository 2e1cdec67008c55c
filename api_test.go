package storel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/storage"
)

// mat65 is a 6x5 matrix whose last two rows and last column are empty.
func mat65() *storage.COO {
	return &storage.COO{Dims: []int64{6, 5}, Coords: [][]int64{{0, 1, 3}, {0, 1, 2}}, Vals: []float64{1, 2, 3}, Field: "real"}
}

func TestAddTensorValidatesAtTheCall(t *testing.T) {
	w := NewWorkspace()
	if err := w.AddTensor("A", nil, "csr"); err == nil || !strings.Contains(err.Error(), "tensor A") {
		t.Errorf("a nil COO: %v", err)
	}
	if err := w.AddTensor("", mat65(), "csr"); err == nil {
		t.Error("a tensor without a name is accepted")
	}
}

func TestSetObjectNil(t *testing.T) {
	w := NewWorkspace()
	w.SetObject("x", nil)
	if _, err := w.Compile("t.sdql", []byte("CREATE real ARRAY x(2);\nsum(<i,v> in x) v"), ""); err == nil || !strings.Contains(err.Error(), "object x") {
		t.Errorf("a nil object: %v", err)
	}
}

func TestSetDataValidatesAtTheCall(t *testing.T) {
	w := NewWorkspace()
	missing := filepath.Join(t.TempDir(), "x.npy")
	if err := w.SetData("x", missing); err == nil || !strings.Contains(err.Error(), "x") || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
	if err := w.SetData("beta", "0.5"); err != nil {
		t.Errorf("a literal: %v", err)
	}
	if err := w.SetData("beta", "2"); err == nil || !strings.Contains(err.Error(), "beta is given data twice") {
		t.Errorf("data given twice: %v", err)
	}
}

// TestResultDims: the result's modes are sized by the inputs that bind
// its keys, not by its largest keys.
func TestResultDims(t *testing.T) {
	for _, c := range []struct {
		program string
		want    []int64
	}{
		{"CREATE real ARRAY x(A_dim2);\nsum(<(i,j),a> in A) {i -> a * x(j)}", []int64{6}},
		{"sum(<(i,j),a> in A) {(j,i) -> a}", []int64{5, 6}},
		{"sum(<(i,j),a> in A) {j -> a} + sum(<(i,j),a> in A) {i -> a}", []int64{6}},
		{"sum(<i,_> in 0:10) if (i < 3) then {i -> 1.0}", []int64{10}},
		{"sum(<(i,j),a> in A) {i + j -> a}", []int64{0}},
		{"sum(<(i,j),a> in A) a", []int64{}},
	} {
		w := NewWorkspace()
		if err := w.AddTensor("A", mat65(), "csr|hash"); err != nil {
			t.Fatal(err)
		}
		w.SetObject("x", storage.RealArray([]float64{1, 1, 1, 1, 1}))
		p, err := w.Compile("t.sdql", []byte(c.program), "")
		if err != nil {
			t.Fatalf("%s: %v", c.program, err)
		}
		if got := p.Dims(); !slices.Equal(got, c.want) {
			t.Errorf("%s: dims %v, want %v", c.program, got, c.want)
		}
	}
}

// TestSizeMismatchWarns: x indexed by the columns of a 5x3 A but of
// length 5 reads only part of x; the warning names both and their files.
func TestSizeMismatchWarns(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.mtx")
	x := filepath.Join(dir, "x.tns")
	os.WriteFile(a, []byte("%%MatrixMarket matrix coordinate real general\n5 3 2\n1 1 1\n5 3 2\n"), 0o644)
	os.WriteFile(x, []byte("1 1\n5 5\n"), 0o644)
	prog := []byte("CREATE TENSOR y AS sum(<(i,j),a> in A) {i -> a * x(j)};\n")
	w := NewWorkspace()
	if err := w.LoadTensor("A", a, "", storage.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.LoadTensor("x", x, "", storage.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := w.Compile("y.sdql", prog, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "y.sdql:1:") ||
		!strings.Contains(p.Warnings[0], "A's dimension 2 (size 3, from "+a+")") || !strings.Contains(p.Warnings[0], "x's dimension 1 (size 5, from "+x+")") {
		t.Errorf("warnings %q", p.Warnings)
	}
	// A join of keys over modes of different sizes (TTM's l).
	w = NewWorkspace()
	w.AddTensor("A", &storage.COO{Dims: []int64{4, 5, 6}, Coords: [][]int64{{0}, {0}, {5}}, Vals: []float64{1}, Field: "real"}, "csf")
	w.AddTensor("B", &storage.COO{Dims: []int64{7, 8}, Coords: [][]int64{{0}, {5}}, Vals: []float64{1}, Field: "real"}, "csr")
	p, err = w.Compile("ttm.sdql", []byte("sum(<(i,j,l), a> in A, <(k,l), b> in B) { (i,j,k) -> a * b }"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "ttm.sdql:1:") ||
		!strings.Contains(p.Warnings[0], "keys of A's dimension 3 (size 6) with keys of B's dimension 2 (size 8)") {
		t.Errorf("join warnings %q", p.Warnings)
	}
	if got := p.Dims(); !slices.Equal(got, []int64{4, 5, 7}) {
		t.Errorf("TTM dims %v, want [4 5 7]", got)
	}
	// Sizes that agree warn of nothing.
	w = NewWorkspace()
	w.AddTensor("A", &storage.COO{Dims: []int64{5, 5}, Coords: [][]int64{{0}, {4}}, Vals: []float64{1}, Field: "real"}, "csr")
	w.LoadTensor("x", x, "", storage.ReadOptions{})
	if p, err := w.Compile("y.sdql", prog, ""); err != nil || len(p.Warnings) != 0 {
		t.Errorf("sizes that agree: %q, %v", p.Warnings, err)
	}
}

// TestResultWriteFile: the API's writer sizes the output from the inputs
// and never loses the file it was to replace.
func TestResultWriteFile(t *testing.T) {
	w := NewWorkspace()
	w.AddTensor("A", mat65(), "csr")
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.mtx")
	os.WriteFile(keep, []byte("precious\n"), 0o644)
	p, err := w.Compile("t.sdql", []byte("sum(<(i,j),a> in A) a"), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WriteFile(keep, "mtx", storage.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "needs a matrix") {
		t.Errorf("a scalar into .mtx: %v", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "precious\n" {
		t.Errorf("a refused write left %q", b)
	}
	p, _ = w.Compile("t.sdql", []byte("sum(<(i,j),a> in A) {(j,i) -> a}"), "")
	if res, err = p.Run(RunOptions{NoValue: true}); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteFile(keep, "mtx", storage.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(keep); !strings.HasPrefix(string(b), "%%MatrixMarket matrix coordinate real general\n5 6 3\n") {
		t.Errorf("the transpose of a 6x5 matrix:\n%s", b)
	}
}
