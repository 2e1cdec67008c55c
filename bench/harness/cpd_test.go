package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCPDOnTinyData runs the cpd experiment with the real storel on a tiny
// stand-in for orghs: storel checked by the reference interpreter at each
// rank, the Python peers checked against storel where Python has them
// (skipped with the reason where not), and the report's table.
func TestCPDOnTinyData(t *testing.T) {
	cfg, _ := tinyDataConfig(t)
	cfg.Python, cfg.PyPeer = "/usr/bin/python3", filepath.Join(cfg.Repo, "bench", "peers", "pypeer.py")
	cfg.Timeout, cfg.Rounds, cfg.Experiments = time.Minute, 1, []string{"cpd"}
	h := New(cfg)
	if err := h.RunAll(); err != nil {
		t.Fatal(err)
	}
	if len(h.Failures) > 0 {
		t.Errorf("failures: %q", h.Failures)
	}
	seen := map[string]int{}
	for _, m := range h.Results {
		if m.Experiment != "cpd" || m.Kernel != cpdKernel || m.Input != "orghs" {
			t.Errorf("a measurement of another case: %+v", m)
			continue
		}
		seen[m.System]++
		switch m.System {
		case "storel":
			if m.Status != StatusOK {
				t.Errorf("storel at rank %g: %s (%s)", m.X, m.Status, m.Note)
			}
		case "oracle":
			if m.Status != StatusOK || m.CheckedAgainst != "storel" {
				t.Errorf("the reference interpreter at rank %g: %s, checked against %q (%s)", m.X, m.Status, m.CheckedAgainst, m.Note)
			}
		case "numpy", "torch":
			if m.Status != StatusOK && m.Status != StatusSkip || m.Status == StatusSkip && m.Note == "" {
				t.Errorf("%s at rank %g: %s (%s)", m.System, m.X, m.Status, m.Note)
			}
			if m.Status == StatusOK && m.CheckedAgainst != "storel" {
				t.Errorf("%s at rank %g checked against %q", m.System, m.X, m.CheckedAgainst)
			}
		}
	}
	if seen["storel"] != len(cpdRanks) || seen["oracle"] != len(cpdRanks) || seen["numpy"] != len(cpdRanks) {
		t.Errorf("systems run: %v", seen)
	}
	var all []*Measurement
	for i := range h.Results {
		all = append(all, &h.Results[i])
	}
	w := &mdWriter{}
	writeCPD(w, all)
	report := w.sb.String()
	for _, want := range []string{"| orghs | 16 |", "| orghs | 32 |", "storel / NumPy"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}
