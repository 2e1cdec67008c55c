package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// TestRunMemoryKept checks that a kernel's runs after the first take
// their loops' working memory from the runs before: what a run
// allocates is its frame, its result and the split's bookkeeping, a
// few objects however many loops and batches the plan has (the loops'
// states alone were 19 to 40 more).
func TestRunMemoryKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kc := range kernelCases(2, rng) {
		if kc.name != "SpMV" && kc.name != "BATAX" && kc.name != "SumMMM" {
			continue
		}
		k, err := Compile(parse(t, kc.plan, kc.st), SchemaOf(kc.st), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Exec(kc.st); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(10, func() { _, _ = k.Exec(kc.st) }); n > 12 {
			t.Errorf("%s: %.0f allocations a run, want at most 12", kc.name, n)
		}
	}
}

// TestKernelReused runs each paper kernel, compiled once, on inputs of
// several sizes in turn (1 and 3 threads): every run equals the
// interpreter, and a result taken before later runs still does (it
// shares no memory the kernel keeps).
func TestKernelReused(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sets := [][]kernelCase{kernelCases(1, rng), kernelCases(3, rng), kernelCases(2, rng)}
	for i, kc := range sets[0] {
		e := parse(t, kc.plan, kc.st)
		for _, threads := range []int{1, 3} {
			k, err := Compile(e, SchemaOf(kc.st), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			var first *Result
			for s, set := range sets {
				st := set[i].st
				r, err := k.Exec(st)
				if err != nil {
					t.Fatalf("%s threads=%d input %d: %v", kc.name, threads, s, err)
				}
				want, err := eval.Eval(e, st)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Value(); !value.Equal(got, want, 1e-9) {
					t.Fatalf("%s threads=%d input %d:\nengine:      %.300s\ninterpreter: %.300s", kc.name, threads, s, value.Format(got), value.Format(want))
				}
				if first == nil {
					first = r
				}
			}
			if got, want := first.Value(), sets[0][i].want(); !value.Equal(got, want, 1e-9) {
				t.Fatalf("%s threads=%d: the first result changed with later runs\nnow: %.300s\nwas: %.300s", kc.name, threads, value.Format(got), value.Format(want))
			}
		}
	}
}

// TestRandomProgramsReused runs each random program, compiled once, on
// several random stores in turn, so that runs follow failed runs (a
// read outside an array) and runs that took other paths: each equals
// the interpreter, or both fail.
func TestRandomProgramsReused(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	rng := rand.New(rand.NewPCG(11, 12))
	afterFailure := 0
	for checked, i := 0, 0; checked < n && i < 50*n; i++ {
		sts := []storage.Store{randomStore(rng), randomStore(rng), randomStore(rng), randomStore(rng)}
		g := &gen{rng: rng}
		types := []gtype{tInt, tReal, {depth: 1}, {depth: 1, real: true}, {depth: 2, real: true}, {depth: 2}}
		src := g.expr(types[g.pick(len(types))], 4+g.pick(14))
		e, err := sdql.CompileExpr("random.sdql", []byte(src), envOf(sts[0]))
		if err != nil {
			continue
		}
		checked++
		for _, threads := range []int{1, 3} {
			k, err := Compile(e, SchemaOf(sts[0]), Options{Threads: threads})
			if err != nil {
				t.Fatalf("case %d: %s: %v", i, src, err)
			}
			failed := false
			for s, st := range sts {
				want, werr := eval.EvalWith(e, st, eval.Options{MaxSteps: 2_000_000})
				if werr != nil && strings.Contains(werr.Error(), "step limit") {
					break
				}
				got, err := k.Run(st)
				switch {
				case werr != nil && err != nil:
					failed = true
					continue
				case werr != nil:
					t.Fatalf("case %d threads=%d store %d\n%s\ninterpreter failed: %v\nengine returned %s", i, threads, s, src, werr, value.Format(got))
				case err != nil:
					t.Fatalf("case %d threads=%d store %d\n%s\nengine failed: %v\ninterpreter returned %s", i, threads, s, src, err, value.Format(want))
				}
				if !value.Equal(got, want, 1e-9) {
					t.Fatalf("case %d threads=%d store %d (after a failed run: %v)\n%s\nengine:      %s\ninterpreter: %s\nstore: %s", i, threads, s, failed, src, value.Format(got), value.Format(want), dumpStore(st))
				}
				if failed {
					afterFailure++
				}
			}
		}
	}
	if afterFailure == 0 {
		t.Fatalf("no run followed a failed one")
	}
	t.Logf("%d runs after a failed run", afterFailure)
}
