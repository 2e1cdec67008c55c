package main

import (
	"strings"
	"testing"
)

// A runaway program is refused before it runs, a long one stops at
// --time-limit: exit status 1 and a message, never a Go stack trace.
func TestRunLimits(t *testing.T) {
	dir := t.TempDir()
	runaway := writeFile(t, dir, "runaway.sdql", "sum(<i,_> in 0:100000000000) { i -> 1.0 }\n")
	long := writeFile(t, dir, "long.sdql", "CREATE int SCALAR n;\nsum(<i,_> in 0:n) sum(<j,_> in 0:n) (i * j) % 7\n")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", runaway, "--memory-limit", "1G"}, 1, "storel: refusing to run the plan: its result is estimated at 1e+11 entries (3.3 TiB), 3.35e+03x the memory limit of 1.0 GiB"},
		{[]string{"run", runaway, "--memory-limit", "1G", "--engine", "interp"}, 1, "refusing to run the plan"},
		{[]string{"run", long, "--data", "n=100000", "--time-limit", "50ms"}, 1, "storel: the run stopped at its time limit, 50ms (raise it with --time-limit"},
		{[]string{"run", long, "--data", "n=100", "--time-limit", "1m", "--memory-limit", "none", "--opt-time-limit", "2s"}, 0, ""},
		{[]string{"run", runaway, "--memory-limit", "12X"}, 2, "--memory-limit 12X: want a size such as 512M or 8G, or none"},
		{[]string{"run", runaway, "--time-limit", "-1s"}, 2, "--time-limit -1s: want a positive duration"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) || strings.Contains(stderr, "goroutine") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args[2:], " "), code, stderr, c.code, c.msg)
		}
	}
}
