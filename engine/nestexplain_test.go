package engine

import (
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("engine.update", false, "TestNestExplain: rewrite testdata/nest-explain.golden")

// TestNestExplain pins what Kernel.Explain says of the paper's kernels
// (the hand-written physical plans of kernels_test.go) and of the issue's
// shapes: per loop the iterator, how it runs, the guards and how they
// are discharged, the sink and the split at 2 threads.
func TestNestExplain(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	var b strings.Builder
	cases := kernelCases(1, rng)
	st := cases[0].st
	for _, kc := range cases {
		b.WriteString("== " + kc.name + "\n")
		k, err := Compile(parse(t, kc.plan, kc.st), SchemaOf(kc.st), Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		k.Explain(&b)
	}
	a := randCSR(30, 20, 90, rng)
	st["beta"] = st["x"]
	a.store(st, "A")
	vecStore(st, "x", 20, rng)
	denseStore(st, "M", 30, 20, rng)
	b3 := randCSF(10, 8, 9, 60, rng)
	b3.store(st, "B")
	denseStore(st, "C", 8, 16, rng)
	denseStore(st, "D", 16, 9, rng)
	st["beta"] = st["x_len1"]
	randCSR(30, 20, 90, rng).store(st, "S")
	denseStore(st, "U", 30, 8, rng)
	denseStore(st, "V", 20, 8, rng)
	ellStore(st, 30, 12, 20, rng)
	ell := func(cond string) string {
		return `sum(<i1, _> in 0:R) { @dense i1 -> sum(<s, _> in 0:W) ` + cond + `E_val(W * i1 + s) * x_val(E_col(W * i1 + s)) }`
	}
	for _, c := range []struct{ name, plan string }{
		{"SpMV, x a tensor", nestSpMV}, {"BATAX, x a tensor", nestBATAX},
		{"dense MV", nestDenseMV}, {"MTTKRP, dense factors", nestMTTKRP},
		{"MTTKRP, the optimizer's plan", shortMTTKRP}, {"MTTKRP, guards kept", shortMTTKRPGuarded},
		{"a product with a sum into a scalar", shortScalar}, {"TTV", shortTTV}, {"SDDMM, dense factors", shortSDDMM},
		{"a row's let times the terms of a row", strings.ReplaceAll(planRowSumLet, "B_", "A_")},
		{"A times its transpose by merges of rows", `sum(<i, _> in 0:A_len1)
  { @dense i -> sum(<j, _> in 0:A_len1)
    { @dense j -> merge(<p, q, _> in <A_idx2(A_pos2(i):A_pos2(i + 1)), A_idx2(A_pos2(j):A_pos2(j + 1))>)
      A_val(p) * A_val(q) } }`},
		{"SpMV over a user's ELL", ell("")},
		{"SpMV over a user's ELL, padding skipped by an if", ell("if 0 <= E_col(W * i1 + s) then ")},
	} {
		b.WriteString("== " + c.name + "\n")
		k, err := Compile(parse(t, c.plan, st), SchemaOf(st), Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		k.Explain(&b)
	}
	const path = "testdata/nest-explain.golden"
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("explain differs from %s (go test ./engine -run TestNestExplain -engine.update rewrites it):\n%s", path, b.String())
	}
}
