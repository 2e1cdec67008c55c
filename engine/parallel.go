package engine

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storel/storel/ir"
)

// top compiles the root of a plan. Lets at the top compute their values
// once; a sum at the top (or as the value or body of a top let, or an
// operand of arithmetic at the top) is split across workers when
// Options.Threads > 1.
func (c *compiler) top(e *ir.Expr) cx {
	if c.threads > 1 || c.mon != nil {
		if h := hoistSum(e, len(c.scope)); h != nil {
			return c.top(h)
		}
	}
	switch e.Op {
	case ir.OpLet:
		v := c.top(e.Args[0])
		s := c.bind(e.Vars[0], v.t)
		set := setter(v, s)
		body := c.top(e.Args[1])
		c.unbind(1)
		return withPrologue(set, body)
	case ir.OpSum:
		if c.threads > 1 || c.mon != nil {
			return c.parallelSum(e)
		}
	}
	return c.expr(e)
}

// hoistSum rewrites arithmetic with a sum operand, such as beta * sum(...)
// or 2.0 + sum(...), into lets that compute the operands up to that sum
// first: let t0 = beta in let t1 = sum(...) in t0 * t1, so that top can
// split the sum. It returns nil when e has no such operand. At the top a
// plan has no free variables, so each operand is computed once either
// way; operands are still evaluated left to right (leaves, which cannot
// fail, stay in place), so the first error is the same. depth makes the
// names distinct from those of enclosing hoists; the parser accepts no
// name with '·', so none clashes with the program's.
func hoistSum(e *ir.Expr, depth int) *ir.Expr {
	switch e.Op {
	case ir.OpNeg, ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod:
	default:
		return nil
	}
	last := -1
	for i, a := range e.Args {
		if a.Op == ir.OpSum {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	type hoisted struct {
		name string
		val  *ir.Expr
	}
	var lets []hoisted
	body := *e
	body.Args = append([]*ir.Expr(nil), e.Args...)
	for i, a := range e.Args[:last+1] {
		switch a.Op {
		case ir.OpConst, ir.OpVar, ir.OpGlobal:
			continue
		}
		name := fmt.Sprintf("split·%d·%d", depth, i)
		lets = append(lets, hoisted{name, a})
		body.Args[i] = &ir.Expr{Op: ir.OpVar, Name: name, Type: a.Type, Pos: a.Pos}
	}
	out := &body
	for i := len(lets) - 1; i >= 0; i-- {
		out = &ir.Expr{Op: ir.OpLet, Vars: []string{lets[i].name}, Args: []*ir.Expr{lets[i].val, out}, Type: e.Type, Pos: e.Pos}
	}
	return out
}

// setter returns a closure storing the value of x in slot s.
func setter(x cx, s int) func(*frame) {
	switch {
	case x.d != nil:
		f := x.d
		return func(fr *frame) { fr.d[s] = f(fr) }
	case x.f != nil:
		f := x.f
		return func(fr *frame) { fr.f[s] = f(fr) }
	case x.b != nil:
		f := x.b
		return func(fr *frame) {
			if f(fr) {
				fr.i[s] = 1
			} else {
				fr.i[s] = 0
			}
		}
	}
	f := x.i
	return func(fr *frame) { fr.i[s] = f(fr) }
}

// withPrologue runs set before x (x not at all once set fails).
func withPrologue(set func(*frame), x cx) cx {
	switch {
	case x.d != nil:
		return dictCx(x.t, prologue(set, x.d, empty))
	case x.f != nil:
		return realCx(prologue(set, x.f, 0))
	case x.b != nil:
		return boolCx(prologue(set, x.b, false))
	}
	return intCx(prologue(set, x.i, 0))
}

func prologue[T any](set func(*frame), f func(*frame) T, failed T) func(*frame) T {
	return func(fr *frame) T {
		set(fr)
		if fr.err != nil {
			return failed
		}
		return f(fr)
	}
}

// chunks splits positions 0..n-1 into at most parts contiguous chunks.
func chunks(n int64, parts int) [][2]int64 {
	if int64(parts) > n {
		parts = int(n)
	}
	out := make([][2]int64, 0, parts)
	for i := 0; i < parts; i++ {
		out = append(out, [2]int64{n * int64(i) / int64(parts), n * int64(i+1) / int64(parts)})
	}
	return out
}

// chunkWork is a split run: start sets up chunk w's partial result on
// the frame that runs it (may be nil), run does iterations from..to-1 of
// the chunk.
type chunkWork struct {
	start func(w int, wfr *frame)
	run   func(w int, wfr *frame, from, to int64)
	// work, if set, is the loop's cumulative work over iterations
	// (positions from lo), by which the probe predicts the whole run.
	work workFunc
	lo   int64
	// cyclic: the chunks are dealt round, worker w taking chunks w, w+W,
	// w+2W, ... in order, and start and run get the worker's number, not
	// the chunk's: a private result per worker, fed by several chunks
	// spread over the run (see parallelRun).
	cyclic bool
}

// probeEnd returns the probe of a split run: about the probeShare-th
// part of the whole run's work (iterations 0..n-1), at most half of
// chunk p0 (chunk 0, from iteration 0), at least one iteration, ending
// at end; warm, where the probe's second half of its work begins (p0[0]
// for a probe too short to cut); and the share of the whole run's work
// iterations warm..end-1 hold.
// Only the second half is timed: a run's first iterations on a frame
// pay a fixed cost (its first batch: on landmark at 16 threads 4-40 µs
// where the next as many took 1 µs), which scaled by a 2048th share
// predicted a 1.3 ms SpMV to take 20-40 ms. The probe is a share of the
// run, not of chunk 0, so that the prediction does not depend on the
// count of chunks, which grows with the threads: as a 16th of chunk 0,
// the probe of SpMV on landmark predicted 1.2-2.0 ms at 8 threads and
// 1.8-5.3 ms at 16, starting more workers at 16 (wakingWorkers).
func (cw *chunkWork) probeEnd(p0 [2]int64, n int64) (warm, end int64, share float64) {
	half := p0[0] + max(1, (p0[1]-p0[0])/2)
	end = min(half, p0[0]+max(1, n/probeShare))
	warm = p0[0] + (end-p0[0])/2
	if cw.work != nil {
		w := workFunc(func(i int64) int64 { return cw.work(cw.lo + i) })
		if total := w(n) - w(0); total > 0 {
			end = w.first(p0[0], half, w(p0[0]), total/probeShare)
			warm = w.first(p0[0], end, w(p0[0]), (w(end)-w(p0[0]))/2)
		}
	}
	if warm >= end {
		warm = p0[0]
	}
	return warm, end, cw.share([2]int64{warm, end}, n)
}

// share returns the share of the whole run's work (iterations 0..n-1)
// iterations p0[0]..p0[1]-1 hold.
func (cw *chunkWork) share(p0 [2]int64, n int64) float64 {
	if cw.work != nil {
		if total := cw.work(cw.lo+n) - cw.work(cw.lo); total > 0 {
			return float64(cw.work(cw.lo+p0[1])-cw.work(cw.lo+p0[0])) / float64(total)
		}
	}
	return float64(p0[1]-p0[0]) / float64(n)
}

// Workers pay for themselves only on runs long enough: each costs a
// goroutine, a copy of the frame and its batch buffers (tens of
// microseconds on a run of that order: SpMV of a 240-row matrix took 2x
// its one-thread time at 2 threads). The first probeShare-th of the run
// (in chunk 0) runs first, timed; a whole run it predicts under
// parallelMin runs its chunks one after another on the caller's frame.
const probeShare = 512

// parallelMin is a var so that the engine's tests can send every split
// run to workers.
var parallelMin = 200 * time.Microsecond

// claimsPerWorker is how many chunks per worker a split run whose chunks
// need not stay with one worker is cut into. Equal work is not equal
// time: on cnr-2000, SpMV's first half of the entries (rows reading x
// further apart) took 1.75x the time of the second, so one chunk per
// worker left one worker idle for a third of the run. Workers that claim
// small chunks in turn finish together, on any input and when the system
// slows one of them down.
const claimsPerWorker = 8

// parallelRun runs the chunks parts of a split run with at most workers
// workers: chunk 0 on fr, and the rest on fr or on copies of it, in
// workers or (see parallelMin) in turn after chunk 0. With one chunk per
// worker, worker w runs chunk w; with more, the workers claim chunks in
// turn, so a chunk's start and run may be on any frame, or, for cyclic
// work, worker w runs chunks w, w+W, ... Each chunk's partial result (each
// worker's, for cyclic work) is the same however the workers are
// scheduled, so is the answer. It returns the first error in chunk
// order, as a sequential run would meet it.
//
// Cyclic work is for private results: a worker's result must stay its
// own, and one contiguous chunk per worker leaves workers idle when equal
// work is not equal time (BATAX on cnr-2000 at 2 threads: the worker with
// the first half of the rows ran 17 ms, the other 11). Chunks dealt round
// spread both halves over every worker while the merge stays in worker
// order.
func parallelRun(fr *frame, parts [][2]int64, workers int, cw chunkWork) *Error {
	if cw.cyclic {
		return cyclicRun(fr, parts, workers, cw)
	}
	start := func(w int, wfr *frame) {
		if cw.start != nil {
			cw.start(w, wfr)
		}
	}
	p0 := parts[0]
	done := traced(0, p0)
	probe, long, predicted := probeRun(fr, parts, cw)
	workers = min(workers, wakingWorkers(predicted, workers))
	claims := workers < len(parts)
	if !long {
		cw.run(0, fr, probe, p0[1])
		untraced(done)
		for w, p := range parts[1:] {
			if fr.err != nil {
				break
			}
			done := traced(w+1, p)
			start(w+1, fr)
			cw.run(w+1, fr, p[0], p[1])
			untraced(done)
		}
		return fr.err
	}
	var next atomic.Int64
	next.Store(1)
	// fails[c] is chunk c's error; every chunk before the first that
	// failed has run, as the chunks are claimed in order.
	fails := make([]*Error, len(parts))
	// runChunk runs chunk c on a worker's frame wfr.
	runChunk := func(c, w int, wfr *frame) {
		if c > 0 {
			defer untraced(traced(w, parts[c]))
		}
		defer func() {
			if r := recover(); r != nil {
				wfr.fail(&Error{Msg: workerPanic})
			}
			fails[c] = wfr.err
		}()
		start(c, wfr)
		cw.run(c, wfr, parts[c][0], parts[c][1])
	}
	claim := func(w int, wfr *frame) {
		for wfr.err == nil {
			c := int(next.Add(1) - 1)
			if c >= len(parts) {
				return
			}
			runChunk(c, w, wfr)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(workers, len(parts)); w++ {
		wfr := fr.clone()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if claims {
				claim(w, wfr)
			} else {
				runChunk(w, w, wfr)
			}
		}(w)
	}
	if probe < p0[1] {
		cw.run(0, fr, probe, p0[1])
	}
	untraced(done)
	fails[0] = fr.err
	if claims {
		claim(0, fr)
	}
	wg.Wait()
	return firstError(fails)
}

// chunkTrace, when set (by tests and benchmarks), is called before each
// chunk of a split run, on the goroutine that runs it, with the worker and
// the chunk's iterations; the func it returns is called when the chunk
// ends. It measures a split's balance.
var chunkTrace func(worker int, part [2]int64) (done func())

// traced calls chunkTrace, or returns nil.
func traced(worker int, part [2]int64) func() {
	if chunkTrace == nil {
		return nil
	}
	return chunkTrace(worker, part)
}

// untraced calls done unless it is nil.
func untraced(done func()) {
	if done != nil {
		done()
	}
}

// workerPanic is the error of a worker that panicked.
const workerPanic = "internal error in the engine (parallel worker)"

// probeRun starts chunk 0 on fr and runs its first part (probeEnd), the
// second half timed:
// chunk 0 runs before any worker starts (at 16 threads the whole of it,
// a 128th of SpMV on cnr-2000, was 0.1 ms of a 1.7 ms run). probe is
// where chunk 0's rest begins; predicted is the whole run's time on one
// thread the part predicts, and long reports whether it is worth workers
// (parallelMin).
func probeRun(fr *frame, parts [][2]int64, cw chunkWork) (probe int64, long bool, predicted time.Duration) {
	p0, n := parts[0], parts[len(parts)-1][1]
	warm, probe, share := cw.probeEnd(p0, n)
	if cw.start != nil {
		cw.start(0, fr)
	}
	if warm > p0[0] {
		cw.run(0, fr, p0[0], warm)
	}
	elapsed := probeTimer()
	if fr.err == nil {
		cw.run(0, fr, warm, probe)
	}
	if share > 0 {
		predicted = time.Duration(float64(elapsed()) / share)
	}
	return probe, fr.err == nil && share > 0 && predicted >= parallelMin, predicted
}

// wakingWorkers returns how many workers, from 2 to threads, a split run
// predicted to take d on one thread starts. Workers start one after
// another, about workerWake apart (the scheduler wakes idle threads in
// turn: at 16 threads on a 16-core Xeon the last of 15 started 0.15-0.45
// ms after the split began, a large part of a 0.6-1.7 ms run on
// landmark), so W workers end near W*workerWake + d/W, least at
// W = sqrt(d/workerWake): 8 for a 1.5 ms run, 16 from 5 ms.
func wakingWorkers(d time.Duration, threads int) int {
	if workerWake <= 0 {
		return threads
	}
	return max(2, min(threads, int(math.Sqrt(float64(d)/float64(workerWake)))))
}

// workerWake is a var so that the engine's tests can start every thread.
var workerWake = 20 * time.Microsecond

// probeTimer starts the probe's clock; the func it returns reads it (a
// var so that tests can fix what a probe takes).
var probeTimer = func() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}

// firstError returns the first error in chunk order.
func firstError(fails []*Error) *Error {
	for _, e := range fails {
		if e != nil {
			return e
		}
	}
	return nil
}

// cyclicRun is parallelRun for cyclic work.
func cyclicRun(fr *frame, parts [][2]int64, workers int, cw chunkWork) *Error {
	workers = min(workers, len(parts))
	p0 := parts[0]
	done := traced(0, p0)
	probe, long, predicted := probeRun(fr, parts, cw)
	if !long || workers < 2 {
		// Short: the chunks in turn on fr, each into its worker's result,
		// so the answer is the workers' bit for bit.
		if fr.err == nil {
			cw.run(0, fr, probe, p0[1])
		}
		untraced(done)
		for c := 1; c < len(parts) && fr.err == nil; c++ {
			w := c % workers
			done := traced(w, parts[c])
			if c < workers && cw.start != nil {
				cw.start(w, fr)
			}
			cw.run(w, fr, parts[c][0], parts[c][1])
			untraced(done)
		}
		return fr.err
	}
	fails := make([]*Error, len(parts))
	// deal runs dealt worker w's chunks from first on, stopping at its
	// first error: every chunk before the first failing one in chunk
	// order runs, as no dealt worker stops before a failure of its own.
	deal := func(w, first int, wfr *frame) {
		c := first
		defer func() {
			if r := recover(); r != nil {
				wfr.fail(&Error{Msg: workerPanic})
				fails[c] = wfr.err
			}
		}()
		for ; c < len(parts); c += workers {
			done := traced(w, parts[c])
			cw.run(w, wfr, parts[c][0], parts[c][1])
			untraced(done)
			if wfr.err != nil {
				fails[c] = wfr.err
				return
			}
		}
	}
	// The dealt workers (their chunks, and so the answer's bits) stay as
	// the caller counted them; goroutines, started as for any split run
	// (wakingWorkers), claim whole dealt workers in turn, no more
	// goroutines than the most dealt workers one of them runs needs.
	each := int(ceilDiv(int64(workers), int64(min(workers, wakingWorkers(predicted, workers)))))
	var next atomic.Int64
	next.Store(1)
	claim := func(wfr *frame) {
		for {
			w := int(next.Add(1) - 1)
			if w >= workers {
				return
			}
			if wfr.err != nil {
				// A failed dealt worker's frame: the next starts clean.
				wfr = wfr.clone()
			}
			if cw.start != nil {
				cw.start(w, wfr)
			}
			deal(w, w, wfr)
		}
	}
	var wg sync.WaitGroup
	for g := 1; g < int(ceilDiv(int64(workers), int64(each))); g++ {
		wfr := fr.clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			claim(wfr)
		}()
	}
	if fr.err == nil && probe < p0[1] {
		cw.run(0, fr, probe, p0[1])
	}
	untraced(done)
	fails[0] = fr.err
	if fr.err == nil {
		deal(0, workers, fr)
	}
	claim(fr)
	wg.Wait()
	return firstError(fails)
}

// parallelSum compiles a top-level sum whose iterations are split across
// c.threads workers. Each worker adds into a private accumulator; the
// partial results are added in chunk order.
func (c *compiler) parallelSum(e *ir.Expr) cx {
	t := c.typeOf(e)
	threads := c.threads
	if t.Depth > 0 {
		spec := c.specFor(e, t)
		c.splitNext = true
		l := c.compileLoop(e, accumBody(spec, plus))
		c.splitByWork(l, e)
		reach := c.splitReach(e)
		var inOrder func(srcState) bool
		if startsSequential(spec) {
			inOrder = c.splitInOrder(e)
		}
		if l.nest != nil && inOrder != nil {
			ranged, _ := c.splitKey(e)
			l.nest.inOrder, l.nest.inOrderIfIncreasing = true, !ranged
		}
		var rowReach func(srcState) (int64, bool)
		if spec.depth == 1 && spec.dense {
			rowReach = c.rowReach(e)
		}
		pool := &rowPool{}
		shared := l.nest != nil && l.nest.rows && reach != nil
		keyRanges := c.splitKeyRanges(e)
		return dictCx(t, func(fr *frame) dict {
			st, ok := l.open(fr)
			if !ok {
				return empty
			}
			fr.win = 0
			n := l.count(st)
			end, ok := st.hi, st.lo >= 0 && st.hi > st.lo
			shared := shared && (!l.nest.rowsIfIncreasing || increasing(l.nest.arr.ints, st.lo, st.hi))
			if shared {
				end, ok = reach(st)
			}
			reserve := shared && ok && end <= maxReserve
			// A shared result takes chunks claimed in turn; one dense row
			// per worker merges by addition whatever chunks fed it, so it
			// is dealt chunks in rotation (see parallelRun); rows that
			// arrive in order (seqrows.go) take a private result per chunk,
			// claimed in turn, as the chunks' rows merge by appending each
			// chunk's after the one before; other private results stay one
			// chunk per worker.
			cyclic := !reserve && spec.depth == 1 && spec.dense
			perChunk := !reserve && !cyclic && inOrder != nil && inOrder(st)
			perWorker := 1
			if reserve || cyclic || perChunk {
				perWorker = claimsPerWorker
			}
			workers := threads
			if cyclic && rowReach != nil {
				if row, ok := rowReach(st); ok {
					workers = privateWorkers(l.runWork(st, n), row, threads)
				}
			}
			var parts [][2]int64
			if workers > 1 {
				parts = l.chunks(st, n, workers*perWorker)
			}
			if len(parts) < 2 {
				b := newBuilder(spec)
				if c.mon != nil && reserve {
					// The windows would grow it a window at a time.
					b.reserve(end)
				}
				runChecked(c.mon, l, fr, st, 0, n, b)
				return b.freeze()
			}
			if reserve && spec.depth > 1 {
				return sharedRows(c.mon, l, fr, st, parts, threads, spec, end)
			}
			if reserve {
				// out[i] += ... over a range keyed by its own variable:
				// workers write disjoint positions of one result.
				b := newBuilder(spec)
				var start func(c int, _ *frame)
				if bounds := keyRanges(st, parts, end); bounds != nil && b.reserveUnzeroed(end) {
					// Each chunk zeroes the keys it writes, on the
					// goroutine that runs it.
					start = func(c int, _ *frame) { b.zeroRange(bounds[c], bounds[c+1]) }
				} else {
					b.reserve(end)
				}
				err := parallelRun(fr, parts, threads, chunkWork{start: start, run: func(w int, wfr *frame, from, to int64) {
					runChecked(c.mon, l, wfr, st, from, to, b)
				}, work: l.work, lo: st.lo})
				if err != nil {
					fr.fail(err)
					return empty
				}
				return b.freeze()
			}
			bs := make([]*builder, len(parts))
			if cyclic {
				bs = bs[:min(len(parts), workers)]
			}
			err := parallelRun(fr, parts, workers, chunkWork{
				start: func(w int, _ *frame) {
					bs[w] = newBuilder(spec)
					if w > 0 || cyclic {
						// Cyclic: worker 0's row is one of the
						// sources the merge adds into a new result.
						pool.seed(bs[w])
					}
					if reach != nil && bs[w].x != nil && spec.dense {
						if end, ok := reach(st); ok {
							bs[w].x.reach = min(end, maxReserve)
						}
					}
				},
				run: func(w int, wfr *frame, from, to int64) {
					runChecked(c.mon, l, wfr, st, from, to, bs[w])
					if w > 0 && !cyclic {
						bs[w].sortSpill() // while the other workers run
					}
				},
				work: l.work, lo: st.lo, cyclic: cyclic,
			})
			if err != nil {
				fr.fail(err)
				return empty
			}
			if cyclic {
				for _, b := range bs[1:] {
					b.sortSpill()
				}
			}
			if cyclic {
				if res := newBuilder(spec); mergeDense(bs, pool, res) {
					return res.freeze()
				}
			}
			if !mergeDense(bs, pool, nil) && !mergeKids(bs, pool) {
				bs[0].mergeRoots(bs[1:])
			}
			return bs[0].freeze()
		})
	}
	if t.Base != ir.Real && t.Base != ir.Int {
		c.bail(e, "cannot sum %s values", t)
	}
	acc := c.newSlot(ir.Type{Base: t.Base})
	c.splitNext = true
	l := c.compileLoop(e, scalarBody(t, acc))
	c.splitByWork(l, e)
	real := t.Base == ir.Real
	// Workers claim chunks in turn; partial sums are kept per chunk and
	// added in chunk order, so the bits do not depend on which worker
	// ran which chunk.
	run := func(fr *frame) (int64, float64) {
		st, ok := l.open(fr)
		if !ok {
			return 0, 0
		}
		fr.win = 0
		n := l.count(st)
		var parts [][2]int64
		if threads > 1 {
			// At one thread the chunks would only cut the run's sum in parts.
			parts = l.chunks(st, n, threads*claimsPerWorker)
		}
		if len(parts) < 2 {
			fr.f0(acc, real)
			runChecked(c.mon, l, fr, st, 0, n, nil)
			return fr.acc(acc, real)
		}
		pi := make([]int64, len(parts))
		pf := make([]float64, len(parts))
		err := parallelRun(fr, parts, threads, chunkWork{
			start: func(w int, wfr *frame) { wfr.f0(acc, real) },
			run: func(w int, wfr *frame, from, to int64) {
				runChecked(c.mon, l, wfr, st, from, to, nil)
				pi[w], pf[w] = wfr.acc(acc, real)
			},
			work: l.work, lo: st.lo,
		})
		if err != nil {
			fr.fail(err)
			return 0, 0
		}
		var si int64
		var sf float64
		for w := range parts {
			si += pi[w]
			sf += pf[w]
		}
		return si, sf
	}
	if real {
		return realCx(func(fr *frame) float64 { _, f := run(fr); return f })
	}
	return intCx(func(fr *frame) int64 { i, _ := run(fr); return i })
}

// increasing reports whether ints[lo:hi] is strictly increasing: keys
// that no two iterations share.
func increasing(ints []int64, lo, hi int64) bool {
	if lo < 0 || hi > int64(len(ints)) {
		return false
	}
	for p := lo + 1; p < hi; p++ {
		if ints[p] <= ints[p-1] {
			return false
		}
	}
	return true
}

// sharedRows runs split loop l, whose iterations write disjoint rows
// (keyed by its own key, below end) of a nested dense result, into one
// shared result: its level of rows, sized once, is written by every
// worker through a root builder of the worker's own over the same slice,
// whose tree holds the worker's row workspaces and storage. No rows are
// copied or merged; the workers' trees are adopted by the result.
func sharedRows(mon *monitor, l *loop, fr *frame, st srcState, parts [][2]int64, threads int, spec *bspec, end int64) dict {
	root := newBuilder(spec)
	root.leaveSequential() // rows scattered into leave it (leaveRowsInOrder)
	root.reserve(end)
	var mu sync.Mutex
	mine := map[*frame]*builder{fr: root}
	bs := []*builder{root}
	of := make([]*builder, len(parts)) // by chunk
	err := parallelRun(fr, parts, threads, chunkWork{
		start: func(c int, wfr *frame) {
			mu.Lock()
			defer mu.Unlock()
			b := mine[wfr]
			if b == nil {
				b = newBuilder(spec)
				b.leaveSequential()
				b.x.kids = root.x.kids
				mine[wfr] = b
				bs = append(bs, b)
			}
			of[c] = b
		},
		run: func(c int, wfr *frame, from, to int64) {
			runChecked(mon, l, wfr, st, from, to, of[c])
		},
		work: l.work, lo: st.lo,
	})
	if err != nil {
		fr.fail(err)
		return empty
	}
	for _, b := range bs[1:] {
		x := b.x
		if len(x.mkids) > 0 || len(x.kids) != len(root.x.kids) || len(x.kids) > 0 && &x.kids[0] != &root.x.kids[0] {
			// A key past end: the loop's bounds did not hold.
			fr.fail(&Error{Msg: "internal error in the engine (a shared result's row outside its level)"})
			return empty
		}
		x.tree.closeAll()
		root.x.tree.adopted = append(root.x.tree.adopted, x.tree)
		x.kids = nil
	}
	nestSaw("shared rows")
	return root.freeze()
}

// f0 zeroes accumulator slot s; acc reads it.
func (fr *frame) f0(s int, real bool) {
	if real {
		fr.f[s] = 0
	} else {
		fr.i[s] = 0
	}
}

func (fr *frame) acc(s int, real bool) (int64, float64) {
	if real {
		return 0, fr.f[s]
	}
	return fr.i[s], 0
}
