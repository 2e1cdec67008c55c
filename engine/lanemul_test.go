package engine

import (
	"math"
	"math/rand"
	"testing"
)

// laneValues returns a random value and a slice of n of them: one in six
// an infinity, a NaN, a zero of either sign or an extreme, the others
// of magnitudes whose products round.
func laneValues(rng *rand.Rand) (val func() float64, fill func(n int) []float64) {
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e308, 5e-324, -1}
	val = func() float64 {
		if rng.Intn(6) == 0 {
			return special[rng.Intn(len(special))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.Intn(12)-6))
	}
	fill = func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = val()
		}
		return s
	}
	return val, fill
}

// TestMulAddScalar checks the vector loops of a one-value product's
// lanes against the Go loop bit for bit, at every length to 41 and at
// offsets that leave the slices unaligned, with infinities, NaNs,
// zeros of both signs and values whose products round.
func TestMulAddScalar(t *testing.T) {
	val, fill := laneValues(rand.New(rand.NewSource(7)))
	was := useLaneMul
	defer func() { useLaneMul = was }()
	for n := 0; n <= 41; n++ {
		for off := range 3 {
			for _, withC := range []bool{false, true} {
				x := val()
				acc, bs := fill(n + off)[off:], fill(n + off)[off:]
				var cs []float64
				if withC {
					cs = fill(n + off)[off:]
				}
				want, got := append([]float64(nil), acc...), append([]float64(nil), acc...)
				useLaneMul = false
				mulAddScalar(want, x, bs, cs)
				useLaneMul = was
				mulAddScalar(got, x, bs, cs)
				for q := range want {
					if math.Float64bits(want[q]) != math.Float64bits(got[q]) && !(math.IsNaN(want[q]) && math.IsNaN(got[q])) {
						t.Fatalf("n %d off %d c %v lane %d: %v, want %v (x %v b %v)", n, off, withC, q, got[q], want[q], x, bs[q])
					}
				}
			}
		}
	}
}

// TestRowBatchSet checks the vector loop of a batch of rows against the
// Go loop: the first row with a zero lane, and the bits of the rows up
// to it, for rows of one to four positions, of four to 36 lanes (blocks
// of sixteen, then of four), with and without a third factor, with values of magnitudes whose products round and with
// infinities, NaNs, zeros of both signs and extremes among them.
func TestRowBatchSet(t *testing.T) {
	val, fill := laneValues(rand.New(rand.NewSource(9)))
	rng := rand.New(rand.NewSource(10))
	was := useLaneMul
	defer func() { useLaneMul = was }()
	for _, special := range []bool{false, true} {
		for _, n := range []int{4, 8, 12, 16, 20, 36} {
			for _, withC := range []bool{false, true} {
				for range 40 {
					v, vs := val, fill
					if !special {
						v = func() float64 { return rng.NormFloat64() * 1e3 }
						vs = func(k int) []float64 {
							s := make([]float64, k)
							for i := range s {
								s[i] = v()
							}
							return s
						}
					}
					var rb rowBatch
					m := 1 + rng.Intn(rowBatchLen)
					bs, cs := vs(4*n), []float64(nil)
					if withC {
						cs = vs(4 * n)
					}
					e := 0
					for r := range m {
						for range 1 + rng.Intn(4) {
							rb.x[e], rb.kb[e], rb.kc[e] = v(), int64(rng.Intn(3*n+1)), int64(rng.Intn(3*n+1))
							e++
						}
						rb.ends[r] = int32(e)
					}
					rb.xv = rb.x[:e]
					want, got := make([]float64, m*n), make([]float64, m*n)
					useLaneMul = false
					wr := rb.set(want, n, m, bs, cs)
					useLaneMul = was
					if gr := rb.set(got, n, m, bs, cs); gr != wr {
						t.Fatalf("n %d c %v: first row with a zero %d, want %d", n, withC, gr, wr)
					}
					for q := range want[:min(wr+1, m)*n] {
						if math.Float64bits(want[q]) != math.Float64bits(got[q]) && !(math.IsNaN(want[q]) && math.IsNaN(got[q])) {
							t.Fatalf("n %d c %v row %d lane %d: %v, want %v", n, withC, q/n, q%n, got[q], want[q])
						}
					}
				}
			}
		}
	}
}

// BenchmarkMulAddScalar runs a product's 16 and 32 lanes, as each
// position of MTTKRP's lifted rank adds them (three factors) and TTM's
// (two), with and without the vector loops.
func BenchmarkMulAddScalar(b *testing.B) {
	was := useLaneMul
	defer func() { useLaneMul = was }()
	for _, n := range []int{16, 32} {
		acc, bs, cs := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range bs {
			bs[i], cs[i] = float64(i)+0.5, 1/float64(i+1)
		}
		for _, c := range [][]float64{cs, nil} {
			for _, vec := range []bool{false, true} {
				name := map[bool]string{false: "go", true: "vector"}[vec] + map[bool]string{false: "-xbc", true: "-xb"}[c == nil]
				b.Run(name+"-"+string(rune('0'+n/16)), func(b *testing.B) {
					useLaneMul = vec && was
					for range b.N {
						mulAddScalar(acc, 0.75, bs, c)
					}
				})
			}
		}
	}
}

// TestMulBatch checks a batch of positions (mulBatch, the vector loop
// over many positions) against the Go loop per position bit for bit: at
// every length to 41, with and without a third factor, for fewer
// positions than a batch holds and for more (a full batch flushed on
// the way), rows at any offset, and rows to fetch ahead anywhere, past
// the arrays' ends too (a fetch ahead never faults nor reads a value).
func TestMulBatch(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	_, fill := laneValues(rng)
	const rows = 50
	was := useLaneMul
	defer func() { useLaneMul = was }()
	for _, vec := range []bool{false, was} {
		useLaneMul = vec
		for n := 1; n <= 41; n++ {
			for _, withC := range []bool{false, true} {
				for _, m := range []int{1, 3, mulBatchLen + 5} {
					xs, bs, cs := fill(rows), fill(rows*n+3), []float64(nil)
					if withC {
						cs = fill(rows*n + 3)
					}
					acc := fill(n)
					want := append([]float64(nil), acc...)
					var q lprod
					q.a.src, q.b.src, q.c.src = xs, bs, cs
					mb := &mulBatch{}
					mb.begin(&q, 0, 1, acc)
					for range m {
						kx, kb, kc := rng.Int63n(rows), rng.Int63n(rows*int64(n)+4-int64(n)), rng.Int63n(rows*int64(n)+4-int64(n))
						ahead := []int64{kb, rng.Int63n(rows * int64(n)), -1 << 40, 1 << 40}[rng.Intn(4)]
						var c []float64
						if withC {
							c = cs[kc:][:n]
						}
						mulAddScalarGo(want, xs[kx], bs[kb:][:n], c)
						if mb.push(kx, kb, kc, ahead, ahead) {
							mb.flush(acc)
						}
					}
					mb.flush(acc)
					for i := range want {
						if math.Float64bits(want[i]) != math.Float64bits(acc[i]) && !(math.IsNaN(want[i]) && math.IsNaN(acc[i])) {
							t.Fatalf("vector %v n %d c %v m %d lane %d: %v, want %v", vec, n, withC, m, i, acc[i], want[i])
						}
					}
				}
			}
		}
	}
}
