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
	err := cmd.Run()
	r := ExecResult{Wall: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String()}
	r.Timings = ParseTimings(r.Stderr + "\n" + r.Stdout)
	switch {
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
