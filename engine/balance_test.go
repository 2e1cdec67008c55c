package engine

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// splitBalance records, per worker, the time and the thread CPU time
// (where the system gives it) the chunks of split runs took, through
// chunkTrace: the balance of a split, readable on a loaded machine where
// wall-clock speed-ups are not.
type splitBalance struct {
	mu     sync.Mutex
	wall   map[int]time.Duration
	cpu    map[int]time.Duration
	chunks map[int]int
	hasCPU bool
}

// traceBalance installs a splitBalance as chunkTrace until stop is called.
func traceBalance() (b *splitBalance, stop func()) {
	b = &splitBalance{wall: map[int]time.Duration{}, cpu: map[int]time.Duration{}, chunks: map[int]int{}, hasCPU: true}
	chunkTrace = func(w int, _ [2]int64) func() {
		runtime.LockOSThread()
		t0 := time.Now()
		c0, ok0 := threadCPU()
		return func() {
			c1, ok1 := threadCPU()
			d := time.Since(t0)
			runtime.UnlockOSThread()
			b.mu.Lock()
			defer b.mu.Unlock()
			b.wall[w] += d
			b.cpu[w] += time.Duration(c1 - c0)
			b.chunks[w]++
			b.hasCPU = b.hasCPU && ok0 && ok1
		}
	}
	return b, func() { chunkTrace = nil }
}

// busy returns the per-worker figure the balance is judged on: thread CPU
// time where known, else wall time.
func (b *splitBalance) busy() map[int]time.Duration {
	if b.hasCPU {
		return b.cpu
	}
	return b.wall
}

// ratio is the busiest worker's time over the mean over workers (1 is a
// perfect balance), and total the sum over workers.
func (b *splitBalance) ratio() (ratio float64, total time.Duration) {
	m := b.busy()
	var most time.Duration
	for _, d := range m {
		total += d
		most = max(most, d)
	}
	if len(m) == 0 || total == 0 {
		return 1, 0
	}
	return float64(most) * float64(len(m)) / float64(total), total
}

func (b *splitBalance) String() string {
	r, total := b.ratio()
	what := "cpu"
	if !b.hasCPU {
		what = "wall"
	}
	return fmt.Sprintf("%s per worker %v (chunks %v), total %v, max/mean %.2f", what, b.busy(), b.chunks, total, r)
}
