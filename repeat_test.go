package storel_test

import (
	"math/rand"
	"runtime"
	"testing"

	storel "github.com/storel/storel"
	"github.com/storel/storel/examples"
	"github.com/storel/storel/storage"
)

// TestRepeatStartsCollected: repeated runs (a measurement) start on a
// collected heap, so that a collection of what loading and optimizing
// left does not fall on the timed runs; a single run adds no collection.
func TestRepeatStartsCollected(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	w := storel.NewWorkspace()
	if err := w.AddTensor("A", randCOO(r, 0.1, 40, 30), "hash"); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 30)
	for i := range x {
		x[i] = float64(i)
	}
	w.SetObject("x", storage.RealArray(x))
	src, _ := examples.Source("spmv")
	p, err := w.Compile("spmv.sdql", src, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range []storel.Engine{storel.EngineCompiled, storel.EngineInterp} {
		forced := func(repeat int) uint32 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := p.Run(storel.RunOptions{Threads: 1, Repeat: repeat, NoValue: true, Engine: engine}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			return after.NumForcedGC - before.NumForcedGC
		}
		if n := forced(1); n != 0 {
			t.Errorf("%s, one run: %d forced collections, want 0", engine, n)
		}
		if n := forced(3); n != 1 {
			t.Errorf("%s, three runs: %d forced collections, want 1", engine, n)
		}
	}
}
