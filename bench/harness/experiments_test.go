package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStorelPlansFromHelp(t *testing.T) {
	// The --plan lines of `storel help` at commit f9482ed, and since the
	// logical plan landed.
	before := "  --output FILE                write the result\n  --plan naive|optimized       which plan to run (default optimized)\n"
	if p := storelPlans(before); !slices.Equal(p, []string{"naive", "optimized"}) {
		t.Errorf("plans %v", p)
	}
	after := "  --plan naive|logical|optimized  which plan to run (default optimized); logical optimizes\n" +
		"                               the program alone, reading each tensor built from its mapping\n"
	if p := storelPlans(after); !slices.Equal(p, []string{"naive", "logical", "optimized"}) {
		t.Errorf("plans %v", p)
	}
	if p := storelPlans("usage: storel run\n"); p != nil {
		t.Errorf("plans of a help without --plan: %v", p)
	}
}

func TestOverheadRunsTheLogicalPlanOnlyWhenStorelHasIt(t *testing.T) {
	for _, plans := range []string{"naive|optimized", "naive|logical|optimized"} {
		dir := t.TempDir()
		// A fake storel: its help lists plans; a run writes a scalar answer.
		fake := filepath.Join(dir, "storel")
		script := "#!/bin/sh\nif [ \"$1\" = help ]; then echo '  --plan " + plans + "   which plan'; exit 0; fi\n" +
			"while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then echo 1 > \"$2\"; fi; shift; done\necho 'timing: execute 1 ms' >&2\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		h := New(Config{Quick: true, Storel: fake, Repo: dir, TmpDir: dir, OutDir: dir, Timeout: 10 * time.Second, Repeat: 1, FactorDensity: 0.1})
		if err := h.runOverhead(); err != nil {
			t.Fatal(err)
		}
		var logical []Measurement
		for _, m := range h.Results {
			if m.System == overheadLogical {
				logical = append(logical, m)
			}
		}
		has := strings.Contains(plans, "logical")
		if has && (len(logical) != len(h.overheadSizes()) || logical[0].Status != StatusOK) || !has && len(logical) != 0 {
			t.Errorf("plans %s: logical runs %+v", plans, logical)
		}
		if !has && (len(h.Notes) != 1 || !strings.Contains(h.Notes[0].Text, "--plan logical")) {
			t.Errorf("plans %s: notes %v", plans, h.Notes)
		}
	}
}

func TestSweepPlanHasThePaperSizeWhereItFits(t *testing.T) {
	h := New(Config{})
	sizes := map[string][]int64{}
	for _, s := range h.sweepPlan() {
		sizes[s.kernel] = append(sizes[s.kernel], s.n)
		for _, d := range s.densities {
			if nnz := d * float64(s.n) * float64(s.n); nnz > maxSweepNNZ {
				t.Errorf("%s %d at %g: %g non-zeros", s.kernel, s.n, d, nnz)
			}
		}
		if s.n == paperSweepN && !slices.Equal(s.densities, []float64{1e-4, 1e-3}) {
			t.Errorf("%s at the paper's size: densities %v", s.kernel, s.densities)
		}
		if s.n != paperSweepN && !slices.Equal(s.densities, sweepDensities) {
			t.Errorf("%s %d: densities %v, want all", s.kernel, s.n, s.densities)
		}
	}
	for kernel, want := range map[string][]int64{"mmm": {1000}, "summmm": {paperSweepN, 2000}, "batax": {paperSweepN, 2000}} {
		if !slices.Equal(sizes[kernel], want) {
			t.Errorf("%s sizes %v, want %v", kernel, sizes[kernel], want)
		}
	}
	skipped := h.sweepSkipped()
	if len(skipped) != 2 || !strings.Contains(skipped[0], "SUMMMM 100000x100000 at density 0.01, 0.1, 0.3, 1") || !strings.Contains(skipped[1], "BATAX") {
		t.Errorf("skipped: %q", skipped)
	}
	if s := New(Config{Kernels: []string{"mmm"}}).sweepSkipped(); len(s) != 0 {
		t.Errorf("MMM alone skips %q", s)
	}
	if s := New(Config{Quick: true}).sweepSkipped(); len(s) != 1 || !strings.Contains(s[0], "full run") {
		t.Errorf("quick: %q", s)
	}
}

func TestDenseTooBigAndTimeoutCaps(t *testing.T) {
	h := New(Config{MaxRSS: 15e9})
	big := &Inputs{Shapes: map[string][]int64{"A": {100000, 100000}}}
	small := &Inputs{Shapes: map[string][]int64{"A": {2000, 2000}, "B": {2000, 2000}}}
	if why := h.denseTooBig(big); !strings.Contains(why, "80 GB") {
		t.Errorf("10^5 x 10^5 dense: %q", why)
	}
	if why := h.denseTooBig(small); why != "" {
		t.Errorf("2000 x 2000 dense: %q", why)
	}
	jobs := capTimeouts([]job{{exec: Exec{Timeout: time.Hour}}, {exec: Exec{Timeout: time.Second}}}, time.Minute)
	if jobs[0].exec.Timeout != time.Minute || jobs[1].exec.Timeout != time.Second {
		t.Errorf("capped: %v %v", jobs[0].exec.Timeout, jobs[1].exec.Timeout)
	}
	if l := New(Config{Timeout: 10 * time.Minute, SweepTimeout: time.Minute}).sweepLimit(); l != time.Minute {
		t.Errorf("sweep limit %v", l)
	}
	if l := New(Config{Timeout: 30 * time.Second, SweepTimeout: time.Minute}).sweepLimit(); l != 30*time.Second {
		t.Errorf("sweep limit %v", l)
	}
}

func TestReportShowsSweepSizesAndNotes(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	d := &reportData{Machine: "test", Notes: []Note{{"sweep", "not run: BATAX 100000x100000 at density 0.01: too big."}}, Results: []Measurement{
		{Experiment: "sweep", Kernel: "batax", Input: "100000x100000", X: 1e-3, System: "storel sparse", Status: StatusOK, Execute: f(2)},
		{Experiment: "sweep", Kernel: "batax", Input: "100000x100000", X: 1e-3, System: "numpy", Status: StatusSkip, Note: "dense storage needs 80 GB"},
		{Experiment: "sweep", Kernel: "batax", Input: "100000x100000", X: 1e-4, System: "numpy", Status: StatusSkip, Note: "dense storage needs 80 GB"},
		{Experiment: "sweep", Kernel: "batax", Input: "100000x100000", X: 1e-4, System: "storel sparse", Status: StatusOK, Execute: f(1)},
		{Experiment: "sweep", Kernel: "batax", Input: "2000x2000", X: 1e-3, System: "storel sparse", Status: StatusOK, Execute: f(1)},
		{Experiment: "sweep", Kernel: "mmm", Input: "1000x1000", X: 1e-3, System: "storel sparse", Status: StatusOK, Execute: f(1)},
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
	for _, want := range []string{"**Left out:** not run: BATAX 100000x100000 at density 0.01: too big.", "### BATAX, 100000x100000", "### BATAX, 2000x2000",
		"numpy at density 0.001, 0.0001: dense storage needs 80 GB", "sweep-batax-100000x100000.png", "sweep-batax-2000x2000.png", "sweep-mmm.png"} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, png := range []string{"sweep-batax-100000x100000.png", "sweep-batax-2000x2000.png", "sweep-mmm.png"} {
		if _, err := os.Stat(filepath.Join(dir, png)); err != nil {
			t.Errorf("no plot %s", png)
		}
	}
}

func TestSweepDoesNotRetryADenseRunThatTimedOut(t *testing.T) {
	dir := t.TempDir()
	// A fake storel: dense storage hangs, sparse answers at once.
	fake := filepath.Join(dir, "storel")
	script := "#!/bin/sh\ncase \"$*\" in *:dense*) sleep 10;; esac\n" +
		"while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then echo '1 1' > \"$2\"; fi; shift; done\necho 'timing: execute 1 ms' >&2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := New(Config{Quick: true, Storel: fake, Repo: dir, TmpDir: dir, OutDir: dir, Kernels: []string{"batax"},
		Python: "/nonexistent/python", Timeout: 10 * time.Second, SweepTimeout: 300 * time.Millisecond, Repeat: 1})
	if err := h.runSweep(); err != nil {
		t.Fatal(err)
	}
	var dense []Measurement
	for _, m := range h.Results {
		if m.System == "storel dense" {
			dense = append(dense, m)
		}
	}
	if len(dense) != 3 || dense[0].Status != StatusTimeout || dense[1].Status != StatusSkip || dense[2].Status != StatusSkip ||
		!strings.Contains(dense[2].Note, "timed out at density 0.01") {
		t.Errorf("storel dense over the densities: %+v", dense)
	}
}
