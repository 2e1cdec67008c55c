package harness

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/storage"
)

// The testdata/taco-* files are output of a real taco binary (tensor-
// compiler/taco 2b8ece4, Release build) on testdata/A.mtx and B.mtx:
//
//	taco "Q(i,j)=A(i,k)*B(k,j)" -f=Q:ds -f=A:ds -f=B:ds -i=A:A.mtx -i=B:B.mtx -o=Q:q.tns -time=5
//	taco "Q=A(i,k)*B(k,j)" -f=A:ds:1,0 -f=B:ds -i=A:A.mtx -i=B:B.mtx -o=Q:s.tns -time=1
//
// and taco-precision-answer.tns is its MMM of [1.0009765625 0; 0 1234.5678901]
// by the identity.

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestParseTacoTimesOfTheRealBinary(t *testing.T) {
	one, err := os.ReadFile("testdata/taco-summmm-time1.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := parseTacoTimes(string(one))
	for phase, want := range map[string]float64{
		"load": 0.10644 + 0.119478, "build": 149.396 + 186.549, "compile": 205.486,
		"assemble": 0.101323, "compute": 0.05518, "execute": 0.101323 + 0.05518,
	} {
		if !near(got[phase], want) {
			t.Errorf("-time=1: %s = %g, want %g (all %v)", phase, got[phase], want, got)
		}
	}
	// -time=5 prints mean, stdev and median under "Compute time (ms)"; the
	// median is taken, here in C++'s exponent form.
	five, err := os.ReadFile("testdata/taco-mmm-time5.txt")
	if err != nil {
		t.Fatal(err)
	}
	got = parseTacoTimes(string(five))
	if !near(got["compute"], 9.9e-05) || !near(got["execute"], 0.148437+9.9e-05) || !near(got["compile"], 311.872) {
		t.Errorf("-time=5: %v", got)
	}
	if got := parseTacoTimes("A size: (3 x 4), 80 bytes\nerror: no compute\n"); got["execute"] != 0 || len(got) != 0 {
		t.Errorf("output without timings: %v", got)
	}
}

// denseProduct multiplies two matrix files the slow, obvious way.
func denseProduct(t *testing.T, a, b string) [][]float64 {
	t.Helper()
	A, err := storage.ReadTensorFile(a, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	B, err := storage.ReadTensorFile(b, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := make([][]float64, A.Dims[0])
	for i := range q {
		q[i] = make([]float64, B.Dims[1])
	}
	for p, av := range A.Vals {
		for r, bv := range B.Vals {
			if A.Coords[1][p] == B.Coords[0][r] {
				q[A.Coords[0][p]][B.Coords[1][r]] += av * bv
			}
		}
	}
	return q
}

func TestTacoAnswersReadAndCheck(t *testing.T) {
	q := denseProduct(t, "testdata/A.mtx", "testdata/B.mtx")
	want := &Answer{Order: 2}
	total := 0.0
	for i := range q {
		for j, v := range q[i] {
			if v != 0 {
				want.Entries = append(want.Entries, Entry{Key: [maxOrder]int64{int64(i), int64(j)}, Val: v})
				total += v
			}
		}
	}
	got, err := ReadTNSAnswer("testdata/taco-mmm-answer.tns")
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(want, got, tacoTolerance); err != nil {
		t.Errorf("TACO's MMM: %v", err)
	}
	sum, err := ReadTNSAnswer("testdata/taco-summmm-answer.tns")
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(&Answer{Entries: []Entry{{Val: total}}}, sum, tacoTolerance); err != nil || sum.Order != 0 {
		t.Errorf("TACO's SumMMM (a scalar): %+v %v", sum, err)
	}

	// TACO prints six significant digits: the exact answer is accepted
	// only with TACO's tolerance, and a wrong digit is still caught.
	exact := &Answer{Order: 2, Entries: []Entry{{Key: [maxOrder]int64{0, 0}, Val: 1.0009765625}, {Key: [maxOrder]int64{1, 1}, Val: 1234.5678901}}}
	printed, err := ReadTNSAnswer("testdata/taco-precision-answer.tns")
	if err != nil {
		t.Fatal(err)
	}
	if Compare(exact, printed, DefaultTolerance) == nil {
		t.Error("six printed digits passed the default tolerance: the test data is not what it claims")
	}
	if err := Compare(exact, printed, tacoTolerance); err != nil {
		t.Errorf("TACO's rounding failed TACO's tolerance: %v", err)
	}
	wrong := *printed
	wrong.Entries = append([]Entry(nil), printed.Entries...)
	wrong.Entries[1].Val = 1234.59
	if Compare(exact, &wrong, tacoTolerance) == nil {
		t.Error("a wrong fifth digit passed TACO's tolerance")
	}
}

func TestTacoArgsWriteFilesTacoReads(t *testing.T) {
	dir := t.TempDir()
	h := New(Config{TmpDir: dir, Taco: "taco", Repeat: 5})
	a := filepath.Join(dir, "a.mtx")
	if err := WriteMTX(a, RandomSparse(4, 3, 0.5, 1)); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x.npy")
	if err := WriteVectorNPY(x, []float64{1, 2, 4}); err != nil {
		t.Fatal(err)
	}
	in := &Inputs{Tensors: map[string]string{"A": a}, Shapes: map[string][]int64{"A": {4, 3}}, X: x, Beta: "1.5"}
	args, err := h.tacoArgs("batax", in, filepath.Join(dir, "q.tns"), false)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{"Q(j)=A(i,j)*A(i,k)*xb(k)", "-f=A:ds", "-f=Q:d", "-i=A:" + a, "-o=Q:", "-time=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("taco command %q lacks %q", line, want)
		}
	}
	b, err := os.ReadFile(argFile(args, "-i=xb:"))
	if err != nil || string(b) != "%%MatrixMarket tensor coordinate real general\n3 3\n1 1.5\n2 3\n3 6\n" {
		t.Errorf("beta*x as .ttx: %q %v", b, err)
	}
	if args, err = h.tacoArgs("batax", in, "q.tns", true); err != nil || !strings.Contains(strings.Join(args, " "), "-f=A:dd") {
		t.Errorf("dense BATAX: %v %v", args, err)
	}
	if _, err := h.tacoArgs("ttm", in, "q.tns", true); err == nil {
		t.Error("a dense TTM was made up")
	}

	// A .tns tensor whose last slices are empty keeps its dimensions.
	tns := filepath.Join(dir, "t.tns")
	os.WriteFile(tns, []byte("1 1 1 2\n2 3 1 0.5\n"), 0o644)
	in = &Inputs{Tensors: map[string]string{"A": tns, "B": a}, Shapes: map[string][]int64{"A": {2, 3, 9}, "B": {4, 3}}}
	if args, err = h.tacoArgs("ttm", in, "q.tns", false); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(argFile(args, "-i=A:"))
	if err != nil || string(b) != "%%MatrixMarket tensor coordinate real general\n2 3 9 2\n1 1 1 2\n2 3 1 0.5\n" {
		t.Errorf("tensor as .ttx: %q %v", b, err)
	}
}

func argFile(args []string, prefix string) string {
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, prefix); ok {
			return p
		}
	}
	return ""
}

func TestTacoRunsAreRepeatedAsProcesses(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	// Prints TACO's -time=1 report with a compute time of 10, 20, 30... ms.
	script := `n=$(cat ` + count + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + count + `
printf 'A file read: 2 ms\nA pack:      3 ms\nA size: (3 x 4), 80 bytes\n\nCompile:  7 ms\nAssemble: 1 ms\nCompute:  %d ms\n' $((n*10))`
	j := job{system: "taco", tacoTimes: true, exec: Exec{Args: []string{"sh", "-c", script}, Timeout: 10 * time.Second}}
	r, times, runs := runRepeated(j, 3)
	if r.Status != StatusOK || runs != 3 || times["execute"] != 21 || times["load"] != 2 || times["build"] != 3 {
		t.Errorf("3 runs: %s, %d runs, %v", r.Status, runs, times)
	}
	j.exec.Args = []string{"sh", "-c", "echo 'Compile:  7 ms'; echo boom >&2; exit 1"}
	if r, _, runs := runRepeated(j, 3); r.Status != StatusError || runs != 1 {
		t.Errorf("a failing run is not repeated: %s, %d runs", r.Status, runs)
	}
}

// TestRealTaco runs the taco binary on PATH, when there is one, on a small
// BATAX and checks its answer and timings the way the harness does.
func TestRealTaco(t *testing.T) {
	bin, err := exec.LookPath("taco")
	if err != nil {
		t.Skip("no taco on PATH")
	}
	dir := t.TempDir()
	h := New(Config{TmpDir: dir, Taco: bin, Repeat: 1})
	c := RandomSparse(30, 20, 0.2, 5)
	a := filepath.Join(dir, "a.mtx")
	if err := WriteMTX(a, c); err != nil {
		t.Fatal(err)
	}
	xs := RandomVector(20, 6)
	x := filepath.Join(dir, "x.npy")
	if err := WriteVectorNPY(x, xs); err != nil {
		t.Fatal(err)
	}
	in := &Inputs{Tensors: map[string]string{"A": a}, Shapes: map[string][]int64{"A": {30, 20}}, X: x, Beta: "1.5"}
	out := filepath.Join(dir, "q.tns")
	args, err := h.tacoArgs("batax", in, out, false)
	if err != nil {
		t.Fatal(err)
	}
	r, times, _ := runRepeated(job{tacoTimes: true, exec: Exec{Args: args, Timeout: time.Minute}}, 1)
	if r.Status != StatusOK || times["execute"] <= 0 || times["compile"] <= 0 {
		t.Fatalf("taco: %s %s %v\n%s", r.Status, r.Err, times, r.Stdout)
	}
	// beta * A^T (A x), computed here.
	ax := make([]float64, 30)
	for p, v := range c.Vals {
		ax[c.Coords[0][p]] += v * xs[c.Coords[1][p]]
	}
	q := make([]float64, 20)
	for p, v := range c.Vals {
		q[c.Coords[1][p]] += 1.5 * v * ax[c.Coords[0][p]]
	}
	want := &Answer{Order: 1}
	for j, v := range q {
		if v != 0 {
			want.Entries = append(want.Entries, Entry{Key: [maxOrder]int64{int64(j)}, Val: v})
		}
	}
	got, err := ReadTNSAnswer(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(want, got, tacoTolerance); err != nil {
		t.Errorf("taco's BATAX: %v", err)
	}
}
