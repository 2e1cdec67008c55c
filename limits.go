package storel

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/storel/storel/engine"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/storage"
)

// DefaultMemoryLimit is the memory budget of a run when RunOptions gives
// none: three quarters of the machine's memory, or of the cgroup's limit
// when the process runs under a lower one; 0 if neither can be read.
func DefaultMemoryLimit() uint64 {
	total := memTotal()
	if c := cgroupLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total / 4 * 3
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return n << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of the process's cgroup (v2, then
// v1); 0 when there is none.
func cgroupLimit() uint64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		if err == nil && n < 1<<60 {
			return n
		}
	}
	return 0
}

// ParseBytes reads a memory size: a number of bytes with an optional
// unit, K, M, G, T (powers of 1024; KiB, KB and k are the same), as in
// 512M, 1.5GiB or 2000000.
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	f, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size (want bytes, or a number with K, M, G or T)", s)
	}
	unit := strings.ToUpper(strings.TrimSpace(t[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	shift, ok := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
	if !ok {
		return 0, fmt.Errorf("%q is not a size (want bytes, or a number with K, M, G or T)", s)
	}
	return uint64(f * float64(uint64(1)<<shift)), nil
}

// LimitError reports a run refused or stopped because of a limit.
type LimitError struct {
	Limit string // "memory" or "time"
	Msg   string
}

func (e *LimitError) Error() string { return e.Msg }

// MemoryBudget is the heap limit, in bytes, that MemoryLimit resolves
// to: 0 for none.
func (o RunOptions) MemoryBudget() uint64 {
	switch {
	case o.MemoryLimit < 0:
		return 0
	case o.MemoryLimit == 0:
		return DefaultMemoryLimit()
	}
	return uint64(o.MemoryLimit)
}

// checkFootprint refuses a plan whose estimated result or largest
// temporary, on top of the heap already held (the inputs), exceeds limit.
func checkFootprint(plan *ir.Expr, st storage.Store, stats *opt.Stats, limit uint64) error {
	fp, err := opt.EstimateFootprint(plan, st, stats)
	if err != nil {
		return nil // no estimate: the run's own checks still apply
	}
	held := float64(engine.HeapBytes())
	if held+fp.Result+fp.Temp <= float64(limit) {
		return nil
	}
	what := fmt.Sprintf("its result is estimated at %s entries (%s)", count(fp.ResultCard.Total()), bytesOf(fp.Result))
	if fp.Temp > fp.Result {
		let := fp.TempExpr
		what = fmt.Sprintf("the dictionary it builds for %s at %s is estimated at %s entries (%s)", let.Vars[0], let.Pos, count(fp.TempCard.Total()), bytesOf(fp.Temp))
	}
	need := held + fp.Result + fp.Temp
	return &LimitError{Limit: "memory", Msg: fmt.Sprintf("refusing to run the plan: %s, %.3gx the memory limit of %s (%s are held already); raise the limit (--memory-limit, RunOptions.MemoryLimit) if the estimate is wrong",
		what, need/float64(limit), engine.Bytes(limit), engine.Bytes(uint64(held)))}
}

func count(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

func bytesOf(x float64) string {
	if x >= 1<<62 {
		return fmt.Sprintf("%.3g B", x)
	}
	return engine.Bytes(uint64(x))
}

// withMemoryLimit sets the Go runtime's soft memory limit to limit for the
// run (the collector works harder near it) and returns the function that
// restores the previous one.
func withMemoryLimit(limit uint64) func() {
	if limit == 0 || limit > 1<<62 {
		return func() {}
	}
	old := debug.SetMemoryLimit(int64(limit))
	return func() { debug.SetMemoryLimit(old) }
}
