package engine

import (
	"flag"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/storel/storel/examples"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

var (
	bandwidthRuns   = flag.Int("engine.bandwidth", 0, "TestBandwidthRatio: alternate this many runs of storel's SpMV and of a streaming loop over as many bytes, and print the ratio")
	bandwidthMatrix = flag.String("engine.matrix", "/work/shared/data/cnr-2000.mtx.gz", "TestBandwidthRatio and TestSweepRatio: the matrix (.mtx, .tns, optionally .gz)")
)

// TestBandwidthRatio measures storel's SpMV (the optimizer's plans over
// CSR, the pattern mapping, sell and sell+pattern) on a real matrix
// against the memory bandwidth of the machine, in the same process,
// alternating runs (a shared machine's load hits both alike):
//
//	go test ./engine -run BandwidthRatio -engine.bandwidth 31 -v
//
// The bound is a streaming loop that reads the bytes a CSR SpMV must read
// with 32-bit indices: a []float64 as long as the values, x and y, and
// an []int32 as long as the column indices and the row pointers (12
// bytes per non-zero). storel's CSR loop on amd64 reads that much too:
// its column indices come from their 32-bit copy (storage.Array.Narrow;
// its row pointers stay 64-bit). A second loop streams the arrays with
// 64-bit indices (16 bytes per non-zero). It never fails on timings.
//
// Every timed run starts from memory (a 256 MB buffer is written before
// it): otherwise a kernel run right after another over the same arrays
// is served from the last-level cache while the stream is not, and the
// ratio looks better than it is. The stream reads several sequences in
// lockstep, as the kernel does, so that it uses the core's memory
// parallelism. On a matrix with many short rows the cost per row, not
// the bytes streamed, bounds a CSR loop.
//
// The test also runs SpMV over the matrix stored as sell and as
// sell+pattern (32-bit columns, eight rows at a time: interleaved rows,
// nestinter.go) and checks
// that both give CSR's bits.
func TestBandwidthRatio(t *testing.T) {
	if *bandwidthRuns == 0 {
		t.Skip("set -engine.bandwidth N")
	}
	coo := readMatrixFlag(t)
	csrFormat, err := storage.ParseFormat("csr")
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Build("A", coo, csrFormat)
	if err != nil {
		t.Fatal(err)
	}
	n, m := coo.Dims[0], coo.Dims[1]
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, m)
	for i := range x {
		x[i] = rng.Float64()
	}
	st["x"] = storage.RealArray(x)
	plan := optimizedPlan(t, "spmv", map[string]string{"A": "csr"}, st)
	k, err := Compile(plan, SchemaOf(st), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The same matrix through a storage mapping that says every value is
	// 1: no value array is read (what flexible storage is for; a pattern
	// matrix needs no values).
	patternPlan := patternSpMVPlan(t, st)
	kp, err := Compile(patternPlan, SchemaOf(st), Options{})
	if err != nil {
		t.Fatal(err)
	}
	overCSR, err := k.Run(st)
	if err != nil {
		t.Fatal(err)
	}
	if valuesAreOne(st["A_val"]) {
		got, err := kp.Run(st)
		if err != nil || !value.Equal(overCSR, got, 1e-12) {
			t.Fatalf("the pattern mapping's SpMV differs from the CSR one (%v)", err)
		}
	}
	// The same matrix stored as sell, with values and (a pattern matrix)
	// without: 32-bit columns, eight rows at a time (nestinter.go).
	var sells []sellRun
	for _, format := range []string{"sell", "sell+pattern"} {
		f, err := storage.ParseFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := storage.Build("A", coo, f)
		if err != nil {
			t.Logf("no %s: %v", format, err)
			continue
		}
		ss["x"] = st["x"]
		kk, err := Compile(optimizedPlan(t, "spmv", map[string]string{"A": format}, ss), SchemaOf(ss), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !interleavedRows(kk) {
			t.Fatalf("SpMV over %s does not run as interleaved rows", format)
		}
		got, err := kk.Run(ss)
		if err != nil || !value.Equal(overCSR, got, 0) {
			t.Fatalf("SpMV over %s differs from CSR's (%v)", format, err)
		}
		sells = append(sells, sellRun{format: format, k: kk, st: ss})
	}
	nnz := int64(st["A_idx2"].(*storage.Array).Len())
	// Bound: 8-byte values, x and y; 4-byte indices and row pointers.
	bound := newStream(nnz+m+n, nnz+n+1)
	// With 64-bit indices: 8-byte values, indices, row pointers, x and y.
	actual := newStream(2*nnz+n+1+m+n, 0)
	// Hand-written SpMV loops over the same matrix with 64-bit and with
	// 32-bit indices (copies made before timing), real values: what
	// narrowing the index arrays would buy, measured rather than assumed.
	pos64, idx64 := st["A_pos2"].(*storage.Array).I, st["A_idx2"].(*storage.Array).I
	vals := make([]float64, nnz)
	for p := range vals {
		if v := st["A_val"].(*storage.Array); v.F != nil {
			vals[p] = v.F[p]
		} else {
			vals[p] = float64(v.I[p])
		}
	}
	pos32, idx32 := narrow(pos64), narrow(idx64)
	y64, y32 := make([]float64, n), make([]float64, n)
	var ts, tp, tb, ta, t64, t32 []time.Duration
	// Every run starts from memory, not from the caches: the machine's
	// last-level cache (105 MB here) holds a matrix like cnr-2000 whole,
	// and a kernel run right after another over the same arrays would
	// be timed against caches while the stream, touched once a round,
	// is not.
	flush := newFlush()
	timed := func(f func()) time.Duration {
		flush.sweep()
		start := time.Now()
		f()
		return time.Since(start)
	}
	for r := 0; r < *bandwidthRuns; r++ {
		t64 = append(t64, timed(func() { handSpMV(pos64, idx64, vals, x, y64) }))
		t32 = append(t32, timed(func() { handSpMV(pos32, idx32, vals, x, y32) }))
		var err error
		ts = append(ts, timed(func() { _, err = k.Exec(st) }))
		if err != nil {
			t.Fatal(err)
		}
		tp = append(tp, timed(func() { _, err = kp.Exec(st) }))
		if err != nil {
			t.Fatal(err)
		}
		for i := range sells {
			sr := &sells[i]
			sr.times = append(sr.times, timed(func() { _, err = sr.k.Exec(sr.st) }))
			if err != nil {
				t.Fatal(err)
			}
		}
		tb = append(tb, timed(bound.read))
		ta = append(ta, timed(actual.read))
	}
	if !slices.Equal(y64, y32) {
		t.Fatal("the hand loops with 64- and 32-bit indices differ")
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	s, sp, b, a := med(ts), med(tp), med(tb), med(ta)
	gbs := func(bytes int64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
	t.Logf("%s: %d x %d, %d non-zeros (values %s); medians of %d alternating runs:", *bandwidthMatrix, n, m, nnz, st["A_val"].ElemType(), *bandwidthRuns)
	t.Logf("  storel SpMV            %8.3f ms", ms(s))
	t.Logf("  storel SpMV, pattern   %8.3f ms  (a mapping whose values are 1: no value array)  pattern / bound %.2f", ms(sp), float64(sp)/float64(b))
	for _, sr := range sells {
		sl := med(sr.times)
		t.Logf("  storel SpMV, %-12s %8.3f ms  (32-bit columns, 8 rows at a time)  %s / bound %.2f", sr.format, ms(sl), sr.format, float64(sl)/float64(b))
	}
	t.Logf("  stream %4.1f MB (12 B/nz) %8.3f ms (%.1f GB/s)  storel / bound  %.2f", float64(bound.bytes)/1e6, ms(b), gbs(bound.bytes, b), float64(s)/float64(b))
	t.Logf("  stream %4.1f MB (16 B/nz) %8.3f ms (%.1f GB/s)  storel / stream %.2f", float64(actual.bytes)/1e6, ms(a), gbs(actual.bytes, a), float64(s)/float64(a))
	h64, h32 := med(t64), med(t32)
	t.Logf("  hand loop, int64 index %8.3f ms, int32 index %8.3f ms: int32 / int64 %.2f", ms(h64), ms(h32), float64(h32)/float64(h64))
}

// readMatrixFlag reads the matrix -engine.matrix names, skipping the
// test when the file is not there.
func readMatrixFlag(t *testing.T) *storage.COO {
	t.Helper()
	if _, err := os.Stat(*bandwidthMatrix); err != nil {
		t.Skipf("no matrix: %v", err)
	}
	coo, err := storage.ReadTensorFile(*bandwidthMatrix, storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return coo
}

// sellRun is SpMV over the matrix stored as sell and its timings.
type sellRun struct {
	format string
	k      *Kernel
	st     storage.Store
	times  []time.Duration
}

// handSpMV is the textbook CSR SpMV, for either index width.
func handSpMV[I int32 | int64](pos, idx []I, vals, x, y []float64) {
	for i := range y {
		s := 0.0
		l, h := pos[i], pos[i+1]
		seg, v := idx[l:h], vals[l:h]
		v = v[:len(seg)]
		for p, j := range seg {
			s += v[p] * x[j]
		}
		y[i] = s
	}
}

// narrow copies an int64 slice into int32s (the values fit: the caller's
// matrix has fewer than 2^31 rows, columns and non-zeros).
func narrow(a []int64) []int32 {
	out := make([]int32, len(a))
	for i, v := range a {
		out[i] = int32(v)
	}
	return out
}

// stream is a streaming read of a []float64 and an []int32.
type stream struct {
	f     []float64
	i     []int32
	bytes int64
	sink  float64
}

func newStream(floats, ints int64) *stream {
	s := &stream{f: make([]float64, floats), i: make([]int32, ints), bytes: 8*floats + 4*ints}
	for k := range s.f {
		s.f[k] = float64(k & 7)
	}
	for k := range s.i {
		s.i[k] = int32(k & 7)
	}
	return s
}

// read reads both slices once, each as four streams in lockstep (one per
// quarter), with independent accumulators: one sequential stream leaves
// the core's memory parallelism idle (it ran at two thirds of the rate
// the kernel's several streams reach), and a bound must be the best rate.
func (s *stream) read() {
	var f0, f1, f2, f3 float64
	q := len(s.f) / 4
	a, b, c, d := s.f[:q], s.f[q:2*q], s.f[2*q:3*q], s.f[3*q:4*q]
	for k := range a {
		f0 += a[k]
		f1 += b[k]
		f2 += c[k]
		f3 += d[k]
	}
	for _, v := range s.f[4*q:] {
		f0 += v
	}
	// The int32s two at a time, as int64 words: the bytes are what
	// count.
	var i0, i1, i2, i3 int64
	w := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(s.i))), len(s.i)/2)
	q = len(w) / 4
	ia, ib, ic, id := w[:q], w[q:2*q], w[2*q:3*q], w[3*q:4*q]
	for k := range ia {
		i0 += ia[k]
		i1 += ib[k]
		i2 += ic[k]
		i3 += id[k]
	}
	for _, v := range w[4*q:] {
		i0 += v
	}
	if len(s.i)%2 == 1 {
		i0 += int64(s.i[len(s.i)-1])
	}
	s.sink += f0 + f1 + f2 + f3 + float64(i0+i1+i2+i3)
}

// flush is a buffer well over the size of the last-level cache: writing
// it evicts what the caches held.
type flush struct{ buf []int64 }

func newFlush() *flush { return &flush{buf: make([]int64, 256<<20/8)} }

// sweep writes every cache line of the buffer.
func (f *flush) sweep() {
	for i := 0; i < len(f.buf); i += 8 {
		f.buf[i]++
	}
}

// patternSpMVPlan optimizes SpMV over A stored as CSR without values: the
// mapping gives every stored entry the value 1.
func patternSpMVPlan(t *testing.T, st storage.Store) *ir.Expr {
	const pattern = `CREATE int SCALAR A_dim1;
CREATE int SCALAR A_dim2;
CREATE int SCALAR A_len1;
CREATE int ARRAY A_pos2(A_len1 + 1);
CREATE int ARRAY A_idx2(A_pos2(A_len1));
CREATE TENSOR A AS
  sum(<i1, _> in 0:A_len1)
    { @unique i1 -> sum(<p2, i2> in A_idx2(A_pos2(i1):A_pos2(i1 + 1))) { @unique i2 -> 1 } };
`
	text, _ := examples.Source("spmv")
	prog, err := sdql.Compile(sdql.Source{Name: "pattern.sdql", Text: []byte(pattern)}, sdql.Source{Name: "spmv.sdql", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	res, err := opt.Optimize(prog.Compose(""), st, planLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pattern plan:\n%s", ir.Format(res.Plan))
	return res.Plan
}

// valuesAreOne reports whether every value of a matrix is 1 (a pattern
// matrix read as ints).
func valuesAreOne(o storage.Object) bool {
	a, ok := o.(*storage.Array)
	if !ok {
		return false
	}
	for _, v := range a.I {
		if v != 1 {
			return false
		}
	}
	for _, v := range a.F {
		if v != 1 {
			return false
		}
	}
	return true
}
