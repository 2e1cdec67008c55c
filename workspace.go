package storel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

// Workspace collects what a program runs on: tensors given as coordinates
// with one or more storage formats each, storage mappings (SDQLite sources
// with CREATE statements), physical objects, and data specs that fill
// declared objects once their declarations are known.
type Workspace struct {
	store   storage.Store // objects given directly or by --data
	tensors []*tensorSpec
	sources []sdql.Source
	data    []dataSpec
	// errs are what calls that return no error found wrong, for Compile.
	errs []error
	// origins says where each object's and tensor's data came from (a
	// file, or "given directly"), for messages.
	origins map[string]string
	// Timings accumulates the time spent loading data (phase "load").
	Timings Timings
}

// tensorSpec is a tensor given as coordinates, to be stored in each of
// its formats (one storage alternative per format).
type tensorSpec struct {
	name    string
	coo     *storage.COO
	formats []storage.Format
	names   []string        // the formats as the user wrote them
	built   []storage.Store // per format, built on first use
	mapping []sdql.Source   // per format, the standard mapping
}

type dataSpec struct{ name, spec string }

// NewWorkspace returns an empty workspace.
func NewWorkspace() *Workspace {
	return &Workspace{store: storage.Store{}, origins: map[string]string{}}
}

// MaxAlternatives bounds the storage combinations one program is
// optimized for.
const MaxAlternatives = 64

// AddTensor stores the coordinates c as tensor name in the given format
// (a name such as "csr" or a level string such as "ss:1,0") and adds the
// format's standard storage mapping, so programs can refer to name.
// Several formats separated by '|' ("csr|csc|hash") make alternatives:
// the optimizer plans for every combination of the tensors' formats and
// runs the cheapest.
func (w *Workspace) AddTensor(name string, c *storage.COO, format string) error {
	if name == "" {
		return fmt.Errorf("AddTensor: the tensor needs a name")
	}
	if c == nil {
		return fmt.Errorf("tensor %s: no coordinates (a nil *COO)", name)
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("tensor %s: %v", name, err)
	}
	for _, t := range w.tensors {
		if t.name == name {
			return fmt.Errorf("tensor %s is given twice", name)
		}
	}
	t := &tensorSpec{name: name, coo: c}
	for _, fs := range strings.Split(format, "|") {
		fs = strings.TrimSpace(fs)
		f, err := storage.ParseFormat(fs)
		if err == nil {
			f, err = f.ForOrder(c.Order())
		}
		if err != nil {
			return fmt.Errorf("tensor %s: %v", name, err)
		}
		t.formats = append(t.formats, f)
		t.names = append(t.names, fs)
	}
	t.built = make([]storage.Store, len(t.formats))
	t.mapping = make([]sdql.Source, len(t.formats))
	w.tensors = append(w.tensors, t)
	if n := w.combinations(); n > MaxAlternatives {
		return fmt.Errorf("tensor %s: %d storage combinations; at most %d are optimized", name, n, MaxAlternatives)
	}
	return nil
}

// build returns the physical objects and mapping of t in its i-th format.
func (t *tensorSpec) build(i int) (storage.Store, sdql.Source, error) {
	if t.built[i] == nil {
		objs, err := storage.Build(t.name, t.coo, t.formats[i])
		if err != nil {
			return nil, sdql.Source{}, fmt.Errorf("tensor %s: %v", t.name, err)
		}
		t.built[i] = objs
		text := storage.Mapping(t.name, t.formats[i], t.coo.Order(), t.coo.Elem())
		t.mapping[i] = sdql.Source{Name: ir.BuiltinSource("the " + t.names[i] + " mapping of " + t.name), Text: []byte(text)}
	}
	return t.built[i], t.mapping[i], nil
}

func (w *Workspace) combinations() int {
	n := 1
	for _, t := range w.tensors {
		n *= len(t.formats)
	}
	return n
}

// LoadTensor reads a .mtx or .tns file (optionally .gz) and adds it as
// tensor name in the given format(s) (see AddTensor); "" picks
// DefaultFormat for the tensor's order.
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
		format = DefaultFormat(c.Order())
	}
	err = w.AddTensor(name, c, format)
	if err == nil {
		w.origins[name] = path
	}
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

// SetObject provides physical object name directly. A nil object is
// reported by Compile, naming it.
func (w *Workspace) SetObject(name string, o storage.Object) {
	if o == nil {
		w.errs = append(w.errs, fmt.Errorf("object %s: SetObject was given no object (nil)", name))
		return
	}
	w.store[name] = o
}

// SetData fills declared object name from spec (a file for arrays, hash
// maps and tries; a literal for scalars) once the program is compiled and
// the declaration's kind and element type are known. What can be checked
// now is: a name given twice, and a spec that is neither a literal nor an
// existing file.
func (w *Workspace) SetData(name, spec string) error {
	if name == "" {
		return fmt.Errorf("SetData: the object needs a name")
	}
	for _, d := range w.data {
		if d.name == name {
			return fmt.Errorf("object %s is given data twice (%s and %s)", name, d.spec, spec)
		}
	}
	if _, given := w.store[name]; given {
		return fmt.Errorf("object %s is given data twice (directly and by %s)", name, spec)
	}
	if !isLiteral(spec) {
		if _, err := os.Stat(spec); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("data of %s: no file %s (nor is it a number, for a SCALAR)", name, spec)
		} else if err != nil {
			return fmt.Errorf("data of %s: %v", name, err)
		}
		w.origins[name] = spec
	}
	w.data = append(w.data, dataSpec{name, spec})
	return nil
}

// isLiteral reports whether spec is a scalar's value rather than a file.
func isLiteral(spec string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(spec), 64)
	return err == nil
}

// Variant is the program composed with one choice of storage format per
// tensor: its own mappings, physical objects and naive plan.
type Variant struct {
	Label string      // e.g. "A=csr B=csc"; empty when there is no choice
	IR    *ir.Program // desugared and type-checked declarations and tensors
	Naive *ir.Expr    // the composed naive plan (paper §5.1)
	Store storage.Store
	// Dims is the size of each mode of the result as the inputs' sizes
	// determine it (see shapes); 0 where they do not.
	Dims []int64
	// Warnings are lookups whose key ranges over data of another size.
	Warnings []string
	// sources are the texts compiled, for run-time errors' source lines.
	sources []sdql.Source
}

// Compile parses, checks and composes program (named name, for messages)
// with the workspace's storage mappings, once per storage alternative,
// loads the --data objects it declares, and checks every declared object
// against its declaration. query selects the result tensor ("" = the
// final bare expression, else the last tensor defined).
func (w *Workspace) Compile(name string, program []byte, query string) (*Program, error) {
	if len(w.errs) > 0 {
		return nil, errors.Join(w.errs...)
	}
	p := &Program{Query: query}
	p.Timings = append(p.Timings, w.Timings...)
	n := w.combinations()
	for c := 0; c < n; c++ {
		v, err := w.variant(c, name, program, query, &p.Timings)
		if err != nil {
			return nil, err
		}
		p.Variants = append(p.Variants, v)
	}
	// Every variant computes the same tensor from the same data.
	p.Warnings = p.Variants[0].Warnings
	return p, nil
}

// variant compiles combination c (a mixed-radix number over the tensors'
// format lists).
func (w *Workspace) variant(c int, name string, program []byte, query string, tm *Timings) (*Variant, error) {
	start := time.Now()
	v := &Variant{Store: storage.Store{}}
	var srcs []sdql.Source
	var label []string
	for _, t := range w.tensors {
		i := c % len(t.formats)
		c /= len(t.formats)
		objs, src, err := t.build(i)
		if err != nil {
			return nil, err
		}
		for k, o := range objs {
			v.Store[k] = o
		}
		srcs = append(srcs, src)
		label = append(label, t.name+"="+t.names[i])
	}
	if w.combinations() > 1 {
		v.Label = strings.Join(label, " ")
	}
	tm.Add("load", time.Since(start))

	start = time.Now()
	srcs = append(srcs, w.sources...)
	srcs = append(srcs, sdql.Source{Name: name, Text: program})
	prog, err := sdql.Compile(srcs...)
	if err != nil {
		return nil, err
	}
	v.IR, v.sources = prog, srcs
	if query != "" && prog.Tensor(query) == nil {
		return nil, fmt.Errorf("%s: --query %s: no tensor of that name is defined", name, query)
	}
	v.Naive = prog.Compose(query)
	if v.Naive == nil {
		return nil, fmt.Errorf("%s: the program defines no tensor and has no final expression to compute", name)
	}
	tm.Add("parse", time.Since(start))

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
	for k, o := range w.store {
		if _, clash := v.Store[k]; clash {
			return nil, fmt.Errorf("physical object %s is given twice (by a --tensor and directly)", k)
		}
		v.Store[k] = o
	}
	if err := checkDecls(prog, v.Store, w.objectOrigins()); err != nil {
		return nil, err
	}
	tm.Add("load", time.Since(start))
	sh := &shapes{store: v.Store, given: map[string][]extent{}, origins: w.origins, keys: map[string]extent{}, dicts: map[string][]extent{}}
	for _, t := range w.tensors {
		sh.given[t.name] = t.extents(w.origins[t.name])
	}
	v.Dims = sizes(fit(sh.infer(v.Naive), v.Naive.Type.Depth))
	v.Warnings = sh.warnings
	return v, nil
}

// extents are the sizes of t's modes, from its data.
func (t *tensorSpec) extents(from string) []extent {
	out := make([]extent, len(t.coo.Dims))
	for m, n := range t.coo.Dims {
		out[m] = extent{size: n, origin: fmt.Sprintf("%s's dimension %d (size %d)", t.name, m+1, n), fromData: true}
		if from != "" {
			out[m].origin = fmt.Sprintf("%s's dimension %d (size %d, from %s)", t.name, m+1, n, from)
		}
	}
	return out
}

// objectOrigins says where each physical object's data came from: its
// --data file, or the --tensor whose storage holds it.
func (w *Workspace) objectOrigins() map[string]string {
	out := map[string]string{}
	for _, t := range w.tensors {
		from := "tensor " + t.name
		if f := w.origins[t.name]; f != "" {
			from += " (" + f + ")"
		}
		for _, b := range t.built {
			for k := range b {
				out[k] = from
			}
		}
	}
	for k, f := range w.origins {
		if _, ok := w.store[k]; ok {
			out[k] = f
		}
	}
	return out
}

// checkDecls verifies that every declared object has data of the declared
// kind and element type, and that array lengths equal their declared sizes.
func checkDecls(prog *ir.Program, st storage.Store, origins map[string]string) error {
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
				data := ""
				if f := origins[d.Name]; f != "" {
					data = " (" + f + ")"
				}
				unit := "elements"
				if n == 1 {
					unit = "element"
				}
				msgs = append(msgs, fmt.Sprintf("%s: %s is declared with %d %s (%s%s) but its data%s has %d", d.Pos, d.Name, n, unit, d.Dims[0], sizeOrigins(d.Dims[0], origins), data, got))
			}
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return nil
}

// sizeOrigins says where the objects a declared size reads come from:
// ", from tensor A (a.mtx)".
func sizeOrigins(e *ir.Expr, origins map[string]string) string {
	var names, froms []string
	ir.Walk(e, func(n *ir.Expr) bool {
		if n.Op == ir.OpGlobal && origins[n.Name] != "" && !slices.Contains(names, n.Name) {
			names = append(names, n.Name)
			froms = append(froms, origins[n.Name])
		}
		return true
	})
	if len(froms) == 0 {
		return ""
	}
	if len(slices.Compact(slices.Clone(froms))) == 1 {
		return ", from " + froms[0]
	}
	parts := make([]string, len(names))
	for i := range names {
		parts[i] = names[i] + " from " + froms[i]
	}
	return ", " + strings.Join(parts, ", ")
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
