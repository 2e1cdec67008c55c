package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"time"

	"github.com/storel/storel"
	"github.com/storel/storel/engine"
)

// The engine checks a run's limits between windows of its outermost sum.
// A plan whose top is not such a sum (2.0 + sum(...)), or one window that
// runs very long, is never checked there; the watchdog is the backstop:
// it samples the heap and the clock and ends the process with a message
// and exit status 1. Its thresholds lie above the engine's, so a run the
// engine can stop ends through the engine's error path.
const (
	watchdogEvery     = 20 * time.Millisecond
	watchdogMemSlack  = 1.25            // the heap may pass the limit by this factor first
	watchdogTimeSlack = 2               // the clock may pass the limit by this factor first
	watchdogTimeGrace = 1 * time.Second // plus this, for the optimizer and compiler before execution
)

// exit ends the process; a test replaces it.
var exit = os.Exit

// startWatchdog watches a run under the limits of ro and returns the
// function that stops watching.
func startWatchdog(stderr io.Writer, ro storel.RunOptions) (stop func()) {
	memLimit, timeLimit := ro.MemoryBudget(), ro.TimeLimit
	if memLimit == 0 && timeLimit == 0 {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(stopped)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(watchdogEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var msg string
			if timeLimit > 0 {
				if d := time.Since(start); d > watchdogTimeSlack*timeLimit+watchdogTimeGrace {
					msg = fmt.Sprintf("the run stopped at its time limit, %s: it ran %s (raise it with --time-limit)", timeLimit, d.Round(time.Millisecond))
				}
			}
			if memLimit > 0 {
				metrics.Read(sample)
				if held := sample[0].Value.Uint64(); float64(held) > watchdogMemSlack*float64(memLimit) {
					msg = fmt.Sprintf("the run stopped at its memory limit: it holds %s, the limit is %s (raise it with --memory-limit)", engine.Bytes(held), engine.Bytes(memLimit))
				}
			}
			if msg != "" {
				fmt.Fprintln(stderr, "storel: "+msg)
				exit(1)
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
