package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Status is how one run ended.
type Status string

const (
	StatusOK      Status = "ok"      // ran, and its answer agrees with the reference
	StatusWrong   Status = "WRONG"   // ran, and its answer disagrees: a failure
	StatusTimeout Status = "timeout" // killed after the per-run time limit
	StatusError   Status = "error"   // exited with an error
	StatusSkip    Status = "skip"    // not run (input does not fit, peer missing, ...)
	StatusNoCheck Status = "unchecked"
)

// Exec is one process to run: a system on one input.
type Exec struct {
	Args    []string // program and arguments
	Env     []string // added to the environment
	Timeout time.Duration
	// MaxRSS, when positive, kills the process once its resident memory
	// passes this many bytes, before the kernel's OOM killer picks a
	// victim on a machine others share.
	MaxRSS int64
}

// ExecResult is what a process reported.
type ExecResult struct {
	Status  Status
	Timings map[string]float64 // phase -> milliseconds, from "timing:" lines
	Stdout  string
	Stderr  string
	Wall    time.Duration
	Err     string
	Code    int
}

var timingLine = regexp.MustCompile(`(?m)^timing:\s+(\S+)\s+([0-9.eE+-]+)\s*ms\s*$`)

// ParseTimings collects "timing: <phase> <ms> ms" lines; a phase reported
// twice keeps its last value.
func ParseTimings(text string) map[string]float64 {
	t := map[string]float64{}
	for _, m := range timingLine.FindAllStringSubmatch(text, -1) {
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			t[m[1]] = v
		}
	}
	return t
}

// Run runs e, killing its whole process group at the timeout.
func Run(e Exec) ExecResult {
	ctx, cancel := context.WithTimeout(context.Background(), e.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Args[0], e.Args[1:]...)
	cmd.Env = append(os.Environ(), e.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &stdout, max: 1 << 20}
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 1 << 20}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ExecResult{Status: StatusError, Err: err.Error()}
	}
	var overMemory atomic.Int64
	done := make(chan struct{})
	if e.MaxRSS > 0 {
		go watchMemory(cmd.Process.Pid, e.MaxRSS, &overMemory, done)
	}
	err := cmd.Wait()
	close(done)
	r := ExecResult{Wall: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String()}
	r.Timings = ParseTimings(r.Stderr + "\n" + r.Stdout)
	switch {
	case overMemory.Load() > 0:
		r.Status = StatusError
		r.Err = fmt.Sprintf("killed: resident memory reached %.1f GB, over the limit of %.1f GB", float64(overMemory.Load())/1e9, float64(e.MaxRSS)/1e9)
	case ctx.Err() == context.DeadlineExceeded:
		r.Status = StatusTimeout
		r.Err = fmt.Sprintf("no answer within %s", e.Timeout)
	case err != nil:
		r.Status = StatusError
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.Code = ee.ExitCode()
		}
		r.Err = lastLines(r.Stderr, 3)
		if r.Err == "" {
			r.Err = err.Error()
		}
	default:
		r.Status = StatusOK
	}
	return r
}

// limitedBuffer keeps the first max bytes of a stream and drops the rest,
// so a chatty process cannot fill memory.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}

// lastLines returns the last n non-timing lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "timing:") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// watchMemory polls the resident memory of pid and kills its process
// group when it passes limit, recording the size it reached in over.
func watchMemory(pid int, limit int64, over *atomic.Int64, done <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	path := fmt.Sprintf("/proc/%d/status", pid)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(rest)
				if len(f) == 0 {
					break
				}
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil && kb*1024 > limit {
					over.Store(kb * 1024)
					syscall.Kill(-pid, syscall.SIGKILL)
					return
				}
			}
		}
	}
}

// DefaultMaxRSS is the memory limit of one run: 60% of the machine's
// memory (0 when unknown).
func DefaultMaxRSS() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024 * 6 / 10
				}
			}
		}
	}
	return 0
}
