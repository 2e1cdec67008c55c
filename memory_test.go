package storel_test

import (
	"math/rand"
	"testing"

	storel "github.com/storel/storel"
	"github.com/storel/storel/examples"
)

// TestMTTKRPMemory: the fused MTTKRP plan reads the CSF tensor and the
// factors in place; the run's peak (inputs plus what the kernel
// allocates) stays within twice its inputs plus its output. A plan that
// built the tensor's logical dictionary (a hash map per fiber) would need
// several times the tensor's arrays.
func TestMTTKRPMemory(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	w := storel.NewWorkspace()
	for _, x := range []struct {
		name, format string
		density      float64
		dims         []int64
	}{
		{"B", "csf", 0.01, []int64{150, 100, 200}},
		{"C", "csr", 0.5, []int64{100, 25}},
		{"D", "csr", 0.5, []int64{25, 200}},
	} {
		if err := w.AddTensor(x.name, randCOO(r, x.density, x.dims...), x.format); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := examples.Source("mttkrp")
	p, err := w.Compile("mttkrp.sdql", src, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(storel.RunOptions{Threads: 1, NoValue: true, MeasureMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Memory
	if m == nil || m.Inputs == 0 || m.Output == 0 {
		t.Fatalf("no memory figures: %+v", m)
	}
	if m.Ratio() > 2 {
		t.Errorf("inputs %d B, output %d B, kernel peak %d B: %.2fx inputs + output, want at most 2x", m.Inputs, m.Output, m.KernelPeak, m.Ratio())
	}
	t.Logf("inputs %d B, output %d B, kernel peak %d B: %.2fx", m.Inputs, m.Output, m.KernelPeak, m.Ratio())
}
