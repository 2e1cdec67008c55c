package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/storel/storel"
)

// A plan whose top is not a sum runs outside the engine's windowed
// checks: the watchdog stops it at its time limit.
func TestWatchdogStopsAPlanTheEngineCannotCheck(t *testing.T) {
	dir := t.TempDir()
	top := writeFile(t, dir, "top.sdql", "CREATE TENSOR R AS 2.0 + sum(<i,_> in 0:100000000000) 1.0;\n")
	cmd := exec.Command(os.Args[0], "run", top, "--time-limit", "100ms")
	cmd.Env = append(os.Environ(), "STOREL_TEST_MAIN=1")
	start := time.Now()
	done := make(chan struct{})
	timer := time.AfterFunc(60*time.Second, func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
		}
	})
	out, err := cmd.CombinedOutput()
	close(done)
	timer.Stop()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "storel: the run stopped at its time limit, 100ms") || strings.Contains(string(out), "goroutine") {
		t.Fatalf("after %s: %v\n%s", time.Since(start), err, out)
	}
}

// watchdogSink holds memory the watchdog must see as live.
var watchdogSink [][]byte

func TestWatchdogMemory(t *testing.T) {
	codes := make(chan int, 4)
	exit = func(code int) { codes <- code }
	defer func() { exit = os.Exit }()
	var stderr bytes.Buffer
	stop := startWatchdog(&stderr, storel.RunOptions{MemoryLimit: 1 << 20})
	for i := 0; i < 64; i++ {
		watchdogSink = append(watchdogSink, make([]byte, 1<<20))
	}
	defer func() { watchdogSink = nil }()
	runtime.GC() // the live heap is measured by the collector
	var code int
	select {
	case code = <-codes:
	case <-time.After(10 * time.Second):
	}
	stop()
	if code != 1 || !strings.Contains(stderr.String(), "storel: the run stopped at its memory limit: it holds") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	// Within its limits, it says nothing.
	stderr.Reset()
	stop = startWatchdog(&stderr, storel.RunOptions{MemoryLimit: 1 << 40, TimeLimit: time.Hour})
	time.Sleep(3 * watchdogEvery)
	stop()
	if stderr.Len() != 0 || len(codes) != 0 {
		t.Fatalf("%d more exits, stderr %q", len(codes), stderr.String())
	}
}
