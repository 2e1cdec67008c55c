package harness

import (
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeGz writes text gzipped to path.
func writeGz(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	if _, err := z.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMtxIsPatternReadsTheHeader(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]bool{
		"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n":       true,
		"%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 2.5\n":    false,
		"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1\n":     false,
		"%%matrixmarket MATRIX coordinate PATTERN symmetric\n2 2 1\n2 1\n":     true,
		"%%MatrixMarket matrix coordinate real general\n% pattern\n2 2 0\n":    false,
		"%%MatrixMarket matrix coordinate pattern general\n% a comment\n1 1 0": true,
	} {
		for _, gz := range []bool{false, true} {
			p := filepath.Join(dir, "m.mtx")
			if gz {
				p += ".gz"
				writeGz(t, p, name)
			} else if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := mtxIsPattern(p)
			if err != nil || got != want {
				t.Errorf("%q (gz %v): pattern %v, %v; want %v", name, gz, got, err, want)
			}
		}
	}
	bad := filepath.Join(dir, "bad.mtx")
	os.WriteFile(bad, []byte("1 1 1 2\n"), 0o644)
	if _, err := mtxIsPattern(bad); err == nil || !strings.Contains(err.Error(), "bad.mtx:1") {
		t.Errorf("a .tns read as a Matrix Market header: %v", err)
	}
	if _, err := mtxIsPattern(filepath.Join(dir, "missing.mtx")); err == nil {
		t.Error("a missing file has a header")
	}
}

// TestE2ESpMVRunsEveryPeerAndThePatternLineOnPatternMatrices runs the
// e2e experiment's SpMV with a fake storel on two stand-ins for the real
// data (--quick takes their leading blocks): a real symmetric matrix
// (bcsstk16's name) and a pattern one (wiki-Vote's). Every peer gets a
// job, x has A's column count, the csr+pattern line runs only on the
// pattern matrix and is checked against storel's answer, and the sell
// line runs on both, as sell+pattern on the pattern one.
func TestE2ESpMVRunsEveryPeerAndThePatternLineOnPatternMatrices(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeGz(t, filepath.Join(data, "bcsstk16.mtx.gz"), "%%MatrixMarket matrix coordinate real symmetric\n4884 4884 2\n1 1 2.5\n700 3 1\n")
	writeGz(t, filepath.Join(data, "wiki-Vote.mtx.gz"), "%%MatrixMarket matrix coordinate pattern general\n8297 8297 3\n1 2\n2 1\n8000 1\n")
	// The fake storel logs its arguments and answers y = (1 -> 2); with a
	// pattern format it answers y = (1 -> 3) when told to by WRONG_PATTERN.
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "storel")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nv=2\ncase \"$*\" in *csr+pattern*) v=${PATTERN_VALUE:-2};; esac\n" +
		"while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then echo \"1 $v\" > \"$2\"; fi; shift; done\necho 'timing: execute 1 ms' >&2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, patternValue := range []string{"2", "3"} {
		os.Remove(calls)
		t.Setenv("PATTERN_VALUE", patternValue)
		out := filepath.Join(dir, "out"+patternValue)
		h := New(Config{Quick: true, Storel: fake, Repo: dir, DataDir: data, TmpDir: filepath.Join(out, "tmp"), OutDir: out,
			Kernels: []string{"spmv"}, Python: "/nonexistent/python", Timeout: 10 * time.Second, Repeat: 1})
		if err := h.runE2E(); err != nil {
			t.Fatal(err)
		}
		systems := map[string][]string{}
		for _, m := range h.Results {
			if m.Experiment != "e2e" || m.Kernel != "spmv" {
				t.Errorf("measurement of %s %s", m.Experiment, m.Kernel)
			}
			systems[m.Input] = append(systems[m.Input], m.System)
			if m.System == storelPatternSystem {
				switch {
				case patternValue == "2" && (m.Status != StatusOK || m.CheckedAgainst != "storel"):
					t.Errorf("csr+pattern agreeing with storel: %s against %q (%s)", m.Status, m.CheckedAgainst, m.Note)
				case patternValue == "3" && m.Status != StatusWrong:
					t.Errorf("csr+pattern disagreeing with storel: %s", m.Status)
				}
			}
		}
		peers := []string{"scipy", "numpy", "torch", "duckdb"}
		if want := append([]string{"storel", storelSellSystem}, peers...); !slices.Equal(systems["bcsstk16"], want) {
			t.Errorf("bcsstk16 (real): systems %v, want %v", systems["bcsstk16"], want)
		}
		if want := append([]string{"storel", storelPatternSystem, storelSellSystem}, peers...); !slices.Equal(systems["wiki-Vote"], want) {
			t.Errorf("wiki-Vote (pattern): systems %v, want %v", systems["wiki-Vote"], want)
		}
		if failed := len(h.Failures) > 0; failed != (patternValue == "3") {
			t.Errorf("pattern value %s: failures %v", patternValue, h.Failures)
		}
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 5 {
			t.Fatalf("storel calls:\n%s", b)
		}
		for i, l := range lines {
			if !strings.Contains(l, "examples/spmv.sdql") || !strings.Contains(l, "--plan optimized") {
				t.Errorf("call %d: %s", i, l)
			}
			format := []string{":csr ", ":sell ", ":csr ", ":csr+pattern ", ":sell+pattern "}[i]
			if !strings.Contains(l, format) {
				t.Errorf("call %d lacks %q: %s", i, format, l)
			}
			// x is a vector of the leading block's column count (600 for wiki-Vote, 240 for bcsstk16).
			f := strings.Fields(l[strings.Index(l, "--data x=")+len("--data x="):])[0]
			a, err := readNPYFile(f)
			n := map[bool]int{true: 240, false: 600}[i < 2]
			if err != nil || len(a.F) != n || strings.Contains(l, "beta") {
				t.Errorf("call %d: x %s has %d entries (%v), want %d; %s", i, f, len(a.F), err, n, l)
			}
		}
	}
}

func TestTacoArgsForSpMV(t *testing.T) {
	dir := t.TempDir()
	h := New(Config{TmpDir: dir, Taco: "taco", Repeat: 5})
	a := filepath.Join(dir, "a.mtx")
	if err := WriteMTX(a, RandomSparse(4, 3, 0.5, 1)); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x.npy")
	if err := WriteVectorNPY(x, []float64{1, 0, 4}); err != nil {
		t.Fatal(err)
	}
	in := &Inputs{Tensors: map[string]string{"A": a}, Shapes: map[string][]int64{"A": {4, 3}}, X: x}
	args, err := h.tacoArgs("spmv", in, filepath.Join(dir, "q.tns"), false)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{"Q(i)=A(i,j)*x(j)", "-f=A:ds", "-f=Q:d", "-f=x:d", "-i=A:" + a, "-o=Q:", "-time=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("taco command %q lacks %q", line, want)
		}
	}
	// x as it is (no beta), with its length stated although its last entry is 4 and its second 0.
	b, err := os.ReadFile(argFile(args, "-i=x:"))
	if err != nil || string(b) != "%%MatrixMarket tensor coordinate real general\n3 2\n1 1\n3 4\n" {
		t.Errorf("x as .ttx: %q %v", b, err)
	}
	if strings.Contains(line, "-i=xb:") {
		t.Errorf("SpMV's vector named as BATAX's: %s", line)
	}
	// A kernel without a vector operand refuses one rather than drop it.
	if _, err := h.tacoArgs("mmm", in, "q.tns", false); err == nil {
		t.Error("MMM took a vector")
	}
}

func TestReportShowsSpMVAndStorelsOtherStorage(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	e2e := func(input, system string, exec float64) Measurement {
		return Measurement{Experiment: "e2e", Kernel: "spmv", Input: input, System: system, Status: StatusOK, Execute: f(exec)}
	}
	d := &reportData{Machine: "test", Results: []Measurement{
		e2e("landmark", "storel", 4), e2e("landmark", "scipy", 8), e2e("landmark", "taco", 40),
		e2e("cnr-2000", "storel", 10), e2e("cnr-2000", storelPatternSystem, 8), e2e("cnr-2000", "scipy", 5), e2e("cnr-2000", "taco", 20),
	}}
	dir := t.TempDir()
	if err := writeReport(dir, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	r := string(b)
	for _, want := range []string{
		"### SpMV", "| input | storel | storel (csr+pattern) | scipy | taco |", "| SpMV | scipy | 1× | 0.5× – 2× | 2 |", "| SpMV | taco | 4.47× | 2× – 10× | 2 |",
		"storel with other storage", "| SpMV | storel (csr+pattern) | 0.8× | 0.8× – 0.8× | 1 |",
		"**SpMV vs scipy** (cnr-2000 0.5×): SciPy's csr_matvec", "`Q(i)=A(i,j)*x(j)`", "e2e-spmv.png",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(r, "SpMV vs storel") || strings.Contains(r, "| SpMV | storel (csr+pattern) | 0.8× | 0.8× – 0.8× | 1 |\n| SpMV | scipy") {
		t.Errorf("storel's own csr+pattern line counted as a peer:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "e2e-spmv.png")); err != nil {
		t.Error("no SpMV plot")
	}
}

// TestRealTacoSpMV runs the taco binary on PATH, when there is one, on a
// small pattern matrix (as cnr-2000 and wiki-Vote are stored) times x and
// checks its answer the way the harness does.
func TestRealTacoSpMV(t *testing.T) {
	bin, err := exec.LookPath("taco")
	if err != nil {
		t.Skip("no taco on PATH")
	}
	dir := t.TempDir()
	h := New(Config{TmpDir: dir, Taco: bin, Repeat: 1})
	a := filepath.Join(dir, "a.mtx")
	// Row 2 is empty and the last column is stored: y has no entry 2.
	mtx := "%%MatrixMarket matrix coordinate pattern general\n3 4 4\n1 1\n1 3\n3 2\n3 4\n"
	if err := os.WriteFile(a, []byte(mtx), 0o644); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x.npy")
	if err := WriteVectorNPY(x, []float64{1, 2, 4, 8.5}); err != nil {
		t.Fatal(err)
	}
	in := &Inputs{Tensors: map[string]string{"A": a}, Shapes: map[string][]int64{"A": {3, 4}}, X: x}
	out := filepath.Join(dir, "q.tns")
	args, err := h.tacoArgs("spmv", in, out, false)
	if err != nil {
		t.Fatal(err)
	}
	r, times, _ := runRepeated(job{tacoTimes: true, exec: Exec{Args: args, Timeout: time.Minute}}, 1)
	if r.Status != StatusOK || times["execute"] <= 0 {
		t.Fatalf("taco: %s %s %v\n%s", r.Status, r.Err, times, r.Stdout)
	}
	got, err := ReadTNSAnswer(out)
	if err != nil {
		t.Fatal(err)
	}
	want := &Answer{Order: 1, Entries: []Entry{{Key: [maxOrder]int64{0}, Val: 5}, {Key: [maxOrder]int64{2}, Val: 10.5}}}
	if err := Compare(want, got, tacoTolerance); err != nil {
		t.Errorf("taco's SpMV: %v", err)
	}
}
