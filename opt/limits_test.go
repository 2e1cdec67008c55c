package opt

import (
	"strings"
	"testing"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// TestLimitsStillGiveAValidPlan stops the search early by every limit; the
// plan must still be physical, typed and correct, and the report must say
// the search stopped.
func TestLimitsStillGiveAValidPlan(t *testing.T) {
	k := paperKernels[len(paperKernels)-1]
	naive, st := setupKernel(t, k.name, 1, k.tensors)
	want, err := eval.Eval(naive, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opt  Options
		stop string
	}{
		{"nodes", Options{NodeLimit: 30}, "node limit"},
		{"iterations", Options{IterLimit: 1}, "iteration limit"},
		{"time", Options{TimeLimit: time.Nanosecond}, "time limit"},
	} {
		res, err := Optimize(naive, st, tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Saturated || res.StopReason != tc.stop {
			t.Errorf("%s: saturated %v, stop reason %q, want %q", tc.name, res.Saturated, res.StopReason, tc.stop)
		}
		if s := shapeOf(res.Plan); s.logical > 0 {
			t.Errorf("%s: %d logical dictionaries left", tc.name, s.logical)
		}
		if err := checkTyped(res.Plan); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		got, err := eval.Eval(res.Plan, st)
		if err != nil || !value.Equal(want, got, 1e-9) {
			t.Errorf("%s: the plan computes %v (%v)", tc.name, got, err)
		}
		var sb strings.Builder
		res.Explain(&sb)
		if !strings.Contains(sb.String(), "stopped: "+tc.stop) {
			t.Errorf("%s: the report does not say the search stopped:\n%s", tc.name, sb.String())
		}
	}
}

// TestUserStatisticsOverrideTheData checks that statistics given by the
// user replace the gathered ones and change the estimates.
func TestUserStatisticsOverrideTheData(t *testing.T) {
	k := paperKernels[0]
	naive, st := setupKernel(t, k.name, 1, k.tensors)
	base, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	over, err := ParseStats("stats.txt", strings.NewReader("# ten times denser rows\nA_pos2 len=31 avg=40\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Optimize(naive, st, Options{Stats: over, TimeLimit: searchLimits.TimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Stats.Arrays["A_pos2"].AvgSegment; got != 40 {
		t.Errorf("A_pos2 average segment = %v, want the user's 40", got)
	}
	if res.Cost.Value <= base.Cost.Value {
		t.Errorf("denser rows should cost more: %s with the user's statistics, %s without", res.Cost, base.Cost)
	}
	var sb strings.Builder
	res.Stats.Format(&sb)
	back, err := ParseStats("formatted", strings.NewReader(sb.String()))
	if err != nil {
		t.Fatalf("the formatted statistics do not parse: %v\n%s", err, sb.String())
	}
	if back.Arrays["A_pos2"].AvgSegment != 40 || back.Ints["A_len1"] != res.Stats.Ints["A_len1"] {
		t.Errorf("statistics do not survive formatting:\n%s", sb.String())
	}
	if _, err := ParseStats("bad.txt", strings.NewReader("A_pos2 avg=x\n")); err == nil || !strings.Contains(err.Error(), "bad.txt:1") {
		t.Errorf("a bad statistic should be reported with its line, got %v", err)
	}
}

// TestCandidatesWithinTheCallersLimit: the naive plan and the program as
// written are made physical within the caller's time limit, not a time
// of their own. Past the deadline no rule runs on them: each dictionary
// they build stays a hash map, where P1 would make the output dense.
func TestCandidatesWithinTheCallersLimit(t *testing.T) {
	k := paperKernels[0]
	naive, st := setupKernel(t, k.name, 1, k.tensors)
	full, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	dense := func(res *Result, label string) int {
		for _, c := range res.Candidates {
			if c.Label == label {
				n := 0
				ir.Walk(c.Plan, func(e *ir.Expr) bool {
					if e.Op == ir.OpSingleton && e.Ann == ir.AnnDense {
						n++
					}
					return true
				})
				return n
			}
		}
		t.Fatalf("no %s candidate", label)
		return 0
	}
	if dense(full, "naive") == 0 {
		t.Fatalf("within the limit, the naive plan builds no dense dictionary:\n%s", ir.Format(full.Candidates[1].Plan))
	}
	res, err := Optimize(naive, st, Options{TimeLimit: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"naive", "as written"} {
		if n := dense(res, label); n > 0 {
			t.Errorf("past the caller's limit, the %s plan was still made physical by rules (%d dense dictionaries)", label, n)
		}
	}
	if res.Saturated || res.StopReason != "time limit" {
		t.Errorf("saturated %v, stop reason %q, want the time limit", res.Saturated, res.StopReason)
	}
}
