package main

import (
	"testing"

	"github.com/storel/storel"
)

// A run raises the GC percent unless the user set GOGC, whose value the
// runtime has applied already and which stays.
func TestGCPercent(t *testing.T) {
	env := func(gogc string) func(string) string {
		return func(k string) string {
			if k == "GOGC" {
				return gogc
			}
			return ""
		}
	}
	if p := gcPercent(env("")); p != storel.BatchGCPercent || p <= 100 {
		t.Errorf("GOGC unset: GC percent %d, want %d (above the Go default)", p, storel.BatchGCPercent)
	}
	for _, gogc := range []string{"100", "50", "off"} {
		if p := gcPercent(env(gogc)); p != 0 {
			t.Errorf("GOGC=%s: GC percent %d, want the user's (0)", gogc, p)
		}
	}
}
