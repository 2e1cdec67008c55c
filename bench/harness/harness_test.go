package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/storage"
)

func TestRandomSparseIsDeterministicAndHasItsDensity(t *testing.T) {
	for _, d := range []float64{0, 1e-3, 0.05, 0.5, 1} {
		a := RandomSparse(200, 150, d, 7)
		b := RandomSparse(200, 150, d, 7)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("density %g: two draws with one seed differ", d)
		}
		got := float64(len(a.Vals)) / (200 * 150)
		if d == 0 && got != 0 || d > 0 && (got < d*0.8 || got > d*1.2) {
			t.Errorf("density %g: got %g", d, got)
		}
		seen := map[[2]int64]bool{}
		for p, v := range a.Vals {
			k := [2]int64{a.Coords[0][p], a.Coords[1][p]}
			if seen[k] {
				t.Fatalf("density %g: duplicate entry %v", d, k)
			}
			seen[k] = true
			if v <= 0 || v > 2 || k[0] < 0 || k[0] >= 200 || k[1] < 0 || k[1] >= 150 {
				t.Fatalf("density %g: bad entry %v = %g", d, k, v)
			}
		}
	}
	if reflect.DeepEqual(RandomSparse(50, 50, 0.1, 1).Vals, RandomSparse(50, 50, 0.1, 2).Vals) {
		t.Error("different seeds give the same matrix")
	}
}

func TestWrittenMatrixReadsBack(t *testing.T) {
	dir := t.TempDir()
	c := RandomSparse(30, 20, 0.2, 3)
	path := filepath.Join(dir, "a.mtx")
	if err := WriteMTX(path, c); err != nil {
		t.Fatal(err)
	}
	back, err := storage.ReadTensorFile(path, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Dims, c.Dims) || !reflect.DeepEqual(back.Vals, c.Vals) || !reflect.DeepEqual(back.Coords, c.Coords) {
		t.Fatal("matrix changed through WriteMTX and the reader")
	}
	s := Slice(c, []int64{10, 5})
	for p := range s.Vals {
		if s.Coords[0][p] >= 10 || s.Coords[1][p] >= 5 {
			t.Fatalf("slice kept %d,%d", s.Coords[0][p], s.Coords[1][p])
		}
	}
	if !reflect.DeepEqual(s.Dims, []int64{10, 5}) {
		t.Fatalf("slice dims %v", s.Dims)
	}
}

func TestCompare(t *testing.T) {
	a := &Answer{Order: 2, Entries: []Entry{{Key: [4]int64{0, 1}, Val: 2}, {Key: [4]int64{3, 0}, Val: 5}}}
	same := &Answer{Order: 2, Entries: []Entry{{Key: [4]int64{0, 1}, Val: 2 + 1e-12}, {Key: [4]int64{1, 1}, Val: 0}, {Key: [4]int64{3, 0}, Val: 5}}}
	if err := Compare(a, same, DefaultTolerance); err != nil {
		t.Errorf("equal answers: %v", err)
	}
	for name, b := range map[string]*Answer{
		"value":   {Order: 2, Entries: []Entry{{Key: [4]int64{0, 1}, Val: 2.1}, {Key: [4]int64{3, 0}, Val: 5}}},
		"missing": {Order: 2, Entries: []Entry{{Key: [4]int64{0, 1}, Val: 2}}},
		"extra":   {Order: 2, Entries: []Entry{{Key: [4]int64{0, 1}, Val: 2}, {Key: [4]int64{2, 2}, Val: 1}, {Key: [4]int64{3, 0}, Val: 5}}},
		"order":   {Order: 1, Entries: []Entry{{Key: [4]int64{0}, Val: 2}}},
	} {
		if err := Compare(a, b, DefaultTolerance); err == nil {
			t.Errorf("%s: a wrong answer passed", name)
		}
	}
}

func TestAnswersFromFiles(t *testing.T) {
	dir := t.TempDir()
	tns := filepath.Join(dir, "a.tns")
	os.WriteFile(tns, []byte("2 1 0.5\n1 3 2\n"), 0o644)
	a, err := ReadTNSAnswer(tns)
	if err != nil {
		t.Fatal(err)
	}
	want := &Answer{Order: 2, Entries: []Entry{{Key: [4]int64{0, 2}, Val: 2}, {Key: [4]int64{1, 0}, Val: 0.5}}}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("tns: got %+v", a)
	}
	prefix := filepath.Join(dir, "b")
	f, _ := os.Create(prefix + ".idx.npy")
	storage.WriteNPY(f, []int64{2, 2}, []int64{1, 0, 0, 2}, nil)
	f.Close()
	f, _ = os.Create(prefix + ".val.npy")
	storage.WriteNPY(f, []int64{2}, nil, []float64{0.5, 2})
	f.Close()
	b, err := ReadNPYAnswer(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(a, b, DefaultTolerance); err != nil {
		t.Fatalf("the same answer in two formats: %v", err)
	}
	scalar := filepath.Join(dir, "s.tns")
	os.WriteFile(scalar, []byte("-1.25\n"), 0o644)
	s, err := ReadTNSAnswer(scalar)
	if err != nil || s.Order != 0 || len(s.Entries) != 1 || s.Entries[0].Val != -1.25 {
		t.Fatalf("scalar: %+v %v", s, err)
	}
}

func TestParseTimings(t *testing.T) {
	got := ParseTimings("loading\ntiming: parse 0.215 ms\ntiming: execute 12.5 ms\nnoise timing: load 3 ms\ntiming: execute 13 ms\n")
	want := map[string]float64{"parse": 0.215, "execute": 13}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestParseExplainFigures(t *testing.T) {
	text := `== naive plan (paper §5.1)  // {int -> real}, 27 nodes
sum(<i, Ai> in A) ...
== optimizer
stage 1: 31 iterations, 47441 e-nodes, 30810 e-classes, 445 ms
stage 2: iterations: 59  e-nodes: 46456  e-classes: 8043  time: 1.212 s
== optimized plan // 12 nodes
`
	got := ParseExplainFigures(text)
	for k, v := range map[string]float64{"iterations": 90, "nodes": 93897, "classes": 38853, "time_ms": 1657, "iterations#2": 59} {
		if got[k] != v {
			t.Errorf("%s = %g, want %g (all: %v)", k, got[k], v, got)
		}
	}
	if f := ParseExplainFigures("== naive plan // 27 nodes\n== desugared\nsum(<i,v> in 0:10) v\n"); len(f) != 0 {
		t.Errorf("figures found in an explain output without any: %v", f)
	}
}

func TestRunTimesOutAndReportsErrors(t *testing.T) {
	r := Run(Exec{Args: []string{"sh", "-c", "sleep 5"}, Timeout: 200 * time.Millisecond})
	if r.Status != StatusTimeout {
		t.Errorf("sleep: status %s", r.Status)
	}
	r = Run(Exec{Args: []string{"sh", "-c", "echo 'timing: execute 2 ms' >&2; echo boom >&2; exit 3"}, Timeout: 10 * time.Second})
	if r.Status != StatusError || r.Code != 3 || !strings.Contains(r.Err, "boom") || r.Timings["execute"] != 2 {
		t.Errorf("failing command: %+v", r)
	}
}

func TestParseExplainStageTable(t *testing.T) {
	text := `estimated result cardinality: 30 dense[9.28 dense[s]]

stage      rounds  iters   nodes  classes       time  stop
fuse            1      7     128       91    0.52 ms  saturated
explore         2     12     110       62    12.5 ms  saturated
physical        1      2      43       39    1.00 ms  stopped: node limit
total                                        14.1 ms  saturated

rules applied most (unions that changed the e-graph):
  C3       16  products commute
`
	got := ParseExplainFigures(text)
	for k, v := range map[string]float64{"iterations": 21, "nodes": 281, "classes": 192, "time_ms": 14.1,
		"nodes#2": 110, "time_ms#2": 12.5, "stage:explore": 2, "classes#3": 39} {
		if got[k] != v {
			t.Errorf("%s = %g, want %g (all: %v)", k, got[k], v, got)
		}
	}
}

func TestReportShowsFailuresAndRatios(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	d := &reportData{Machine: "test machine", Quick: true, Failures: []string{"e2e mmm x duckdb: 3 entries differ"}, Results: []Measurement{
		{Experiment: "e2e", Kernel: "mmm", Input: "x", System: "storel", Status: StatusOK, Execute: f(10), Optimize: f(1)},
		{Experiment: "e2e", Kernel: "mmm", Input: "x", System: "scipy", Status: StatusOK, Execute: f(5)},
		{Experiment: "e2e", Kernel: "mmm", Input: "x", System: "duckdb", Status: StatusWrong, Execute: f(1), Note: "3 entries differ"},
		{Experiment: "e2e", Kernel: "mmm", Input: "x", System: "numpy", Status: StatusSkip, Note: "dense storage needs 9 GB"},
		{Experiment: "e2e", Kernel: "mmm", Input: "y", System: "storel", Status: StatusTimeout},
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
	for _, want := range []string{"QUICK run", "## FAILURES", "3 entries differ", "**WRONG**", "| MMM | scipy | 0.5× |", "dense storage needs 9 GB", "timeout", "**MMM vs scipy** (x 0.5×)"} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(r, "| MMM | duckdb | 0.1×") {
		t.Error("a wrong answer's time counted in the ratios")
	}
}

// fakeJob is a system that writes the given .tns text as its answer.
func fakeJob(dir, system, tns string, reference bool) job {
	ans := filepath.Join(dir, system+".tns")
	return job{system: system, reference: reference, answer: ans, threads: 1,
		exec: Exec{Args: []string{"sh", "-c", "printf '" + tns + "' > " + ans + "; echo 'timing: execute 1 ms' >&2"}, Timeout: 10 * time.Second}}
}

func TestRunJobsBlamesTheOddOneOut(t *testing.T) {
	dir := t.TempDir()
	k := caseKey{"e2e", "mmm", "x", 0}

	h := New(Config{})
	out := h.runJobs(k, []job{fakeJob(dir, "storel", `1 2\n`, true), fakeJob(dir, "scipy", `1 2\n`, false), fakeJob(dir, "duckdb", `1 5\n`, false)})
	if out[0].Status != StatusOK || out[1].Status != StatusOK || out[2].Status != StatusWrong || len(h.Failures) != 1 {
		t.Errorf("one wrong peer: %+v, failures %v", out, h.Failures)
	}

	h = New(Config{})
	out = h.runJobs(k, []job{fakeJob(dir, "storel", `1 2\n`, true), fakeJob(dir, "scipy", `1 3\n`, false), fakeJob(dir, "duckdb", `1 3\n`, false)})
	if out[0].Status != StatusWrong || out[1].Status != StatusNoCheck || out[2].Status != StatusNoCheck ||
		len(h.Failures) != 1 || !strings.Contains(h.Failures[0], "storel") {
		t.Errorf("two peers agreeing against storel: %+v, failures %v", out, h.Failures)
	}

	h = New(Config{})
	oracle := fakeJob(dir, "oracle", `1 2\n`, false)
	oracle.oracle = true
	out = h.runJobs(k, []job{fakeJob(dir, "storel", `1 2\n`, true), oracle, fakeJob(dir, "scipy", `1 3\n`, false), fakeJob(dir, "duckdb", `1 3\n`, false)})
	if out[0].Status != StatusOK || out[2].Status != StatusWrong || out[3].Status != StatusWrong || len(h.Failures) != 2 {
		t.Errorf("the oracle vouches for storel: %+v, failures %v", out, h.Failures)
	}

	h = New(Config{})
	out = h.runJobs(k, []job{fakeJob(dir, "storel", `1 1\n1 1\n`, true), fakeJob(dir, "scipy", `1 2\n`, false)})
	if out[0].Status != StatusWrong || !strings.Contains(out[0].Note, "more than once") || out[1].Status != StatusNoCheck {
		t.Errorf("duplicate coordinates: %+v", out)
	}
}

func TestMergeReplacesOnlyTheCasesRunAgain(t *testing.T) {
	h := New(Config{})
	h.previous = &reportData{
		Results: []Measurement{
			{Experiment: "e2e", Kernel: "mmm", Input: "a", System: "storel", Status: StatusOK},
			{Experiment: "e2e", Kernel: "batax", Input: "b", System: "storel", Status: StatusWrong},
			{Experiment: "e2e", Kernel: "batax", Input: "b", System: "scipy", Status: StatusWrong},
		},
		Failures: []string{"e2e batax b scipy: differs", "e2e ttm c storel: killed"},
	}
	h.Results = []Measurement{{Experiment: "e2e", Kernel: "batax", Input: "b", System: "storel", Status: StatusOK}}
	ms, fs := h.merged()
	if len(ms) != 2 || ms[0].Input != "a" || ms[1].Status != StatusOK {
		t.Errorf("merged measurements: %+v", ms)
	}
	if !reflect.DeepEqual(fs, []string{"e2e ttm c storel: killed"}) {
		t.Errorf("merged failures: %v", fs)
	}
}

func TestRunKillsARunawayProcess(t *testing.T) {
	// A shell that doubles a string until it passes 50 MB.
	r := Run(Exec{Args: []string{"sh", "-c", `s=x; while true; do s="$s$s"; done`}, Timeout: 20 * time.Second, MaxRSS: 50 << 20})
	if r.Status != StatusError || !strings.Contains(r.Err, "resident memory") {
		t.Fatalf("got %s: %s", r.Status, r.Err)
	}
}
