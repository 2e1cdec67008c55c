package storel

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/storel/storel/engine"
	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Workspace collects what a program runs on: physical objects, storage
// mappings (SDQLite sources with CREATE statements) and data specs that
// fill declared objects once their declarations are known.
type Workspace struct {
	store   storage.Store
	sources []sdql.Source
	data    []dataSpec
	// Timings accumulates the time spent loading data (phase "load").
	Timings Timings
}

type dataSpec struct{ name, spec string }

// NewWorkspace returns an empty workspace.
func NewWorkspace() *Workspace {
	return &Workspace{store: storage.Store{}}
}

// Store returns the physical objects loaded so far.
func (w *Workspace) Store() storage.Store { return w.store }

// AddTensor stores the coordinates c as tensor name in the given format
// (a name such as "csr" or a level string such as "ss:1,0") and adds the
// format's standard storage mapping, so programs can refer to name.
func (w *Workspace) AddTensor(name string, c *storage.COO, format string) error {
	f, err := storage.ParseFormat(format)
	if err != nil {
		return fmt.Errorf("tensor %s: %v", name, err)
	}
	objs, err := storage.Build(name, c, f)
	if err != nil {
		return fmt.Errorf("tensor %s: %v", name, err)
	}
	for k, o := range objs {
		if _, dup := w.store[k]; dup {
			return fmt.Errorf("tensor %s: physical object %s is defined twice", name, k)
		}
		w.store[k] = o
	}
	text := storage.Mapping(name, f, c.Order(), c.Elem())
	w.sources = append(w.sources, sdql.Source{Name: "<" + format + " mapping of " + name + ">", Text: []byte(text)})
	return nil
}

// LoadTensor reads a .mtx or .tns file (optionally .gz) and adds it as
// tensor name in the given format (see AddTensor).
func (w *Workspace) LoadTensor(name, path, format string, opt storage.ReadOptions) error {
	start := time.Now()
	if opt.Progress == nil {
		opt.Progress = storage.TerminalProgress()
	}
	c, err := storage.ReadTensorFile(path, opt)
	if err != nil {
		return err
	}
	if format == "" {
		format = DefaultFormat(len(c.Dims))
	}
	err = w.AddTensor(name, c, format)
	w.Timings.Add("load", time.Since(start))
	return err
}

// DefaultFormat is the format used when --tensor names none: dense for
// vectors, CSR for matrices, CSF for higher orders.
func DefaultFormat(order int) string {
	switch order {
	case 1:
		return "d"
	case 2:
		return "csr"
	}
	return "csf"
}

// AddSource adds SDQLite text (typically CREATE statements describing the
// user's own storage mappings). Sources are compiled before the program.
func (w *Workspace) AddSource(name string, text []byte) {
	w.sources = append(w.sources, sdql.Source{Name: name, Text: text})
}

// SetObject provides physical object name directly.
func (w *Workspace) SetObject(name string, o storage.Object) { w.store[name] = o }

// SetData fills declared object name from spec (a file for arrays, hash
// maps and tries; a literal for scalars) once the program is compiled and
// the declaration's kind and element type are known.
func (w *Workspace) SetData(name, spec string) {
	w.data = append(w.data, dataSpec{name, spec})
}

// Program is a compiled SDQLite program bound to a workspace's data.
type Program struct {
	IR    *ir.Program // desugared and type-checked declarations and tensors
	Naive *ir.Expr    // the composed naive plan (paper §5.1)
	Query string      // the tensor computed, or "" for the final expression
	store storage.Store
	// Timings holds the phases run so far (parse, load, ...).
	Timings Timings
}

// Compile parses, checks and composes program (named name, for messages)
// with the workspace's storage mappings, loads the --data objects it
// declares, and checks every declared object against its declaration.
// query selects the result tensor ("" = the final bare expression, else
// the last tensor defined).
func (w *Workspace) Compile(name string, program []byte, query string) (*Program, error) {
	p := &Program{Query: query, store: w.store}
	p.Timings = append(p.Timings, w.Timings...)
	start := time.Now()
	srcs := append(append([]sdql.Source(nil), w.sources...), sdql.Source{Name: name, Text: program})
	prog, err := sdql.Compile(srcs...)
	if err != nil {
		return nil, err
	}
	p.IR = prog
	if query != "" && prog.Tensor(query) == nil {
		return nil, fmt.Errorf("%s: --query %s: no tensor of that name is defined", name, query)
	}
	p.Naive = prog.Compose(query)
	if p.Naive == nil {
		return nil, fmt.Errorf("%s: the program defines no tensor and has no final expression to compute", name)
	}
	p.Timings.Add("parse", time.Since(start))

	start = time.Now()
	for _, d := range w.data {
		decl := prog.Decl(d.name)
		if decl == nil {
			return nil, fmt.Errorf("--data %s: no object %s is declared (declare it with CREATE ... %s)", d.name, d.name, d.name)
		}
		o, err := storage.LoadObject(decl, d.spec, storage.ReadOptions{Progress: storage.TerminalProgress()})
		if err != nil {
			return nil, err
		}
		w.store[d.name] = o
	}
	w.data = nil
	if err := checkDecls(prog, w.store); err != nil {
		return nil, err
	}
	p.Timings.Add("load", time.Since(start))
	return p, nil
}

// checkDecls verifies that every declared object has data of the declared
// kind and element type, and that array lengths equal their declared sizes.
func checkDecls(prog *ir.Program, st storage.Store) error {
	var msgs []string
	for _, d := range prog.Decls {
		o, ok := st[d.Name]
		if !ok {
			msgs = append(msgs, fmt.Sprintf("%s: %s %s is declared but has no data (give it with --data %s=... or --tensor)", d.Pos, d.Kind, d.Name, d.Name))
			continue
		}
		if o.Kind() != d.Kind {
			msgs = append(msgs, fmt.Sprintf("%s: %s is declared as a %s but its data is a %s", d.Pos, d.Name, d.Kind, o.Kind()))
			continue
		}
		if o.ElemType() != d.Elem {
			if d.Elem == ir.Real && o.ElemType() == ir.Int {
				st[d.Name] = toReal(o)
			} else {
				msgs = append(msgs, fmt.Sprintf("%s: %s is declared %s but its data is %s", d.Pos, d.Name, d.Elem, o.ElemType()))
				continue
			}
		}
		if d.Kind == ir.ObjArray && len(d.Dims) == 1 {
			n, err := evalInt(d.Dims[0], st)
			if err != nil {
				msgs = append(msgs, fmt.Sprintf("%s: size of %s: %v", d.Pos, d.Name, err))
				continue
			}
			if got := st[d.Name].(*storage.Array).Len(); int64(got) != n {
				msgs = append(msgs, fmt.Sprintf("%s: %s is declared with %d elements (%s) but its data has %d", d.Pos, d.Name, n, d.Dims[0], got))
			}
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return nil
}

func evalInt(e *ir.Expr, st storage.Store) (int64, error) {
	v, err := eval.Eval(e, st)
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("not an int")
	}
	return n, nil
}

// toReal converts an int object to a real one (declared real, given ints).
func toReal(o storage.Object) storage.Object {
	switch x := o.(type) {
	case *storage.Scalar:
		return storage.RealScalar(float64(x.I))
	case *storage.Array:
		f := make([]float64, len(x.I))
		for i, v := range x.I {
			f[i] = float64(v)
		}
		return storage.RealArray(f)
	}
	return o
}

// Plan names which plan Run executes.
type Plan string

const (
	PlanNaive     Plan = "naive"
	PlanOptimized Plan = "optimized"
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
	Plan    Plan   // default PlanOptimized
	Engine  Engine // default EngineCompiled
	Repeat  int    // execute this many times; the timing is the median
	Threads int    // worker threads (0 = all cores)
}

// Result is the value a program computed.
type Result struct {
	Value   value.Value
	Type    ir.Type
	Timings Timings
	// PeakHeap is the highest live heap sampled while the compiled kernel
	// ran (0 for the interpreter).
	PeakHeap uint64
}

// Run executes the program.
func (p *Program) Run(opt RunOptions) (*Result, error) {
	plan := p.Naive
	res := &Result{Type: plan.Type}
	res.Timings = append(res.Timings, p.Timings...)
	reps := opt.Repeat
	if reps < 1 {
		reps = 1
	}
	// exec runs the plan once and reports the execution time proper.
	var exec func() (value.Value, time.Duration, error)
	switch opt.Engine {
	case EngineInterp:
		exec = func() (value.Value, time.Duration, error) {
			start := time.Now()
			v, err := eval.Eval(plan, p.store)
			return v, time.Since(start), err
		}
	case EngineCompiled, "":
		threads := opt.Threads
		if threads == 0 {
			threads = runtime.NumCPU()
		}
		k, err := engine.Compile(plan, engine.SchemaOf(p.store), engine.Options{Threads: threads})
		if err != nil {
			return nil, err
		}
		res.Timings.Add("compile", k.CompileTime())
		exec = func() (value.Value, time.Duration, error) {
			r, err := k.Exec(p.store)
			if err != nil {
				return nil, 0, err
			}
			res.PeakHeap = max(res.PeakHeap, r.Stats.PeakHeap)
			// Converting the kernel's result to a logical value is part
			// of producing output, not of execution.
			start := time.Now()
			v := r.Value()
			res.Timings.Add("write", time.Since(start))
			return v, r.Stats.Execute, nil
		}
	default:
		return nil, fmt.Errorf("unknown engine %q (want %s or %s)", opt.Engine, EngineCompiled, EngineInterp)
	}
	var times []time.Duration
	for r := 0; r < reps; r++ {
		v, d, err := exec()
		if err != nil {
			return nil, err
		}
		times = append(times, d)
		res.Value = v
	}
	res.Timings.Add("execute", median(times))
	return res, nil
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
