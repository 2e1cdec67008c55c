package opt

import (
	"sync"
	"testing"
)

// TestConcurrentOptimizations runs optimizations in parallel: the compiled
// rule patterns are shared between sessions and must only be read.
func TestConcurrentOptimizations(t *testing.T) {
	var wg sync.WaitGroup
	for _, k := range paperKernels {
		naive, st := setupKernel(t, k.name, 1, k.tensors)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Optimize(naive, st, Options{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
