// Command machineprobe prints what a machine gives a split run: the time of
// the same compute work on 1-16 goroutines at once (are the cores real?),
// the memory bandwidth 1-16 goroutines read, how long after the first go
// statement the last of 15 new goroutines starts (the scheduler wakes
// sleeping threads one after another), and the cost of time.Now. Build it
// here and run it on the machine whose thread scaling is measured
// (results/threads-16core.md):
//
//	CGO_ENABLED=0 go build -o machineprobe ./cmd/machineprobe
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

var sink [64]float64

func work(n int, slot int) {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	sink[slot] = x
}

func mem(buf []float64) float64 {
	s := 0.0
	for r := 0; r < 4; r++ {
		for i := 0; i < len(buf); i += 8 {
			s += buf[i]
		}
	}
	return s
}

// fastest returns the least time, of three tries, that g goroutines
// running f(0..g-1) at once take.
func fastest(g int, f func(i int)) time.Duration {
	best := time.Hour
	for range 3 {
		t0 := time.Now()
		var wg sync.WaitGroup
		for i := range g {
			wg.Add(1)
			go func() { defer wg.Done(); f(i) }()
		}
		wg.Wait()
		best = min(best, time.Since(t0))
	}
	return best
}

func main() {
	fmt.Println("NumCPU", runtime.NumCPU(), "GOMAXPROCS", runtime.GOMAXPROCS(0))
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		fmt.Printf("cpu.max %s", b)
	}
	const n = 50_000_000
	for _, g := range []int{1, 2, 4, 8, 12, 16} {
		best := fastest(g, func(i int) { work(n, i) })
		fmt.Printf("compute: %2d goroutines x same work: %7.1f ms (1 goroutine ideal ratio 1.0)\n", g, float64(best)/1e6)
	}
	bufs := make([][]float64, 16)
	for i := range bufs {
		bufs[i] = make([]float64, 4<<20) // 32 MB each
		for j := range bufs[i] {
			bufs[i][j] = 1
		}
	}
	for _, g := range []int{1, 2, 4, 8, 16} {
		best := fastest(g, func(i int) { sink[i] = mem(bufs[i]) })
		gb := float64(g) * 4 * 32 / 1024 * 1e9 / float64(best)
		fmt.Printf("memory: %2d goroutines each 4x32 MB: %7.1f ms, %.1f GB/s\n", g, float64(best)/1e6, gb)
	}
	// wake latency: start 15 goroutines, each records its start offset
	for rep := 0; rep < 5; rep++ {
		time.Sleep(5 * time.Millisecond)
		var mu sync.Mutex
		var last time.Duration
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := 0; i < 15; i++ {
			wg.Add(1)
			go func() {
				d := time.Since(t0)
				mu.Lock()
				last = max(last, d)
				mu.Unlock()
				work(2_000_000, 20+i)
				wg.Done()
			}()
		}
		wg.Wait()
		fmt.Printf("wake: the last of 15 goroutines started %.1f us after the first go statement\n", float64(last)/1e3)
	}
	t0 := time.Now()
	for i := 0; i < 100000; i++ {
		_ = time.Now()
	}
	fmt.Printf("time.Now: %.0f ns each\n", float64(time.Since(t0))/100000)
}
