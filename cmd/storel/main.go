package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/storel/storel"
	"github.com/storel/storel/engine"
	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/opt"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
)

func main() {
	// STOREL_CPUPROFILE=FILE profiles a whole command, for developers.
	if path := os.Getenv("STOREL_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				code := run(os.Args[1:], os.Stdout, os.Stderr)
				pprof.StopCPUProfile()
				f.Close()
				os.Exit(code)
			}
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  storel run PROGRAM.sdql [flags]      compute the program's result
  storel explain PROGRAM.sdql [flags]  show the parsed, desugared, composed and optimized plans
  storel demo [KERNEL] [flags]         run a paper kernel on built-in data (kernels: %s)
  storel shard PROGRAM.sdql [run's flags] --parts N --output DIR
                                       cut the work into N parts that run on their own
  storel combine DIR [--output FILE]   add up the parts' results (DIR/part-*/result.tns)

flags of run and explain:
  --tensor NAME=FILE[:FORMAT]  load .mtx/.tns (optionally .gz) as tensor NAME stored in FORMAT
                               (dense, coo, csr, csc, dcsr, dcsc, csf, hash, trie, sell, or a
                               level string such as ds, ss:1,0, sss:0,2,1); a sparse format with
                               +pattern (csr+pattern) stores no values: every entry is 1;
                               repeatable
  --dims NAME=D1,D2,...        dimensions of a --tensor (default: inferred from the file), or of
                               the result when NAME is the tensor computed; --dims D1,D2,...
                               sizes the result whatever its name (default: the sizes of the
                               inputs that bind its keys, else its largest keys)
  --storage FILE.sdql          more CREATE statements: your own storage mappings; repeatable
  --data NAME=FILE|VALUE       fill a declared object: ARRAY from .npy or .txt, HASHMAP or TRIE
                               from .tns/.mtx, SCALAR from a literal; repeatable
  --query NAME                 the tensor to compute (default: the final bare expression, else
                               the last tensor defined)
  --output FILE                write the result as .tns, .mtx or .npy (default: .tns to stdout);
                               an existing file is replaced only once the new one is complete
  --plan naive|logical|optimized  which plan to run (default optimized); logical optimizes
                               the program alone, reading each tensor built from its mapping
  --timings                    print 'timing: <phase> <ms> ms' lines on stderr
  --repeat N                   run the execute phase N times and report the median
  --threads N                  worker threads (default: all cores)
  --engine compiled|interp     run the compiled kernel (default) or the reference interpreter
  --stats FILE                 override the statistics gathered from the data (see opt.ParseStats)
  --node-limit N, --opt-time-limit D  bound each optimizer stage (defaults 20000 nodes, 1s)
  --memory-limit SIZE          the memory a run may hold, as 512M or 8G, or none (default: 3/4
                               of the machine's or the cgroup's memory): a plan estimated to
                               need more is refused, a run that grows past it stops
  --time-limit D               stop the execution after D (as 30s or 5m; default none)
  --dot FILE                   explain: write the chosen plan as a Graphviz picture
  --manifest FILE              a part written by storel shard (its program and inputs)

storel shard splits the outermost sum over the program's largest input (a --tensor in a
level format) by its first coordinate into N parts balanced by entries, each with its slice
of that tensor (rebased arrays and a storage mapping) and copies of the other inputs:
  --parts N                    how many parts (default 2)
  --output DIR                 a new or empty directory: DIR/part-NNN/manifest.txt, DIR/combine.txt
  --copy NAME                  copy input NAME to every part even if it is as large as the split one

A --tensor may list several formats, --tensor A=a.mtx:csr|csc|hash: the optimizer plans for every
combination and runs the cheapest; explain shows their costs side by side.
`

// exitError carries an exit status: 1 for bad input, 2 for misuse.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func misuse(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintf(stderr, "storel: %v\n", err)
	if code == 2 {
		fmt.Fprintf(stderr, "run 'storel help' for usage\n")
	}
	return code
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, strings.Join(demoKernels(), ", "))
		return &exitError{2, errors.New("no command given")}
	}
	switch args[0] {
	case "run", "explain", "shard":
		o, err := parseFlags(args[0], args[1:], false)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usage, strings.Join(demoKernels(), ", "))
			return nil
		}
		if err != nil {
			return err
		}
		if o.manifest != "" {
			if err := o.applyManifest(); err != nil {
				return err
			}
		}
		if o.program == "" {
			return misuse("%s needs a PROGRAM.sdql argument", args[0])
		}
		switch args[0] {
		case "shard":
			return cmdShard(o, stdout)
		case "run":
			return cmdRun(o, stdout, stderr)
		}
		return cmdExplain(o, stdout, stderr)
	case "combine":
		return cmdCombine(args[1:], stdout)
	case "demo":
		o, err := parseFlags("demo", args[1:], false)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, demoUsage, strings.Join(demoKernels(), ", "))
			return nil
		}
		if err != nil {
			return err
		}
		return cmdDemo(o, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stdout, usage, strings.Join(demoKernels(), ", "))
		return nil
	}
	return misuse("unknown command %q", args[0])
}

// options are the parsed flags of one command.
type options struct {
	cmd       string
	program   string // path, or kernel name for demo
	tensors   []string
	dims      map[string][]int64
	outDims   []int64 // --dims D1,D2,...: the result's
	storages  []string
	data      []string
	query     string
	output    string
	plan      string
	engine    string
	timings   bool
	repeat    int
	threads   int
	size      int // demo: scale of the built-in data
	dot       string
	stats     string
	nodeLimit int
	timeLimit time.Duration // of the optimizer
	memLimit  int64         // RunOptions.MemoryLimit
	runLimit  time.Duration // of the execution
	manifest  string        // run: a part written by storel shard
	parts     int           // shard
	copies    []string      // shard: inputs copied to every part however large
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func parseFlags(cmd string, args []string, needProgram bool) (*options, error) {
	o := &options{cmd: cmd, dims: map[string][]int64{}}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var tensors, storages, data, dims, copies multiFlag
	fs.Var(&tensors, "tensor", "")
	fs.Var(&storages, "storage", "")
	fs.Var(&data, "data", "")
	fs.Var(&dims, "dims", "")
	fs.StringVar(&o.query, "query", "", "")
	fs.StringVar(&o.output, "output", "", "")
	fs.StringVar(&o.plan, "plan", "optimized", "")
	fs.StringVar(&o.engine, "engine", "compiled", "")
	fs.BoolVar(&o.timings, "timings", false, "")
	fs.IntVar(&o.repeat, "repeat", 1, "")
	fs.IntVar(&o.threads, "threads", 0, "")
	fs.IntVar(&o.size, "size", 1, "")
	fs.StringVar(&o.dot, "dot", "", "")
	fs.StringVar(&o.stats, "stats", "", "")
	fs.IntVar(&o.nodeLimit, "node-limit", 0, "")
	fs.DurationVar(&o.timeLimit, "opt-time-limit", 0, "")
	fs.DurationVar(&o.runLimit, "time-limit", 0, "")
	memLimit := fs.String("memory-limit", "", "")
	if cmd == "run" || cmd == "explain" {
		fs.StringVar(&o.manifest, "manifest", "", "")
	}
	if cmd == "shard" {
		fs.IntVar(&o.parts, "parts", 2, "")
		fs.Var(&copies, "copy", "")
	}
	// Flags may come before or after the program argument.
	positional, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, misuse("%s: %v", cmd, err)
	}
	o.tensors, o.storages, o.data, o.copies = tensors, storages, data, copies
	switch *memLimit {
	case "":
	case "none", "off":
		o.memLimit = -1
	default:
		n, err := storel.ParseBytes(*memLimit)
		if err != nil || n == 0 {
			return nil, misuse("--memory-limit %s: want a size such as 512M or 8G, or none", *memLimit)
		}
		o.memLimit = int64(min(n, 1<<62))
	}
	if o.runLimit < 0 {
		return nil, misuse("--time-limit %s: want a positive duration", o.runLimit)
	}
	for _, d := range dims {
		if err := o.addDims(d); err != nil {
			return nil, err
		}
	}
	switch {
	case len(positional) > 1:
		return nil, misuse("%s takes one program, got %d arguments: %s", cmd, len(positional), strings.Join(positional, " "))
	case len(positional) == 1:
		o.program = positional[0]
	case needProgram:
		return nil, misuse("%s needs a PROGRAM.sdql argument", cmd)
	}
	switch storel.Plan(o.plan) {
	case storel.PlanNaive, storel.PlanLogical, storel.PlanOptimized:
	default:
		return nil, misuse("--plan %s: want naive, logical or optimized", o.plan)
	}
	if o.engine != string(storel.EngineCompiled) && o.engine != string(storel.EngineInterp) {
		return nil, misuse("--engine %s: want compiled or interp", o.engine)
	}
	if o.repeat < 1 {
		return nil, misuse("--repeat %d: want at least 1", o.repeat)
	}
	if o.threads < 0 {
		return nil, misuse("--threads %d: want 0 (all cores) or more", o.threads)
	}
	for _, t := range o.tensors {
		_, rest, _ := strings.Cut(t, "=")
		if _, format := splitFileFormat(rest); format != "" {
			for _, f := range strings.Split(format, "|") {
				if _, err := storage.ParseFormat(strings.TrimSpace(f)); err != nil {
					return nil, misuse("--tensor %s: %v", t, err)
				}
			}
		}
	}
	if o.output != "" && cmd != "shard" { // shard's --output is a directory
		if _, err := outputFormat(o.output); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// parseInterleaved parses args with fs, flags coming before or after the
// positional arguments, and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func orResult(name string) string {
	if name == "" {
		return "the result"
	}
	return name
}

// addDims parses --dims [NAME=]D1,D2,...: a tensor's sizes, or without a
// name the result's.
func (o *options) addDims(d string) error {
	name, list, ok := strings.Cut(d, "=")
	if !ok {
		name, list = "", d
	}
	if _, twice := o.dims[name]; twice || (name == "" && o.outDims != nil) {
		return misuse("--dims %s: the sizes of %s are given twice", d, orResult(name))
	}
	var sizes []int64
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n <= 0 {
			return misuse("--dims %s: %q is not a positive size (want [NAME=]D1,D2,...)", d, s)
		}
		sizes = append(sizes, n)
	}
	if name == "" {
		o.outDims = sizes
	} else {
		o.dims[name] = sizes
	}
	return nil
}

// workspace loads everything the flags name.
func (o *options) workspace() (*storel.Workspace, error) {
	w := storel.NewWorkspace()
	for _, t := range o.tensors {
		name, rest, ok := strings.Cut(t, "=")
		if !ok || name == "" || rest == "" {
			return nil, misuse("--tensor %s: want NAME=FILE[:FORMAT]", t)
		}
		path, format := splitFileFormat(rest)
		if err := w.LoadTensor(name, path, format, storage.ReadOptions{Dims: o.dims[name]}); err != nil {
			return nil, err
		}
	}
	for _, s := range o.storages {
		text, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		w.AddSource(s, text)
	}
	for _, d := range o.data {
		name, spec, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			return nil, misuse("--data %s: want NAME=FILE or NAME=VALUE", d)
		}
		if err := w.SetData(name, spec); err != nil {
			return nil, fmt.Errorf("--data %s: %v", d, err)
		}
	}
	return w, nil
}

func hasTensor(tensors []string, name string) bool {
	for _, t := range tensors {
		if n, _, _ := strings.Cut(t, "="); n == name {
			return true
		}
	}
	return false
}

// splitFileFormat splits FILE[:FORMAT]. Formats contain ':' themselves
// (ss:1,0), so the file is the shortest prefix that names an existing file
// or ends in a known extension.
func splitFileFormat(s string) (path, format string) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		p := s[:i]
		if _, err := os.Stat(p); err == nil || hasTensorExt(p) {
			return p, s[i+1:]
		}
	}
	return s, ""
}

func hasTensorExt(p string) bool {
	p = strings.TrimSuffix(p, ".gz")
	ext := filepath.Ext(p)
	return ext == ".mtx" || ext == ".tns"
}

func (o *options) runOptions(p *storel.Program) (storel.RunOptions, error) {
	oo, err := o.optimizeOptions(p)
	return storel.RunOptions{Plan: storel.Plan(o.plan), Engine: storel.Engine(o.engine), Repeat: o.repeat, Threads: o.threads, Optimize: oo,
		MemoryLimit: o.memLimit, TimeLimit: o.runLimit}, err
}

// run executes p as the flags say.
func (o *options) run(p *storel.Program) (*storel.Result, error) {
	ro, err := o.runOptions(p)
	if err != nil {
		return nil, err
	}
	return p.Run(ro)
}

func (o *options) compile() (*storel.Program, error) {
	w, err := o.workspace()
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(o.program)
	if err != nil {
		return nil, err
	}
	p, err := w.Compile(o.program, text, o.query)
	if err != nil {
		return nil, err
	}
	if err := o.resolveDims(p); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveDims takes --dims NAME=... naming p's result as the result's
// sizes and refuses a name that is neither a --tensor nor the result.
func (o *options) resolveDims(p *storel.Program) error {
	result := resultName(p)
	for name, d := range o.dims {
		switch {
		case hasTensor(o.tensors, name):
		case name == result:
			o.outDims = d
		default:
			return misuse("--dims %s: no --tensor %s, and the result is %s", name, name, orResult(result))
		}
	}
	return nil
}

// resultName is the name of the tensor p computes, or "" for a final
// bare expression.
func resultName(p *storel.Program) string {
	if p.Query != "" {
		return p.Query
	}
	prog := p.IR()
	if prog.Result == nil && len(prog.Tensors) > 0 {
		return prog.Tensors[len(prog.Tensors)-1].Name
	}
	return ""
}

// printWarnings reports what compiles but is probably not meant.
func printWarnings(w io.Writer, p *storel.Program) {
	for _, m := range p.Warnings {
		fmt.Fprintf(w, "storel: warning: %s\n", m)
	}
}

func cmdRun(o *options, stdout, stderr io.Writer) error {
	if o.output != "" {
		if err := atomicfile.CheckTarget(o.output); err != nil {
			return err
		}
	}
	p, err := o.compile()
	if err != nil {
		return err
	}
	printWarnings(stderr, p)
	if err := o.checkOutput(p); err != nil {
		return err
	}
	ro, err := o.runOptions(p)
	if err != nil {
		return err
	}
	ro.NoValue = true // the result is only written: stream it
	ro.MeasureMemory = o.timings
	stop := startWatchdog(stderr, ro)
	res, err := p.Run(ro)
	stop()
	if err != nil {
		return err
	}
	if err := o.writeResult(res, stdout); err != nil {
		return err
	}
	if o.timings {
		printTimings(stderr, res)
	}
	return nil
}

// outputFormat is the format --output names by its extension; a device
// or pipe without one (/dev/null, /dev/stdout) gets .tns.
func outputFormat(path string) (string, error) {
	switch ext := strings.TrimPrefix(filepath.Ext(path), "."); ext {
	case "tns", "mtx", "npy":
		return ext, nil
	}
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() && !info.IsDir() {
		return "tns", nil
	}
	return "", misuse("--output %s: want a .tns, .mtx or .npy file", path)
}

// checkOutput refuses, before anything runs, a result the output format
// cannot hold or dims that do not fit it.
func (o *options) checkOutput(p *storel.Program) error {
	format := "tns"
	if o.output != "" {
		format, _ = outputFormat(o.output)
	}
	if err := o.checkOutDims(p); err != nil {
		return err
	}
	t := p.Naive().Type
	dims := o.outDims
	if dims == nil {
		dims = p.Dims()
	}
	if err := storage.CheckWritable(format, t, dims); err != nil {
		return fmt.Errorf("--output %s: %v", orStdout(o.output), err)
	}
	return nil
}

// checkOutDims refuses result sizes (--dims) of another number of
// dimensions than p's result has.
func (o *options) checkOutDims(p *storel.Program) error {
	if t := p.Naive().Type; o.outDims != nil && len(o.outDims) != t.Depth {
		return misuse("--dims: %d sizes given, but the result (%s) has %d dimensions", len(o.outDims), t, t.Depth)
	}
	return nil
}

func (o *options) writeResult(res *storel.Result, stdout io.Writer) error {
	format := "tns"
	if o.output != "" {
		format, _ = outputFormat(o.output)
	}
	start := timeNow()
	wo := storage.WriteOptions{Dims: o.outDims}
	var err error
	if o.output == "" {
		err = res.Write(stdout, format, wo)
	} else {
		err = res.WriteFile(o.output, format, wo)
	}
	res.Timings.Add("write", timeSince(start))
	if err != nil {
		return fmt.Errorf("writing %s: %v", orStdout(o.output), err)
	}
	return nil
}

func orStdout(p string) string {
	if p == "" {
		return "standard output"
	}
	return p
}

// printTimings prints the contract's phases in a fixed order, then the
// peak heap of the execution when the compiled engine measured it.
func printTimings(w io.Writer, res *storel.Result) {
	for _, phase := range []string{"parse", "load", "optimize", "compile", "prepare", "execute", "write"} {
		fmt.Fprintf(w, "timing: %s %.3f ms\n", phase, float64(res.Timings.Get(phase).Microseconds())/1000)
	}
	if res.PeakHeap > 0 {
		fmt.Fprintf(w, "memory: peak-heap %.1f MiB\n", mib(res.PeakHeap))
	}
	if m := res.Memory; m != nil {
		fmt.Fprintf(w, "memory: inputs %.1f MiB, output %.1f MiB, kernel peak %.1f MiB: inputs + peak = %.2fx inputs + output\n",
			mib(m.Inputs), mib(m.Output), mib(m.KernelPeak), m.Ratio())
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func cmdExplain(o *options, stdout, stderr io.Writer) error {
	p, err := o.compile()
	if err != nil {
		return err
	}
	printWarnings(stderr, p)
	if text, err := os.ReadFile(o.program); err == nil {
		if f, err := sdql.ParseFile(sdql.Source{Name: o.program, Text: text}); err == nil {
			fmt.Fprintf(stdout, "== parsed %s\n%s\n\n", o.program, strings.TrimSpace(sdql.Format(f)))
		}
	}
	prog := p.IR()
	fmt.Fprintln(stdout, "== declarations")
	for _, d := range prog.Decls {
		fmt.Fprintf(stdout, "CREATE %s %s %s%s;\n", d.Elem, d.Kind, d.Name, dimsString(d))
	}
	fmt.Fprintln(stdout, "\n== desugared tensors")
	for _, t := range prog.Tensors {
		fmt.Fprintf(stdout, "CREATE TENSOR %s AS  // %s\n%s;\n", t.Name, t.Def.Type, indent(ir.Format(t.Def)))
	}
	if prog.Result != nil {
		fmt.Fprintf(stdout, "\n== final expression  // %s\n%s\n", prog.Result.Type, ir.Format(prog.Result))
	}
	naive := p.Naive()
	fmt.Fprintf(stdout, "\n== naive plan (paper §5.1)  // %s, %d nodes\n%s\n", naive.Type, ir.Size(naive), ir.Format(naive))
	if o.plan == string(storel.PlanNaive) {
		return nil
	}
	oo, err := o.optimizeOptions(p)
	if err != nil {
		return err
	}
	oo.StorageIndependent = o.plan == string(storel.PlanLogical)
	alts, err := p.Optimize(oo)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\n== optimizer (paper §5)")
	if len(p.Variants) > 1 {
		alts.Explain(stdout)
	} else {
		alts.Chosen().Explain(stdout)
	}
	threads := o.threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	v := p.Variants[alts.Best]
	k, err := engine.Compile(alts.Chosen().Plan, engine.SchemaOf(v.Store), engine.Options{Threads: threads})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\n== kernel (engine): loop nests")
	k.Explain(stdout)
	if o.dot != "" {
		if err := atomicfile.Write(o.dot, alts.Chosen().Dot); err != nil {
			return fmt.Errorf("writing %s: %v", o.dot, err)
		}
	}
	return nil
}

// optimizeOptions reads --stats, which may name only p's objects, and
// the limits.
func (o *options) optimizeOptions(p *storel.Program) (opt.Options, error) {
	oo := opt.Options{NodeLimit: o.nodeLimit, TimeLimit: o.timeLimit}
	if o.stats != "" {
		f, err := os.Open(o.stats)
		if err != nil {
			return oo, err
		}
		defer f.Close()
		if oo.Stats, err = opt.ParseStats(o.stats, f); err != nil {
			return oo, err
		}
		known := map[string]bool{}
		for _, v := range p.Variants {
			for name := range v.Store {
				known[name] = true
			}
		}
		var unknown []string
		for _, name := range oo.Stats.Names() {
			if !known[name] {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			return oo, fmt.Errorf("%s: no object of the program is named %s", o.stats, strings.Join(unknown, ", "))
		}
	}
	return oo, nil
}

func dimsString(d *ir.Decl) string {
	if d.Kind == ir.ObjScalar {
		return ""
	}
	var sb strings.Builder
	if d.Kind == ir.ObjTrie {
		for _, e := range d.Dims {
			fmt.Fprintf(&sb, "(%s)", e)
		}
		return sb.String()
	}
	parts := make([]string, len(d.Dims))
	for i, e := range d.Dims {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
