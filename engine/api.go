package engine

import (
	"fmt"
	"runtime/metrics"
	"sort"
	"sync"
	"time"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Options tune compilation and execution.
type Options struct {
	// Threads is the number of workers that share the outermost sum of
	// the plan (a sum at the top, possibly under lets). 0 or 1 runs
	// everything on the calling goroutine.
	Threads int
	// Limits stop a run that takes too much memory or time.
	Limits Limits
}

// Stats reports the cost of one run.
type Stats struct {
	Compile   time.Duration // time Compile took for the kernel
	Execute   time.Duration // time the kernel ran (binding included, conversion excluded)
	PeakHeap  uint64        // ExecSampled: highest heap (bytes of objects, live or not yet swept) sampled while the kernel ran
	StartHeap uint64        // ExecSampled: the same figure when the kernel started: PeakHeap - StartHeap is the kernel's own
}

// Kernel is a compiled plan. Runs of one kernel are serialized (the
// kernel's closures read the objects of the store being run through
// shared cells); compile one kernel per goroutine for concurrent runs.
type Kernel struct {
	typ         ir.Type
	cells       []*cell
	ni, nf, nd  int
	root        cx
	indexes     []*seekIndex
	runs        []*runNode // run layouts, found at each run (runwalk.go)
	compileTime time.Duration
	mon         *monitor
	mu          sync.Mutex
	// For Explain: the lowered loops and the sums left to older paths.
	nests    []*nloop
	declined []declined
	threads  int
	// alt, when set, is the same plan with every row looked up by key
	// found by a probe: it runs on maps k's tables do not cover (covers).
	alt *Kernel
	// copyBufs: the lane-major copies' buffers, kept between runs.
	copyBufs copyBufs
	// mem: the working memory of the run's frames, kept between runs.
	mem memPool
	// out: the full blocks the run under way makes (released.go).
	out *blockSink
}

// Compile compiles plan, a typed expression closed except for physical
// objects described by schema, into a kernel.
//
// Results equal the interpreter's (package eval) bit for bit except where
// floating-point sums are reassociated:
//   - a dictionary sum accumulates in place: when the same key receives
//     terms from several iterations of an outer sum and several of an
//     inner one, (a+b)+(c+d) becomes ((a+b)+c)+d; likewise e1 + e2 and
//     e1 - e2 of dictionaries add e2's terms one by one into e1's. With
//     distinct keys per iteration (every @unique plan) nothing changes;
//   - with Options.Threads > 1 the outermost sum adds per-worker partial
//     results in worker order (deterministic for a given thread count and
//     input: the chunks are cut by the work the position arrays give;
//     rows with distinct keys are not reassociated);
//   - the factors of a scalar sum's terms that do not depend on the sum
//     (constants, scalars, variables bound outside it) multiply its total
//     once: sum(x * t) runs as t * sum(x), as the optimizer's rule D3
//     would write it.
//
// Scalar sums, products and everything else are evaluated in the
// interpreter's order. When a run fails, the error may name a different
// expression than the interpreter's would: a loop evaluates the
// factors that do not depend on it before the others, once.
func Compile(plan *ir.Expr, schema Schema, opts Options) (*Kernel, error) {
	return compile(plan, schema, opts, true)
}

// compile is Compile; dense as hashWalks takes it.
func compile(plan *ir.Expr, schema Schema, opts Options, dense bool) (k *Kernel, err error) {
	start := time.Now()
	if plan == nil {
		return nil, &Error{Msg: "no plan to compile"}
	}
	if bad := checkShape(plan); bad != nil {
		return nil, bad
	}
	plan0, schema0 := plan, schema
	plan, schema, levels := hashWalks(plan, schema, dense)
	plan, schema, runNodes := runWalks(plan, schema)
	c := &compiler{schema: schema, cells: map[string]*cell{}, threads: opts.Threads, noNests: closuresOnly, levels: levels, out: &blockSink{}}
	if !opts.Limits.none() {
		c.mon = &monitor{lim: opts.Limits}
	}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			k, err = nil, b.err
		}
	}()
	if fv := ir.FreeVars(plan); len(fv) > 0 {
		names := make([]string, 0, len(fv))
		for n := range fv {
			names = append(names, n)
		}
		sort.Strings(names)
		c.bail(plan, "the plan has free variables: %v", names)
	}
	root := c.top(plan)
	for name, ref := range levels {
		if cl, ok := c.cells[name]; ok {
			h := c.cell(&ir.Expr{Op: ir.OpGlobal, Name: ref.hash.name})
			h.needLevels = true
			cl.level = &levelRef{hash: h, part: ref.part, level: ref.level}
		}
	}
	c.bindRuns(runNodes)
	k = &Kernel{typ: root.t, root: root, ni: c.ni, nf: c.nf, nd: c.nd, indexes: c.indexes,
		nests: c.nests, declined: c.declined, threads: max(opts.Threads, 1), mon: c.mon, runs: runNodes, out: c.out}
	names := make([]string, 0, len(c.cells))
	for n := range c.cells {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k.cells = append(k.cells, c.cells[n])
	}
	for _, ref := range levels {
		if ref.part == hashAtPart && k.alt == nil {
			if k.alt, err = compile(plan0, schema0, opts, false); err != nil {
				return nil, err
			}
		}
	}
	k.compileTime = time.Since(start)
	return k, nil
}

// covers reports whether the hash maps of st whose rows k looks up by key
// in a table of every key's bounds (hashwalk.go) have that table; when
// one does not, k.alt runs instead. A map that fails its checks counts as
// covered: k's bind reports it.
func (k *Kernel) covers(st storage.Store) bool {
	for _, cl := range k.cells {
		if cl.level == nil || cl.level.part != hashAtPart {
			continue
		}
		h, ok := st[cl.level.hash.name].(*storage.HashMap)
		if !ok || infoOf(h) != cl.level.hash.info || checkHashMap(h) != nil {
			continue
		}
		if g, err := cl.level.hash.layout(h); err == nil && !g.covered() {
			return false
		}
	}
	return true
}

// CompileTime reports how long Compile took.
func (k *Kernel) CompileTime() time.Duration { return k.compileTime }

// Result is the value a kernel computed, in the engine's own form;
// Value converts it to the interpreter's.
type Result struct {
	Type  ir.Type
	Stats Stats
	i     int64
	f     float64
	b     bool
	d     dict
	// owned: the pooled storage of d's rows (Release).
	owned []owned
}

// Value converts the result to a logical value (int64, float64, bool or
// *value.Dict with sorted keys).
func (r *Result) Value() value.Value {
	switch {
	case r.Type.Depth > 0:
		return toValue(r.d, r.Type.Depth, r.Type.Base == ir.Real)
	case r.Type.Base == ir.Real:
		return r.f
	case r.Type.Base == ir.Bool:
		return r.b
	}
	return r.i
}

// Entries calls visit for every non-zero leaf of the result with its
// coordinates (outermost first, reused between calls) in increasing
// order, passing an int or bool value in i and a real one in f (the
// shape of storage.Entries); a scalar result is one call with no
// coordinates, zero or not. It avoids building the logical value of a
// large result.
func (r *Result) Entries(visit func(coords []int64, i int64, f float64)) {
	real := r.Type.Base == ir.Real
	if r.Type.Depth == 0 {
		switch {
		case real:
			visit(nil, int64(r.f), r.f)
		case r.Type.Base == ir.Bool:
			b := int64(0)
			if r.b {
				b = 1
			}
			visit(nil, b, float64(b))
		default:
			visit(nil, r.i, float64(r.i))
		}
		return
	}
	coords := make([]int64, r.Type.Depth)
	var walk func(d dict, level int)
	walk = func(d dict, level int) {
		if sn, ok := d.(*seqNode); ok && level+2 == len(coords) {
			sn.entries(coords, level, visit)
			return
		}
		n := d.size()
		for p := 0; p < n; p++ {
			coords[level] = d.keyAt(p)
			switch {
			case level+1 < len(coords):
				walk(d.dictAt(p), level+1)
			case real:
				if v := d.realAt(p); v != 0 {
					visit(coords, int64(v), v)
				}
			default:
				if v := d.intAt(p); v != 0 {
					visit(coords, v, float64(v))
				}
			}
		}
	}
	walk(r.d, 0)
}

func toValue(d dict, depth int, real bool) value.Value {
	n := d.size()
	out := &value.Dict{Keys: make([]int64, n), Vals: make([]value.Value, n)}
	for p := 0; p < n; p++ {
		out.Keys[p] = d.keyAt(p)
		switch {
		case depth > 1:
			out.Vals[p] = toValue(d.dictAt(p), depth-1, real)
		case real:
			out.Vals[p] = d.realAt(p)
		default:
			out.Vals[p] = d.intAt(p)
		}
	}
	return out
}

// Prepare makes ahead of the first run what a run would make of st's
// objects and keep: the 32-bit copies of the index arrays the kernel's
// CSR row loops read (Array.Narrow), the grouped view of each hash
// map it walks as a dictionary (groupedView) and the run layout of each
// walk of runs (runwalk.go). Exec makes them when Prepare has
// not; the command calls Prepare and times it as a phase of its own, so
// that execute times the kernel alone.
func (k *Kernel) Prepare(st storage.Store) {
	if k.alt != nil && !k.covers(st) {
		k.alt.Prepare(st)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cl := range k.cells {
		if h, ok := st[cl.name].(*storage.HashMap); ok && (cl.needView || cl.needLevels) && infoOf(h) == cl.info && checkHashMap(h) == nil {
			// An error here is reported by the run's bind.
			_, _ = cl.hashView(h)
		}
	}
	for _, cl := range k.cells {
		obj := st[cl.name]
		if cl.level != nil {
			obj = nil
			if g := cl.level.hash.groups; g != nil && g.h == st[cl.level.hash.name] {
				obj = g.levelObject(*cl.level)
			}
		}
		if a, ok := obj.(*storage.Array); ok && cl.needNarrow && useNarrow && a.Elem == ir.Int {
			a.Narrow()
		}
		if a, ok := obj.(*storage.Array); ok && cl.needSorted && a.Elem == ir.Int {
			a.Descents()
		}
	}
	for _, n := range k.runs {
		if n.find(st) != nil {
			break // reported by the run; the levels below need this one
		}
	}
}

// Exec runs the kernel on the objects of st.
func (k *Kernel) Exec(st storage.Store) (*Result, error) { return k.exec(st, false) }

// ExecSampled runs the kernel like Exec and samples the heap while it
// runs (Stats.PeakHeap, Stats.StartHeap). The sampler wakes every 2 ms on
// another goroutine, which slows a short kernel noticeably on a loaded
// machine, so timed runs use Exec.
func (k *Kernel) ExecSampled(st storage.Store) (*Result, error) { return k.exec(st, true) }

func (k *Kernel) exec(st storage.Store, sample bool) (*Result, error) {
	if k.alt != nil && !k.covers(st) {
		return k.alt.exec(st, sample)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var sampler *heapSampler
	if sample {
		sampler = startHeapSampler()
	}
	start := time.Now()
	if k.mon != nil {
		k.mon.reset()
	}
	for _, cl := range k.cells {
		if cl.level != nil || cl.runs != nil {
			continue // bound from its hash map or its arrays, below
		}
		if err := cl.bind(st[cl.name]); err != nil {
			sampler.stop()
			return nil, &Error{Msg: err.Error()}
		}
	}
	for _, cl := range k.cells {
		if cl.level == nil {
			continue
		}
		if err := cl.bind(cl.levelObject()); err != nil {
			sampler.stop()
			return nil, &Error{Msg: err.Error()}
		}
	}
	for _, n := range k.runs {
		err := n.find(st)
		if err == nil {
			err = n.bind()
		}
		if err != nil {
			sampler.stop()
			return nil, &Error{Msg: err.Error()}
		}
	}
	for _, ix := range k.indexes {
		ix.build()
	}
	fr := newFrame(k.ni, k.nf, k.nd)
	fr.copies.bufs, fr.copies.helpers = &k.copyBufs, k.threads-1
	defer fr.copies.release() // after every worker of the run has stopped
	k.mem.keep = k.threads
	k.mem.take(fr)
	k.out.start()
	res := &Result{Type: k.typ}
	err := runGuarded(func() {
		switch {
		case k.root.d != nil:
			res.d = k.root.d(fr)
		case k.root.f != nil:
			res.f = k.root.f(fr)
		case k.root.b != nil:
			res.b = k.root.b(fr)
		default:
			res.i = k.root.i(fr)
		}
	})
	// After a panic a worker may still be running on its frame: the run's
	// memory is not kept.
	k.mem.release(err == nil)
	res.owned = k.out.stop()
	res.Stats = Stats{Compile: k.compileTime, Execute: time.Since(start)}
	if sampler != nil {
		res.Stats.StartHeap, res.Stats.PeakHeap = sampler.start, sampler.stop()
	}
	for _, ix := range k.indexes {
		ix.release()
	}
	for _, cl := range k.cells {
		cl.unbind()
	}
	if err != nil {
		return nil, err
	}
	if fr.err != nil {
		return nil, fr.err
	}
	return res, nil
}

// Run runs the kernel on st and converts the result to a logical value.
func (k *Kernel) Run(st storage.Store) (value.Value, error) {
	r, err := k.Exec(st)
	if err != nil {
		return nil, err
	}
	v := r.Value()
	r.Release() // v is a copy
	return v, nil
}

// runGuarded runs f, turning a Go panic (a bug in the engine, not a data
// error: those are detected and recorded in the frame) into an error.
func runGuarded(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Msg: fmt.Sprintf("internal error in the engine: %v", r)}
		}
	}()
	f()
	return nil
}

// heapSampler tracks the live heap while a kernel runs.
type heapSampler struct {
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	peak  uint64
	start uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// HeapBytes returns the bytes of heap objects now (live, or dead and not
// yet swept): the figure Stats.PeakHeap and Stats.StartHeap sample.
func HeapBytes() uint64 { return readHeap([]metrics.Sample{{Name: heapMetric}}) }

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	return 0
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{})}
	s := []metrics.Sample{{Name: heapMetric}}
	h.peak = readHeap(s)
	h.start = h.peak
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		s := []metrics.Sample{{Name: heapMetric}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				v := readHeap(s)
				h.mu.Lock()
				h.peak = max(h.peak, v)
				h.mu.Unlock()
			}
		}
	}()
	return h
}

func (h *heapSampler) stop() uint64 {
	if h == nil {
		return 0
	}
	s := []metrics.Sample{{Name: heapMetric}}
	v := readHeap(s)
	close(h.done)
	h.wg.Wait()
	return max(h.peak, v)
}
