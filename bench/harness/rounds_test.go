package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// roundJob is a system that writes tns as its answer, logs its name and
// reports, on its n-th run, the n-th of times as its execute time (and
// fails past the end of times).
func roundJob(dir, system, tns string, reference bool, times ...string) job {
	ans := filepath.Join(dir, system+".tns")
	count := filepath.Join(dir, system+".count")
	script := `n=$(cat ` + count + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + count + `
echo ` + system + ` >> ` + filepath.Join(dir, "log") + `
set -- ` + strings.Join(times, " ") + `
if [ $n -gt $# ]; then echo "run $n fails" >&2; exit 1; fi
shift $((n-1))
printf '` + tns + `' > ` + ans + `
echo "timing: load 2 ms" >&2; echo "timing: execute $1 ms" >&2`
	return job{system: system, reference: reference, answer: ans, threads: 1,
		exec: Exec{Args: []string{"sh", "-c", script}, Timeout: 10 * time.Second}}
}

func TestRoundsRunTheSystemsInTurnAndTakeMedians(t *testing.T) {
	dir := t.TempDir()
	h := New(Config{Rounds: 3})
	oracle := roundJob(dir, "oracle", `1 2\n`, false, "7")
	oracle.oracle = true
	out := h.runJobs(caseKey{"e2e", "spmv", "x", 0}, []job{
		roundJob(dir, "storel", `1 2\n`, true, "10", "5", "1"),
		oracle,
		roundJob(dir, "scipy", `1 2\n`, false, "4", "6", "9"),
		roundJob(dir, "torch", `1 2\n`, false, "3"),        // fails in round 2
		roundJob(dir, "numpy", `1 2\n`, false, "13", "13"), // past 4x the fastest (torch)
	})
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "storel oracle scipy torch numpy storel scipy torch storel scipy"
	if got := strings.Join(strings.Fields(string(log)), " "); got != want {
		t.Errorf("runs in the order %q, want %q", got, want)
	}
	for i, want := range []float64{5, 7, 6, 3, 13} {
		if out[i].Execute == nil || *out[i].Execute != want || out[i].Load == nil || *out[i].Load != 2 {
			t.Errorf("%s: execute %s load %s, want %g and 2", out[i].System, fmtMS(out[i].Execute), fmtMS(out[i].Load), want)
		}
		if out[i].Status != StatusOK {
			t.Errorf("%s: %s %s", out[i].System, out[i].Status, out[i].Note)
		}
	}
	if !strings.Contains(out[0].Note, "median of 3 rounds") || !strings.Contains(out[2].Note, "median of 3 rounds") ||
		!strings.Contains(out[3].Note, "round 2 failed (run 2 fails") || out[1].Note != "" || out[4].Note != "" {
		t.Errorf("notes: %q, %q, %q, %q, %q", out[0].Note, out[1].Note, out[2].Note, out[3].Note, out[4].Note)
	}

	// Outside e2e, and with rounds unset, every system runs once.
	for _, c := range []struct {
		experiment string
		rounds     int
	}{{"sweep", 3}, {"e2e", 0}} {
		dir := t.TempDir()
		h := New(Config{Rounds: c.rounds})
		h.runJobs(caseKey{c.experiment, "spmv", "x", 0}, []job{roundJob(dir, "storel", `1 2\n`, true, "1", "1"), roundJob(dir, "scipy", `1 2\n`, false, "1", "1")})
		if log, _ := os.ReadFile(filepath.Join(dir, "log")); strings.Join(strings.Fields(string(log)), " ") != "storel scipy" {
			t.Errorf("%s with rounds %d: runs %q", c.experiment, c.rounds, log)
		}
	}
}

func TestShortRunsRepeatMoreInLaterRounds(t *testing.T) {
	for _, c := range []struct {
		exec        float64
		repeat, out int
	}{
		{4, 5, 100},     // 400 ms of executions
		{0.1, 5, 200},   // capped
		{1000, 5, 5},    // long runs keep the configured repeat
		{0, 5, 5},       // no timing
		{0.1, 300, 300}, // a larger configured repeat is kept
	} {
		if got := roundRepeat(c.exec, c.repeat); got != c.out {
			t.Errorf("roundRepeat(%g, %d) = %d, want %d", c.exec, c.repeat, got, c.out)
		}
	}
	args := []string{"storel", "run", "p.sdql", "--repeat", "5", "--threads", "2"}
	got := withRepeat(args, 80)
	if strings.Join(got, " ") != "storel run p.sdql --repeat 80 --threads 2" || args[4] != "5" {
		t.Errorf("withRepeat: %q (from %q)", got, args)
	}
	if h := New(Config{Rounds: 3}); h.rounds(caseKey{"threads", "spmv", "x", 0}) != 3 {
		t.Errorf("the threads experiment runs in one round; thread counts need rounds in turn")
	}
}
