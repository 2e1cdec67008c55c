package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/storel/storel/storage"
)

// Inputs are the files of one kernel run, shared by every system.
type Inputs struct {
	Label string
	// Tensors maps a program's tensor name to its file (.mtx/.tns, maybe .gz).
	Tensors map[string]string
	// Dims gives the sizes of a tensor's modes when its file understates them.
	Dims map[string][]int64
	// Shapes are the sizes of every tensor (for dense-memory estimates).
	Shapes map[string][]int64
	X      string // the dense vector of BATAX and SpMV (.npy)
	Beta   string // BATAX's scalar
	NNZ    int64  // non-zeros of the main input, for choosing what the oracle can run
}

// names returns the tensor names in a stable order.
func (in *Inputs) names() []string {
	var ns []string
	for _, n := range []string{"A", "B", "C", "D"} {
		if _, ok := in.Tensors[n]; ok {
			ns = append(ns, n)
		}
	}
	return ns
}

func dimsFlag(name string, d []int64) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.FormatInt(v, 10)
	}
	return name + "=" + strings.Join(s, ",")
}

// StorelRun is one storel invocation.
type StorelRun struct {
	Program string            // .sdql path
	Formats map[string]string // tensor -> format
	Plan    string            // naive or optimized
	Threads int
}

// storelArgs builds `storel run|explain ...` for in.
func (h *Harness) storelArgs(cmd string, r StorelRun, in *Inputs, output string) []string {
	args := []string{h.cfg.Storel, cmd, r.Program}
	for _, n := range in.names() {
		args = append(args, "--tensor", n+"="+in.Tensors[n]+":"+r.Formats[n])
		if d, ok := in.Dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	if in.X != "" {
		args = append(args, "--data", "x="+in.X)
	}
	if in.Beta != "" {
		args = append(args, "--data", "beta="+in.Beta)
	}
	if cmd == "run" {
		args = append(args, "--timings", "--repeat", strconv.Itoa(h.cfg.Repeat),
			"--threads", strconv.Itoa(r.Threads), "--plan", r.Plan, "--output", output)
	}
	return args
}

// oracleArgs builds the reference-interpreter run of the naive plan.
func (h *Harness) oracleArgs(program string, formats map[string]string, in *Inputs, output string) []string {
	args := []string{h.cfg.Self, "oracle", program}
	for _, n := range in.names() {
		args = append(args, "--tensor", n+"="+in.Tensors[n]+":"+formats[n])
		if d, ok := in.Dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	if in.X != "" {
		args = append(args, "--data", "x="+in.X)
	}
	if in.Beta != "" {
		args = append(args, "--data", "beta="+in.Beta)
	}
	return append(args, "--output", output)
}

// pyArgs builds a SciPy/NumPy/PyTorch run of pypeer.py.
func (h *Harness) pyArgs(system, kernel string, in *Inputs, threads int, prefix string) []string {
	args := []string{h.cfg.Python, h.cfg.PyPeer, "--system", system, "--kernel", kernel}
	for _, n := range in.names() {
		args = append(args, "--tensor", n+"="+in.Tensors[n])
		if d, ok := in.Dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	if in.X != "" {
		args = append(args, "--data", "x="+in.X)
	}
	if in.Beta != "" {
		args = append(args, "--data", "beta="+in.Beta)
	}
	return append(args, "--repeat", strconv.Itoa(h.cfg.Repeat), "--threads", strconv.Itoa(threads), "--output", prefix)
}

// duckArgs builds a DuckDB run.
func (h *Harness) duckArgs(kernel string, in *Inputs, threads int, prefix string) []string {
	args := []string{h.cfg.DuckDB, "--kernel", kernel}
	for _, n := range in.names() {
		args = append(args, "--tensor", n+"="+in.Tensors[n])
		if d, ok := in.Dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	if in.X != "" {
		args = append(args, "--data", "x="+in.X)
	}
	if in.Beta != "" {
		args = append(args, "--data", "beta="+in.Beta)
	}
	return append(args, "--repeat", strconv.Itoa(h.cfg.Repeat), "--threads", strconv.Itoa(threads), "--output", prefix)
}

// tacoKernel is a kernel in TACO's command-line notation with its formats
// (TACO's level letters, d dense and s compressed, with an optional mode
// order: CSR is "ds", CSC "ds:1,0", CSF "sss"). dense stores every
// operand dense, for the sweep's "taco dense". vector names the operand
// that reads the inputs' dense vector (Inputs.X), if the kernel has one.
type tacoKernel struct {
	expr           string
	formats, dense map[string]string
	vector         string
}

// tacoKernels are Table 3's kernels with Table 3's TACO formats.
var tacoKernels = map[string]tacoKernel{
	"mmm": {"Q(i,j)=A(i,k)*B(k,j)",
		map[string]string{"Q": "ds", "A": "ds", "B": "ds"},
		map[string]string{"Q": "dd", "A": "dd", "B": "dd"}, ""},
	"summmm": {"Q=A(i,k)*B(k,j)",
		map[string]string{"A": "ds:1,0", "B": "ds"},
		map[string]string{"A": "dd", "B": "dd"}, ""},
	// beta is folded into the vector (xb = beta*x): the CLI reads tensors, not scalars.
	"batax": {"Q(j)=A(i,j)*A(i,k)*xb(k)",
		map[string]string{"Q": "d", "A": "ds", "xb": "d"},
		map[string]string{"Q": "d", "A": "dd", "xb": "d"}, "xb"},
	// Not in the paper: y(i) = sum_j A(i,j) x(j), CSR times a dense vector.
	"spmv": {"Q(i)=A(i,j)*x(j)",
		map[string]string{"Q": "d", "A": "ds", "x": "d"},
		map[string]string{"Q": "d", "A": "dd", "x": "d"}, "x"},
	// TACO fails on the CSC factor (paper §6.1), so B is CSR here.
	"ttm": {"Q(i,j,k)=A(i,j,l)*B(k,l)",
		map[string]string{"Q": "sss", "A": "sss", "B": "ds"}, nil, ""},
	// D is the program's (j,l) matrix; CSR of it is the CSC of the formula's D(l,j).
	"mttkrp": {"Q(i,j)=B(i,k,l)*C(k,j)*D(j,l)",
		map[string]string{"Q": "dd", "B": "sss", "C": "ds", "D": "ds"}, nil, ""},
	// The cpd experiment's MTTKRP: dense factor matrices.
	cpdKernel: {"Q(i,j)=B(i,k,l)*C(k,j)*D(j,l)",
		map[string]string{"Q": "dd", "B": "sss", "C": "dd", "D": "dd"}, nil, ""},
}

// tacoTolerance checks TACO's answers: its text writers print values with
// C++'s default six significant digits, so a correct entry can be off by
// 5e-6 of its value.
var tacoTolerance = Tolerance{Rel: 1e-5, Abs: 1e-10}

// tacoArgs builds a taco run (dense: every operand stored dense). TACO
// reads .mtx matrices and, for other orders, .tns files whose dimensions
// it takes from the largest coordinates, or .ttx files (Matrix Market's
// header for tensors) that state them; so .gz inputs are unpacked, tensors
// and the vector are written as .ttx, and beta is folded into x.
func (h *Harness) tacoArgs(kernel string, in *Inputs, output string, dense bool) ([]string, error) {
	k, ok := tacoKernels[kernel]
	if !ok {
		return nil, fmt.Errorf("no TACO expression for %s", kernel)
	}
	formats := k.formats
	if dense {
		if formats = k.dense; formats == nil {
			return nil, fmt.Errorf("no dense TACO formats for %s", kernel)
		}
	}
	args := []string{h.cfg.Taco, k.expr}
	var names []string
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, "-f="+n+":"+formats[n])
	}
	for _, n := range in.names() {
		p, err := h.tacoInput(in.Tensors[n], in.Shapes[n])
		if err != nil {
			return nil, err
		}
		args = append(args, "-i="+n+":"+p)
	}
	if in.X != "" {
		if k.vector == "" {
			return nil, fmt.Errorf("TACO's %s has no vector operand", kernel)
		}
		p, err := h.vectorTTX(in.X, in.Beta)
		if err != nil {
			return nil, err
		}
		args = append(args, "-i="+k.vector+":"+p)
	}
	// -time=1: see runRepeated for why TACO's own repeats are not used.
	return append(args, "-o=Q:"+output, "-time=1"), nil
}

// tacoInput returns a file TACO reads as the tensor of path with the
// given shape: the .mtx itself, a copy with real values of a .mtx.gz or of
// a pattern or integer .mtx, or a .ttx.
func (h *Harness) tacoInput(path string, shape []int64) (string, error) {
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	if strings.HasSuffix(base, ".mtx") {
		if !strings.HasSuffix(path, ".gz") {
			// TACO reads only the field "real" (not pattern or integer).
			if field, err := mtxField(path); err != nil || field == storage.FieldReal {
				return path, err
			}
		}
		out := filepath.Join(h.cfg.TmpDir, "plain", base)
		return out, cached(out, func() error {
			c, err := readTensor(path, nil)
			if err != nil {
				return err
			}
			return WriteMTX(out, c)
		})
	}
	out := filepath.Join(h.cfg.TmpDir, "plain", strings.TrimSuffix(base, filepath.Ext(base))+"-"+dimsLabel(shape)+".ttx")
	return out, cached(out, func() error {
		c, err := readTensor(path, shape)
		if err != nil {
			return err
		}
		return WriteTTX(out, c)
	})
}

func dimsLabel(d []int64) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, "x")
}

// vectorTTX writes x, or beta*x when beta is given, as an order-1 .ttx file.
func (h *Harness) vectorTTX(npy, beta string) (string, error) {
	b, name := 1.0, strings.TrimSuffix(filepath.Base(npy), ".npy")
	if beta != "" {
		var err error
		if b, err = strconv.ParseFloat(beta, 64); err != nil {
			return "", err
		}
		name += "-beta" + beta
	}
	out := filepath.Join(h.cfg.TmpDir, "plain", name+".ttx")
	err := cached(out, func() error {
		a, err := readNPYFile(npy)
		if err != nil {
			return err
		}
		c := vectorCOO(a.F)
		for p := range c.Vals {
			c.Vals[p] *= b
		}
		return WriteTTX(out, c)
	})
	return out, err
}

// ensureDir makes the parent directory of path.
func ensureDir(path string) error { return os.MkdirAll(filepath.Dir(path), 0o755) }
