package storel

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"github.com/storel/storel/engine"
	"github.com/storel/storel/eval"
	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Program is a compiled SDQLite program bound to a workspace's data, in
// one Variant per storage alternative.
type Program struct {
	Variants []*Variant
	Query    string // the tensor computed, or "" for the final expression
	// Timings holds the phases run so far (parse, load, optimize, ...).
	Timings Timings
	// Optimized is set by Optimize: one result per variant and the choice.
	Optimized *opt.Alternatives
	// optimizedSI records whether Optimized is storage-independent.
	optimizedSI bool
	// Warnings are problems that do not stop the program but probably
	// make its result other than meant: a vector indexed by the columns
	// of a matrix of another size, for one.
	Warnings []string
}

// Dims returns the size of each mode of the result as the inputs' sizes
// determine it: SpMV of a 6x5 matrix has 6 rows even when its last rows
// are empty. A mode no input's size bounds is 0.
func (p *Program) Dims() []int64 { return p.Variants[0].Dims }

// Naive returns the naive plan of the first variant.
func (p *Program) Naive() *ir.Expr { return p.Variants[0].Naive }

// IR returns the checked program of the first variant.
func (p *Program) IR() *ir.Program { return p.Variants[0].IR }

// Optimize runs the cost-based optimizer on every variant (once; later
// calls with the same StorageIndependent setting return the first result)
// and picks the cheapest plan.
func (p *Program) Optimize(o opt.Options) (*opt.Alternatives, error) {
	if p.Optimized != nil && p.optimizedSI == o.StorageIndependent {
		return p.Optimized, nil
	}
	start := time.Now()
	alts := make([]opt.Alternative, len(p.Variants))
	for i, v := range p.Variants {
		alts[i] = opt.Alternative{Label: v.Label, Naive: v.Naive, Store: v.Store}
	}
	res, err := opt.OptimizeAlternatives(alts, o)
	p.Timings.Add("optimize", time.Since(start))
	if err != nil {
		return nil, err
	}
	p.Optimized, p.optimizedSI = res, o.StorageIndependent
	return res, nil
}

// Plan names which plan Run executes.
type Plan string

const (
	PlanNaive     Plan = "naive"
	PlanOptimized Plan = "optimized"
	// PlanLogical is the program optimized without its storage (the
	// paper's storage-independent stage, §6.5): each tensor is built from
	// its mapping into a dictionary once, and the optimized program reads
	// that (opt.Options.StorageIndependent).
	PlanLogical Plan = "logical"
)

// Engine names what executes a plan.
type Engine string

const (
	// EngineCompiled compiles the plan into a kernel (package engine).
	EngineCompiled Engine = "compiled"
	// EngineInterp runs the reference interpreter (package eval): slow,
	// obviously correct, the oracle the compiled engine is tested against.
	EngineInterp Engine = "interp"
)

// RunOptions control Run.
type RunOptions struct {
	Plan     Plan   // default PlanOptimized
	Engine   Engine // default EngineCompiled
	Repeat   int    // execute this many times, after a garbage collection (in prepare) when more than once; the timing is the median
	Threads  int    // worker threads (0 = all cores)
	Optimize opt.Options
	// NoValue leaves Result.Value nil when the compiled engine runs: a
	// caller that only writes the result streams it with Result.Entries,
	// never building the logical value (for a result of millions of
	// entries that conversion costs more than the kernel).
	NoValue bool
	// MeasureMemory fills Result.Memory and Result.PeakHeap: the last
	// run starts and ends with a garbage collection, so the heap it
	// leaves is its output, and samples the heap while it runs. With
	// Repeat > 1 that run is one more, not timed (the sampler's wake-ups
	// would weigh on the median).
	MeasureMemory bool
	// MemoryLimit is the heap, in bytes, a run may hold (its inputs
	// included): 0 means DefaultMemoryLimit, a negative value no limit.
	// A plan whose estimated result or temporaries (opt.Footprint) would
	// not fit is refused before it runs; a run that outgrows the limit
	// stops (engine.Limits). Errors are *LimitError.
	MemoryLimit int64
	// TimeLimit stops an execution that runs longer; 0: no limit.
	TimeLimit time.Duration
}

// Memory accounts for a compiled kernel's memory (a fused plan never
// materializes what a mapping only describes): the bytes of the
// physical objects it reads, of the result it leaves, and the most it
// allocated while running (its output, workspaces and temporaries;
// sampled every 2 ms, so a shorter peak can be missed).
type Memory struct {
	Inputs     uint64
	Output     uint64
	KernelPeak uint64
}

// Ratio is the run's peak memory, inputs plus the kernel's peak, over its
// inputs plus output: 1 for a kernel that allocates nothing but its
// output.
func (m Memory) Ratio() float64 {
	if m.Inputs+m.Output == 0 {
		return 0
	}
	return float64(m.Inputs+max(m.KernelPeak, m.Output)) / float64(m.Inputs+m.Output)
}

// Result is the value a program computed.
type Result struct {
	Value value.Value // nil after RunOptions.NoValue with the compiled engine

	Type ir.Type
	// Dims is the size of each mode of the result (see Program.Dims).
	Dims    []int64
	Timings Timings
	// Plan is the plan that ran and Variant the storage it ran on.
	Plan    *ir.Expr
	Variant *Variant
	// PeakHeap is the highest live heap sampled while the compiled kernel
	// ran its measured run (RunOptions.MeasureMemory; else 0, and 0 for
	// the interpreter).
	PeakHeap uint64
	// Memory is set when RunOptions.MeasureMemory asked for it and the
	// compiled engine ran.
	Memory *Memory
	kernel *engine.Result // the compiled kernel's own result
}

// Entries returns the result's entries in increasing coordinate order,
// for storage.WriteEntries: streamed from the compiled kernel's result
// when there is one, else taken from Value.
func (r *Result) Entries() (storage.Entries, error) {
	if r.kernel != nil {
		return r.kernel.Entries, nil
	}
	return storage.ValueEntries(r.Value, r.Type)
}

// Write writes the result to w in format "tns", "mtx" or "npy" (see
// storage.WriteEntries). Modes opt.Dims does not size are at least as
// large as Dims says, larger only if a key needs it.
func (r *Result) Write(w io.Writer, format string, opt storage.WriteOptions) error {
	each, err := r.Entries()
	if err != nil {
		return err
	}
	if opt.MinDims == nil {
		opt.MinDims = r.Dims
	}
	return storage.WriteEntries(w, format, each, r.Type, opt)
}

// WriteFile writes the result to path (see Write) through a temporary
// file renamed over path once complete, so that a failure leaves an
// existing file as it was; a device or pipe is written directly.
func (r *Result) WriteFile(path, format string, opt storage.WriteOptions) error {
	if err := storage.CheckWritable(format, r.Type, opt.Dims); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error { return r.Write(w, format, opt) })
}

// Run executes the program: by default the optimized plan of the cheapest
// storage alternative, compiled into a kernel.
func (p *Program) Run(o RunOptions) (*Result, error) {
	v, plan := p.Variants[0], p.Variants[0].Naive
	switch o.Plan {
	case PlanOptimized, PlanLogical, "":
		oo := o.Optimize
		oo.StorageIndependent = o.Plan == PlanLogical
		alts, err := p.Optimize(oo)
		if err != nil {
			return nil, err
		}
		v, plan = p.Variants[alts.Best], alts.Chosen().Plan
	case PlanNaive:
	default:
		return nil, fmt.Errorf("unknown plan %q (want %s, %s or %s)", o.Plan, PlanNaive, PlanLogical, PlanOptimized)
	}
	limit := o.MemoryBudget()
	if limit > 0 {
		var stats *opt.Stats
		if p.Optimized != nil && o.Plan != PlanNaive {
			stats = p.Optimized.Chosen().Stats
		} else {
			stats = opt.GatherStats(v.Store)
		}
		if err := checkFootprint(plan, v.Store, stats, limit); err != nil {
			return nil, err
		}
		defer withMemoryLimit(limit)()
	}
	lim := engine.Limits{Memory: limit, Time: o.TimeLimit}
	res := &Result{Type: plan.Type, Plan: plan, Variant: v, Dims: v.Dims}
	res.Timings = append(res.Timings, p.Timings...)
	reps := max(o.Repeat, 1)
	// exec runs the plan once and reports the execution time proper; the
	// result it returns is converted to a logical value only once, after
	// the last repetition.
	var exec func(sample bool) (func() value.Value, time.Duration, error)
	var lastKernel *engine.Result
	switch o.Engine {
	case EngineInterp:
		exec = func(bool) (func() value.Value, time.Duration, error) {
			start := time.Now()
			var eo eval.Options
			if lim != (engine.Limits{}) {
				eo.Check = lim.Check()
			}
			val, err := eval.EvalWith(plan, v.Store, eo)
			return func() value.Value { return val }, time.Since(start), err
		}
	case EngineCompiled, "":
		threads := o.Threads
		if threads == 0 {
			threads = runtime.NumCPU()
		}
		k, err := engine.Compile(plan, engine.SchemaOf(v.Store), engine.Options{Threads: threads, Limits: lim})
		if err != nil {
			return nil, err
		}
		res.Timings.Add("compile", k.CompileTime())
		start := time.Now()
		k.Prepare(v.Store)
		res.Timings.Add("prepare", time.Since(start))
		exec = func(sample bool) (func() value.Value, time.Duration, error) {
			run := k.Exec
			if sample {
				run = k.ExecSampled
			}
			r, err := run(v.Store)
			if err != nil {
				return nil, 0, err
			}
			lastKernel = r
			// Converting the kernel's result to a logical value is part
			// of producing output, not of execution.
			return func() value.Value {
				res.kernel = r
				if o.NoValue {
					return nil
				}
				start := time.Now()
				val := r.Value()
				res.Timings.Add("write", time.Since(start))
				return val
			}, r.Stats.Execute, nil
		}
	default:
		return nil, fmt.Errorf("unknown engine %q (want %s or %s)", o.Engine, EngineCompiled, EngineInterp)
	}
	if reps > 1 {
		// The garbage of loading, optimizing and compiling is not the
		// plan's: a collection of it still marking while the timed runs
		// start slows them (SumMMM over a hash-stored factor by a fifth,
		// whose load leaves more), so repeated runs, a measurement, start
		// on a collected heap. The collection counts as preparing.
		start := time.Now()
		runtime.GC()
		res.Timings.Add("prepare", time.Since(start))
	}
	var times []time.Duration
	var last func() value.Value
	runs, measured := reps, o.MeasureMemory && o.Engine != EngineInterp
	if measured && reps > 1 {
		runs++ // one more, measuring memory, untimed
	}
	for r := 0; r < runs; r++ {
		var d time.Duration
		var err error
		measure := measured && r == runs-1
		// Only the last run's result is kept: the run before's output is
		// garbage now, so it neither stays live through this run nor
		// grows the heap under it, and its storage goes to this run
		// (engine.Result.Release), unless this run measures the memory
		// it takes.
		if lastKernel != nil && !measure {
			lastKernel.Release()
		}
		last, res.kernel, lastKernel = nil, nil, nil
		var base uint64
		if measure {
			base = liveHeap()
		}
		last, d, err = exec(measure)
		if err != nil {
			return nil, v.runError(err)
		}
		if !measure || runs == 1 {
			times = append(times, d)
		}
		if measure && lastKernel != nil {
			after := liveHeap()
			out := after - min(base, after)
			st := lastKernel.Stats
			res.Memory = &Memory{Inputs: uint64(v.Store.Bytes()), Output: out, KernelPeak: st.PeakHeap - min(st.StartHeap, st.PeakHeap)}
			res.PeakHeap = st.PeakHeap
		}
	}
	res.Value = last()
	res.Timings.Add("execute", median(times))
	return res, nil
}

// RunError is a run-time error of a program (an integer division by zero,
// an array read past its end, ...) at a position of its source text. It
// prints as "file:line:col: message" followed by the source line and a
// caret under the column, as compile errors do.
type RunError struct {
	Pos  ir.Pos
	Msg  string
	Line string // the source line at Pos; "" if unknown
	Err  error  // the engine's or the interpreter's error
}

func (e *RunError) Error() string {
	return (&sdql.Error{Pos: e.Pos, Msg: e.Msg, Line: e.Line}).Caret()
}

func (e *RunError) Unwrap() error { return e.Err }

// runError gives an execution error that has a source position the line
// of source it names; other errors pass through.
func (v *Variant) runError(err error) error {
	var pos ir.Pos
	var msg string
	var ee *engine.Error
	var ie *eval.Error
	switch {
	case errors.As(err, &ee) && ee.Limit != "":
		flag := map[string]string{"memory": "--memory-limit, RunOptions.MemoryLimit", "time": "--time-limit, RunOptions.TimeLimit"}[ee.Limit]
		return &LimitError{Limit: ee.Limit, Msg: ee.Msg + " (raise it with " + flag + ")"}
	case errors.As(err, &ee):
		pos, msg = ee.Pos, ee.Msg
	case errors.As(err, &ie):
		pos, msg = ie.Pos, ie.Msg
	default:
		return err
	}
	if !pos.IsValid() {
		return err
	}
	re := &RunError{Pos: pos, Msg: msg, Err: err}
	for _, s := range v.sources {
		if s.Name == pos.File {
			re.Line = s.Line(pos.Line)
		}
	}
	return re
}

// liveHeap collects garbage and returns the bytes of live heap objects.
func liveHeap() uint64 {
	// Two cycles: storage released by earlier runs (engine.Result.Release)
	// is held by a sync.Pool for one cycle more.
	runtime.GC()
	runtime.GC()
	return engine.HeapBytes()
}

func median(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Timing is the duration of one phase.
type Timing struct {
	Phase string
	D     time.Duration
}

// Timings lists phases in the order they ran.
type Timings []Timing

// Add adds d to phase (creating it at the end if new).
func (t *Timings) Add(phase string, d time.Duration) {
	for i := range *t {
		if (*t)[i].Phase == phase {
			(*t)[i].D += d
			return
		}
	}
	*t = append(*t, Timing{phase, d})
}

// Get returns the duration of phase.
func (t Timings) Get(phase string) time.Duration {
	for _, x := range t {
		if x.Phase == phase {
			return x.D
		}
	}
	return 0
}
