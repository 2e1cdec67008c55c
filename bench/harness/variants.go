package harness

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The variants experiment runs each kernel written in several natural
// forms (tuple patterns, nested sums, lookups of the tensor being walked,
// a scalar outside the sum, vectors as ARRAY or as a loaded tensor, dense
// or sparse factors, every built-in format and a user's own ELL mapping)
// on the same data, next to one hand-written Go loop per kernel
// (handLoops) and one per layout that makes more work than that loop's
// (layoutLoops). For every form it records storel's time, its optimize
// time, the plan's estimated cost, and its ratio to the kernel's fastest
// form, to the kernel's Go loop and to its layout's, in the same run.

// variantForm is one way of writing a kernel.
type variantForm struct {
	name    string            // shown in the report
	program string            // bench/programs/variants/PROGRAM.sdql
	formats map[string]string // --tensor NAME=FILE:FORMAT; "" loads the file in storel's default format
	// data lists the --data objects the program or its storage declares:
	// NAME, or NAME=KEY to fill NAME with the case's object KEY.
	data    []string
	storage string // a user's mapping in bench/programs/variants (--storage), "" for none
	// why says, for a form whose layout does more work than the fastest
	// form's whatever the plan, what that work is (shown where the form
	// misses a target).
	why string
	// loop is the kernel's layout loop (layoutLoops) over this form's
	// layout, "" where the kernel's loop does the form's work.
	loop string
}

// variantKernel is a kernel's forms; the first one also runs in the
// reference interpreter on small inputs.
type variantKernel struct {
	kernel string
	main   string // the name of the kernel's real matrix or tensor
	order  int
	forms  []variantForm
}

// vf is a form without a user mapping.
func vf(name, program string, formats map[string]string, data ...string) variantForm {
	return variantForm{name: name, program: program, formats: formats, data: data}
}

// fm lists a form's tensors and their formats.
type fm = map[string]string

// ellData are the --data objects of the ELL mappings (ell.sdql pads with
// column 0 and value 0, ell_if.sdql with column -1).
var ellData = []string{"A_dim1", "A_dim2", "A_width", "A_col", "A_val"}

// cooUserData are the --data objects of the user's COO mapping
// (coo_user.sdql: one entry per position, rows in order).
var cooUserData = []string{"A_dim1", "A_dim2", "A_nnz", "A_row", "A_col", "A_val"}

func cooUserForm(name, program string, data ...string) variantForm {
	for _, d := range cooUserData {
		data = append(data, d+"=coo_user."+d)
	}
	return variantForm{name: name, program: program, formats: fm{}, data: data, storage: "coo_user"}
}

func ellForm(name, mapping, why string) variantForm {
	data := []string{"x"}
	for _, d := range ellData {
		data = append(data, d+"="+mapping+"."+d)
	}
	return variantForm{name: name, program: "spmv_tuple", formats: fm{}, data: data, storage: mapping, why: why, loop: mapping}
}

// because is f with why set.
func (f variantForm) because(why string) variantForm {
	f.why = why
	return f
}

// over is f with its layout loop set.
func (f variantForm) over(loop string) variantForm {
	f.loop = loop
	return f
}

// ellPadding is why an ELL form walks more than A's non-zeros.
const ellPadding = "the mapping pads every row to the longest row's width (bcsstk16: 395,604 slots for 290,378 non-zeros, 1.36×), and a slot costs what a CSR non-zero does"

// formWhy is the why of kernel's form named name, "" if none.
func formWhy(kernel, name string) string {
	return formNamed(kernel, name).why
}

// formNamed is kernel's form named name (a zero form if none).
func formNamed(kernel, name string) variantForm {
	for _, k := range variantKernels {
		for _, f := range k.forms {
			if k.kernel == kernel && f.name == name {
				return f
			}
		}
	}
	return variantForm{}
}

// variantKernels lists the forms of each kernel. Factor matrices are
// dense data (rank 8 for SDDMM, 16 for TTM and MTTKRP) stored dense or
// CSR; MMM's and SumMMM's B is sparse (250 columns, --factor-density).
var variantKernels = []variantKernel{
	{"spmv", "A", 2, []variantForm{
		vf("tuple, A csr", "spmv_tuple", fm{"A": "csr"}, "x"),
		vf("tuple, A csc", "spmv_tuple", fm{"A": "csc"}, "x"),
		vf("tuple, A dcsr", "spmv_tuple", fm{"A": "dcsr"}, "x"),
		vf("tuple, A coo", "spmv_tuple", fm{"A": "coo"}, "x"),
		vf("tuple, A hash", "spmv_tuple", fm{"A": "hash"}, "x"),
		vf("tuple, A sell", "spmv_tuple", fm{"A": "sell"}, "x"),
		cooUserForm("tuple, A user COO (--storage coo_user.sdql)", "spmv_tuple", "x"),
		ellForm("tuple, A user ELL (--storage ell.sdql)", "ell", ellPadding),
		ellForm("tuple, A user ELL with if (--storage ell_if.sdql)", "ell_if", ellPadding+"; the if tests every slot"),
		vf("tuple, x --tensor, A csr", "spmv_tuple_xtensor", fm{"A": "csr", "x": ""}),
		vf("nested, A csr", "spmv_nested", fm{"A": "csr"}, "x"),
		vf("lookup A(i)(j), A csr", "spmv_lookup", fm{"A": "csr"}, "x"),
		vf("alpha * sum, A csr", "spmv_scaled", fm{"A": "csr"}, "x", "alpha"),
	}},
	{"batax", "A", 2, []variantForm{
		vf("nested, A csr", "batax_nested", fm{"A": "csr"}, "x", "beta"),
		vf("nested, A csc", "batax_nested", fm{"A": "csc"}, "x", "beta"),
		vf("nested, A dcsr", "batax_nested", fm{"A": "dcsr"}, "x", "beta"),
		vf("nested, A coo", "batax_nested", fm{"A": "coo"}, "x", "beta"),
		cooUserForm("nested, A user COO (--storage coo_user.sdql)", "batax_nested", "x", "beta"),
		vf("nested, x --tensor, A csr", "batax_nested_xtensor", fm{"A": "csr", "x": ""}, "beta"),
		vf("tuple, A csr", "batax_tuple", fm{"A": "csr"}, "x", "beta"),
		vf("tuple, A sell", "batax_tuple", fm{"A": "sell"}, "x", "beta"),
		vf("lookup A(i)(j), A csr", "batax_lookup", fm{"A": "csr"}, "x", "beta"),
		vf("beta * sum, A csr", "batax_scaled", fm{"A": "csr"}, "x", "beta"),
	}},
	{"summmm", "A", 2, []variantForm{
		vf("tuple, A csc, B csr", "summmm_tuple", fm{"A": "csc", "B": "csr"}),
		vf("tuple, A csr, B csr", "summmm_tuple", fm{"A": "csr", "B": "csr"}),
		vf("tuple, A csr, B csc", "summmm_tuple", fm{"A": "csr", "B": "csc"}),
		vf("tuple, A csr, B dense", "summmm_tuple", fm{"A": "csr", "B": "dense"}).because(
			"B dense holds all of its rows × 250 values, 1/density times its non-zeros (bcsstk16: 1.22M values, 9.8 MB, against 38k), and any plan sums them all: " +
				"a Go loop reading one value per 64-byte line of it takes longer than 1.5× the fastest form").over("bdense"),
		vf("tuple, A csr, B hash", "summmm_tuple", fm{"A": "csr", "B": "hash"}),
		vf("lookup B(k), A csr, B csr", "summmm_lookup", fm{"A": "csr", "B": "csr"}),
		vf("nested, A csr, B csr", "summmm_nested", fm{"A": "csr", "B": "csr"}),
	}},
	{"mmm", "A", 2, []variantForm{
		vf("tuple, A csr, B csr", "mmm_tuple", fm{"A": "csr", "B": "csr"}),
		vf("tuple, A csr, B csc", "mmm_tuple", fm{"A": "csr", "B": "csc"}).over("bcsc"),
		vf("tuple, A dcsr, B csr", "mmm_tuple", fm{"A": "dcsr", "B": "csr"}),
		vf("tuple, A csr, B dense", "mmm_tuple", fm{"A": "csr", "B": "dense"}).over("bdense"),
		vf("tuple, A csr, B hash", "mmm_tuple", fm{"A": "csr", "B": "hash"}),
		vf("tuple, A csr, B dcsc", "mmm_tuple", fm{"A": "csr", "B": "dcsc"}).over("bdcsc"),
		vf("tuple, A csr, B coo", "mmm_tuple", fm{"A": "csr", "B": "coo"}).over("bcoo"),
		vf("scaled row {i -> a * B(k)}, A csr, B csr", "mmm_row", fm{"A": "csr", "B": "csr"}),
		vf("nested, A csr, B csr", "mmm_nested", fm{"A": "csr", "B": "csr"}),
	}},
	{"sddmm", "S", 2, []variantForm{
		vf("tuple, S csr, U V dense", "sddmm_tuple", fm{"S": "csr", "U": "dense", "V": "dense"}),
		vf("tuple, S csr, U V csr", "sddmm_tuple", fm{"S": "csr", "U": "csr", "V": "csr"}),
		vf("tuple, S coo, U V dense", "sddmm_tuple", fm{"S": "coo", "U": "dense", "V": "dense"}),
		vf("lookup U(i) V(j)(k), S csr, U V dense", "sddmm_lookup", fm{"S": "csr", "U": "dense", "V": "dense"}),
		vf("nested, S csr, U V dense", "sddmm_nested", fm{"S": "csr", "U": "dense", "V": "dense"}),
	}},
	{"ttv", "T", 3, []variantForm{
		vf("tuple, T csf", "ttv_tuple", fm{"T": "csf"}, "v"),
		vf("tuple, T coo", "ttv_tuple", fm{"T": "coo"}, "v").over("tcoo"),
		vf("tuple, T hash", "ttv_tuple", fm{"T": "hash"}, "v"),
		vf("tuple, v --tensor, T csf", "ttv_tuple_vtensor", fm{"T": "csf", "v": ""}),
		vf("nested, T csf", "ttv_nested", fm{"T": "csf"}, "v"),
		vf("lookup T(i)(j)(k), T csf", "ttv_lookup", fm{"T": "csf"}, "v"),
	}},
	{"ttm", "A", 3, []variantForm{
		vf("tuple, A csf, B csc", "ttm_tuple", fm{"A": "csf", "B": "csc"}),
		vf("tuple, A csf, B csr", "ttm_tuple", fm{"A": "csf", "B": "csr"}),
		vf("tuple, A csf, B dense", "ttm_tuple", fm{"A": "csf", "B": "dense"}),
		vf("tuple, A coo, B dense", "ttm_tuple", fm{"A": "coo", "B": "dense"}).over("acoo"),
		vf("nested, A csf, B dense", "ttm_nested", fm{"A": "csf", "B": "dense"}),
	}},
	{"mttkrp", "B", 3, []variantForm{
		vf("tuple, B csf, C D dense", "mttkrp_tuple", fm{"B": "csf", "C": "dense", "D": "dense"}),
		vf("tuple, B csf, C D csr", "mttkrp_tuple", fm{"B": "csf", "C": "csr", "D": "csr"}),
		vf("tuple, B coo, C D dense", "mttkrp_tuple", fm{"B": "coo", "C": "dense", "D": "dense"}).over("bcoo"),
		vf("tuple, B hash, C D dense", "mttkrp_tuple", fm{"B": "hash", "C": "dense", "D": "dense"}),
		vf("nested, B csf, C D dense", "mttkrp_nested", fm{"B": "csf", "C": "dense", "D": "dense"}),
		vf("C row outside the sum over l, B csf, C D dense", "mttkrp_rowout", fm{"B": "csf", "C": "dense", "D": "dense"}),
	}},
}

// Ranks of the dense factor matrices.
const (
	sddmmRank  = 8
	tensorRank = 16
)

// variantTimeout is the per-form time limit (each run of storel, which
// includes --repeat executions); a form past it is reported as timeout.
const variantTimeout = 20 * time.Second

// variantQuickTimeout is the limit with --quick.
const variantQuickTimeout = 10 * time.Second

// variantDefaultInputs are the real inputs of the full run: the smaller
// matrix with real values and the smaller 3-tensor's shape family.
// variantQuickLimits are the leading blocks --quick takes of them.
var (
	variantDefaultInputs = []string{"bcsstk16", "orghs"}
	variantQuickLimits   = map[string][]int64{"bcsstk16": {1200, 1200}, "orghs": {4000, 0, 0}}
)

// variantLoopSystem names the hand-written Go loop in the results.
const variantLoopSystem = "Go loop"

// layoutLoopSystem names kernel's layout loop key in the results.
func layoutLoopSystem(kernel, key string) string {
	return variantLoopSystem + " (" + layoutLoops[kernel][key].name + ")"
}

// isLoopSystem says whether a variants system is a Go loop, the kernel's
// or a layout's.
func isLoopSystem(system string) bool {
	return system == variantLoopSystem || strings.HasPrefix(system, variantLoopSystem+" (")
}

// variantCase is one kernel's input files for every form.
type variantCase struct {
	files map[string]string  // tensor -> file (vectors: their .tns)
	dims  map[string][]int64 // --dims of tensors whose file does not state them
	data  map[string]string  // --data objects: .npy files and scalar literals
	nnz   int64
}

// variantInputs lists the real inputs the experiment runs on: those named
// by --inputs, else variantDefaultInputs.
func (h *Harness) variantInputs() []*dataset {
	names := variantDefaultInputs
	if len(h.cfg.Inputs) > 0 {
		names = h.cfg.Inputs
	}
	var ds []*dataset
	for i := range realData {
		for _, n := range names {
			if realData[i].Name == n {
				ds = append(ds, &realData[i])
			}
		}
	}
	return ds
}

// variantInput builds the case of kernel k on d: the main tensor (a
// leading block with --quick), its generated factors, vectors, scalars
// and ELL arrays.
func (h *Harness) variantInput(k *variantKernel, d *dataset) (*variantCase, string, error) {
	var limits []int64
	if h.cfg.Quick {
		if limits = variantQuickLimits[d.Name]; limits == nil {
			limits = d.QuickLimits
		}
	}
	path, dims, nnz, err := h.blockFile(d, limits)
	if err != nil {
		return nil, "", err
	}
	label := d.Name
	if limits != nil {
		label += " " + dimsLabel(dims)
	}
	c := &variantCase{files: map[string]string{k.main: path}, dims: map[string][]int64{}, data: map[string]string{}, nnz: nnz}
	if !strings.Contains(path, ".mtx") {
		c.dims[k.main] = dims
	}
	vector := func(name string, n int64, seed uint64) error {
		npy, err := h.genVector(n, seed)
		if err != nil {
			return err
		}
		tns := strings.TrimSuffix(npy, ".npy") + ".tns"
		err = cached(tns, func() error {
			a, err := readNPYFile(npy)
			if err != nil {
				return err
			}
			return WriteTNS(tns, vectorCOO(a.F))
		})
		c.data[name], c.files[name] = npy, tns
		return err
	}
	matrix := func(name string, rows, cols int64, density float64, seed uint64) error {
		p, err := h.genMatrix(rows, cols, density, seed)
		c.files[name] = p
		return err
	}
	switch k.kernel {
	case "spmv", "batax":
		c.data["beta"], c.data["alpha"] = bataxBeta, "1"
		if err = vector("x", dims[1], 12); err == nil {
			err = h.ellArrays(c, path, dims)
		}
		if err == nil {
			err = h.cooUserArrays(c, path, dims)
		}
	case "mmm", "summmm":
		err = matrix("B", dims[1], 250, h.cfg.FactorDensity, 11)
	case "sddmm":
		if err = matrix("U", dims[0], sddmmRank, 1, 51); err == nil {
			err = matrix("V", dims[1], sddmmRank, 1, 52)
		}
	case "ttv":
		err = vector("v", dims[2], 53)
	case "ttm":
		err = matrix("B", tensorRank, dims[2], 1, 54)
	case "mttkrp":
		if err = matrix("C", dims[1], tensorRank, 1, 55); err == nil {
			err = matrix("D", tensorRank, dims[2], 1, 56)
		}
	}
	return c, label, err
}

// ellArrays writes (once) the ELLPACK arrays of the matrix at path for
// ell.sdql (padding: column 0, value 0) and ell_if.sdql (column -1) and
// adds them to c's data as "ell.A_col", "ell_if.A_col", ....
func (h *Harness) ellArrays(c *variantCase, path string, dims []int64) error {
	base := filepath.Join(h.cfg.TmpDir, "ell", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	width := base + ".width"
	err := cached(width, func() error {
		m, err := readTensor(path, dims)
		if err != nil {
			return err
		}
		a := csrOf(m)
		w := 0
		for i := int64(0); i < a.rows; i++ {
			w = max(w, a.pos[i+1]-a.pos[i])
		}
		for _, mapping := range []string{"ell", "ell_if"} {
			pad := int64(0)
			if mapping == "ell_if" {
				pad = -1
			}
			col := make([]int64, int(a.rows)*w)
			val := make([]float64, int(a.rows)*w)
			for i := int64(0); i < a.rows; i++ {
				for s := 0; s < w; s++ {
					p, q := a.pos[i]+s, int(i)*w+s
					if p < a.pos[i+1] {
						col[q], val[q] = int64(a.idx[p]), a.val[p]
					} else {
						col[q] = pad
					}
				}
			}
			if err := writeNPY(base+"-"+mapping+"-col.npy", col, nil); err != nil {
				return err
			}
			if err := WriteVectorNPY(base+"-"+mapping+"-val.npy", val); err != nil {
				return err
			}
		}
		return writeText(width, func(b *bufio.Writer) { fmt.Fprintln(b, w) })
	})
	if err != nil {
		return err
	}
	wb, err := os.ReadFile(width)
	if err != nil {
		return err
	}
	for _, mapping := range []string{"ell", "ell_if"} {
		c.data[mapping+".A_dim1"] = strconv.FormatInt(dims[0], 10)
		c.data[mapping+".A_dim2"] = strconv.FormatInt(dims[1], 10)
		c.data[mapping+".A_width"] = strings.TrimSpace(string(wb))
		c.data[mapping+".A_col"] = base + "-" + mapping + "-col.npy"
		c.data[mapping+".A_val"] = base + "-" + mapping + "-val.npy"
	}
	return nil
}

// cooUserArrays writes (once) the arrays of the matrix at path for
// coo_user.sdql, entries in row order, and adds them to c's data as
// "coo_user.A_row", ....
func (h *Harness) cooUserArrays(c *variantCase, path string, dims []int64) error {
	base := filepath.Join(h.cfg.TmpDir, "coo_user", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	nnz := base + ".nnz"
	err := cached(nnz, func() error {
		m, err := readTensor(path, dims)
		if err != nil {
			return err
		}
		a := csrOf(m)
		n := a.pos[a.rows]
		row, col := make([]int64, n), make([]int64, n)
		for i := int64(0); i < a.rows; i++ {
			for p := a.pos[i]; p < a.pos[i+1]; p++ {
				row[p], col[p] = i, int64(a.idx[p])
			}
		}
		if err := writeNPY(base+"-row.npy", row, nil); err != nil {
			return err
		}
		if err := writeNPY(base+"-col.npy", col, nil); err != nil {
			return err
		}
		if err := WriteVectorNPY(base+"-val.npy", a.val[:n]); err != nil {
			return err
		}
		return writeText(nnz, func(b *bufio.Writer) { fmt.Fprintln(b, n) })
	})
	if err != nil {
		return err
	}
	nb, err := os.ReadFile(nnz)
	if err != nil {
		return err
	}
	c.data["coo_user.A_dim1"] = strconv.FormatInt(dims[0], 10)
	c.data["coo_user.A_dim2"] = strconv.FormatInt(dims[1], 10)
	c.data["coo_user.A_nnz"] = strings.TrimSpace(string(nb))
	c.data["coo_user.A_row"] = base + "-row.npy"
	c.data["coo_user.A_col"] = base + "-col.npy"
	c.data["coo_user.A_val"] = base + "-val.npy"
	return nil
}

// variantArgs builds `storel CMD` for a form (run adds the timing flags).
func (h *Harness) variantArgs(cmd string, form *variantForm, c *variantCase, output string) []string {
	args := []string{h.cfg.Storel, cmd, h.variantProgram(form.program)}
	args = append(args, variantInputArgs(form, c)...)
	if form.storage != "" {
		args = append(args, "--storage", h.variantProgram(form.storage))
	}
	if cmd == "run" {
		args = append(args, "--timings", "--repeat", strconv.Itoa(h.cfg.Repeat), "--threads", "1", "--plan", "optimized", "--output", output)
	}
	return args
}

// variantInputArgs are a form's --tensor, --dims and --data flags.
func variantInputArgs(form *variantForm, c *variantCase) []string {
	var args []string
	for _, n := range slices.Sorted(maps.Keys(form.formats)) {
		spec := n + "=" + c.files[n]
		if form.formats[n] != "" {
			spec += ":" + form.formats[n]
		}
		args = append(args, "--tensor", spec)
		if d, ok := c.dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	for _, d := range form.data {
		name, key, ok := strings.Cut(d, "=")
		if !ok {
			key = name
		}
		args = append(args, "--data", name+"="+c.data[key])
	}
	return args
}

// variantsDir holds the forms' programs and the users' mappings, relative
// to the repository root.
const variantsDir = "bench/programs/variants/"

func (h *Harness) variantProgram(name string) string {
	return filepath.Join(h.cfg.Repo, variantsDir, name+".sdql")
}

// handLoopArgs runs the kernel's Go loop, or its layout loop key, on
// every input of c.
func (h *Harness) handLoopArgs(kernel, key string, c *variantCase, output string) []string {
	args := []string{h.cfg.Self, "handloop", "--kernel", kernel}
	if key != "" {
		args = append(args, "--layout", key)
		for _, d := range layoutLoops[kernel][key].data {
			name, k, _ := strings.Cut(d, "=")
			args = append(args, "--data", name+"="+c.data[k])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(c.files)) {
		if _, vec := c.data[n]; vec {
			continue // a vector: passed as its .npy below
		}
		args = append(args, "--tensor", n+"="+c.files[n])
		if d, ok := c.dims[n]; ok {
			args = append(args, "--dims", dimsFlag(n, d))
		}
	}
	for _, n := range []string{"x", "v", "beta"} {
		if v, ok := c.data[n]; ok {
			args = append(args, "--data", n+"="+v)
		}
	}
	return append(args, "--repeat", strconv.Itoa(h.cfg.Repeat), "--output", output)
}

// runVariants runs every selected kernel's forms on each input of the
// kernel's order.
func (h *Harness) runVariants() error {
	limit := variantTimeout
	if h.cfg.Quick {
		limit = variantQuickTimeout
	}
	if h.cfg.Timeout > 0 {
		limit = min(limit, h.cfg.Timeout)
	}
	load := loadAverage()
	for ki := range variantKernels {
		k := &variantKernels[ki]
		if !h.selected(k.kernel, "") {
			continue
		}
		for _, d := range h.variantInputs() {
			if d.order() != k.order {
				continue
			}
			c, label, err := h.variantInput(k, d)
			if h.skipMissing("variants", d, err) {
				continue
			}
			if err != nil {
				return err
			}
			h.runVariantCase(k, c, caseKey{"variants", k.kernel, label, 0}, limit)
		}
	}
	h.note("variants", fmt.Sprintf("each storel form runs with --threads 1 and a limit of %s per run (--repeat executions included); "+
		"the Go loop and every form run %d rounds in turn, each time the median of the rounds (a run past %s or a failed round ends its rounds); "+
		"the machine's load average (1 min) was %s at the start and %s at the end", limit, max(h.cfg.Rounds, 1), roundWallBudget, load, loadAverage()))
	return nil
}

// loadAverage is the machine's one-minute load average ("unknown" where
// /proc/loadavg cannot be read): a shared machine's noise, for the report.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// runVariantCase explains and runs every form of k on c, with the Go loop
// as the reference answer and the oracle on small inputs, then records
// each form's figures: cost, optimizer figures, ratios.
func (h *Harness) runVariantCase(k *variantKernel, c *variantCase, key caseKey, limit time.Duration) {
	loopAns := h.answerPath(key, variantLoopSystem, 1) + ".tns"
	jobs := []job{{system: variantLoopSystem, reference: true, always: true, threads: 1, answer: loopAns,
		exec: Exec{Args: h.handLoopArgs(k.kernel, "", c, loopAns), Timeout: limit}}}
	// The layout loops are checked against the kernel's like the forms.
	layouts := map[string]string{} // system -> what it loops over
	for _, form := range k.forms {
		if form.loop == "" {
			continue
		}
		if sys := layoutLoopSystem(k.kernel, form.loop); layouts[sys] == "" {
			layouts[sys] = layoutLoops[k.kernel][form.loop].what
			ans := h.answerPath(key, sys, 1) + ".tns"
			jobs = append(jobs, job{system: sys, threads: 1, answer: ans, always: true,
				exec: Exec{Args: h.handLoopArgs(k.kernel, form.loop, c, ans), Timeout: limit}})
		}
	}
	if c.nnz <= h.cfg.OracleMaxNNZ {
		ans := h.answerPath(key, "oracle", 1) + ".tns"
		args := append([]string{h.cfg.Self, "oracle", h.variantProgram(k.forms[0].program)}, variantInputArgs(&k.forms[0], c)...)
		jobs = append(jobs, job{system: "oracle", oracle: true, threads: 1, answer: ans,
			exec: Exec{Args: append(args, "--output", ans), Timeout: h.cfg.OracleTimeout}})
	}
	figures, explains := map[string]map[string]float64{}, map[string]string{}
	for i := range k.forms {
		form := &k.forms[i]
		ans := h.answerPath(key, form.name, 1) + ".tns"
		// Every form takes part in every round: forms with the same plan
		// must not be told apart by one noisy first run.
		jobs = append(jobs, job{system: form.name, threads: 1, answer: ans, always: true,
			exec: Exec{Args: h.variantArgs("run", form, c, ans), Timeout: limit}})
		figures[form.name], explains[form.name] = h.explainForm(key, form, c, limit)
	}
	from := len(h.Results)
	h.runJobs(key, jobs)
	ms := h.Results[from:]
	for i := range ms {
		m := &ms[i]
		for _, form := range k.forms {
			if form.name == m.System {
				m.Form = &FormInfo{Program: variantsDir + form.program + ".sdql", Tensors: formatsLabel(form.formats)}
				if form.storage != "" {
					m.Form.Storage = variantsDir + form.storage + ".sdql"
				}
				m.Form.ComparedWith = variantLoopSystem + ": " + handLoops[k.kernel]
				if form.loop != "" {
					m.Form.LayoutLoop = layoutLoopSystem(k.kernel, form.loop)
				}
				m.Form.Explain = explains[form.name]
				m.Figures = figures[form.name]
			}
		}
		if m.System == variantLoopSystem {
			m.Form = &FormInfo{Program: handLoops[k.kernel]}
		}
		if what, ok := layouts[m.System]; ok {
			m.Form = &FormInfo{Program: what}
		}
	}
	setVariantRatios(ms)
	if err := h.SaveJSON(); err != nil {
		h.logf("saving results: %v", err)
	}
}

// formatsLabel writes a form's tensor flags as "A=csr x=(file)".
func formatsLabel(formats map[string]string) string {
	var s []string
	for n, f := range formats {
		if f == "" {
			f = "--tensor default"
		}
		s = append(s, n+"="+f)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// FormInfo says what a variants measurement ran.
type FormInfo struct {
	Program string `json:"program"`
	Tensors string `json:"tensors,omitempty"`
	Storage string `json:"storage,omitempty"`
	// ComparedWith names the kernel's Go loop the form's time is divided
	// by.
	ComparedWith string `json:"compared_with,omitempty"`
	// LayoutLoop is the system of the Go loop over the form's own layout
	// (layoutLoops), "" where the kernel's loop is the layout's.
	LayoutLoop string `json:"layout_loop,omitempty"`
	// Explain is the file, relative to the results directory, holding
	// `storel explain`'s text for the form.
	Explain string `json:"explain,omitempty"`
}

// estimatedCost reads `storel explain`'s "estimated cost: naive N (...),
// chosen M (...)" line ("optimized M" in earlier builds).
var estimatedCost = regexp.MustCompile(`estimated cost:.*?naive\s+([0-9.]+(?:e[+-]?[0-9]+)?).*?(?:optimized|chosen)\s+([0-9.]+(?:e[+-]?[0-9]+)?)`)

// explainForm runs `storel explain` for a form, stages its text with the
// report (published as OutDir/explain/variants/...) and returns its
// figures: the optimizer's and "cost" and "naive_cost", the estimated
// costs of the chosen and the naive plan.
func (h *Harness) explainForm(key caseKey, form *variantForm, c *variantCase, limit time.Duration) (map[string]float64, string) {
	r := Run(Exec{Args: h.variantArgs("explain", form, c, ""), Timeout: limit, MaxRSS: h.cfg.MaxRSS})
	if r.Status != StatusOK {
		h.logf("variants %s %s %s: explain %s %s", key.kernel, key.input, form.name, r.Status, r.Err)
		return nil, ""
	}
	figs := parseVariantExplain(r.Stdout)
	rel := filepath.Join("explain", "variants", explainName(key, form.name))
	if err := writeFile(filepath.Join(h.stageDir(), rel), r.Stdout); err != nil {
		h.logf("variants: %v", err)
		return figs, ""
	}
	return figs, rel
}

// parseVariantExplain returns explain's optimizer figures and the
// estimated costs of the chosen plan ("cost") and the naive one
// ("naive_cost").
func parseVariantExplain(text string) map[string]float64 {
	figs := ParseExplainFigures(text)
	if m := estimatedCost.FindStringSubmatch(text); m != nil {
		figs["naive_cost"], _ = strconv.ParseFloat(m[1], 64)
		figs["cost"], _ = strconv.ParseFloat(m[2], 64)
	}
	return figs
}

// explainName is a file name for a form's explain text: letters, digits,
// '-', '_' and '.' only.
func explainName(key caseKey, form string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, key.kernel+"-"+key.input+"-"+form)
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	return name + ".txt"
}

// Figures of a variants measurement: its execute time over the fastest
// form's of the same case, over the kernel's Go loop's, and over the Go
// loop's of its layout (the kernel's where none of its own).
const (
	figVsFastest    = "vs_fastest_form"
	figVsLoop       = "vs_go_loop"
	figVsLayoutLoop = "vs_layout_loop"
)

// Targets of the variants experiment: every form within 1.5x of the
// kernel's fastest form (the optimizer's) and within 1.25x of the Go
// loop (the engine's).
const (
	targetVsFastest = 1.5
	targetVsLoop    = 1.25
)

// setVariantRatios sets the ratio figures of one case's measurements: a
// layout loop's over the kernel's loop, a form's over the fastest form,
// the kernel's loop and its layout's loop.
func setVariantRatios(ms []Measurement) {
	fastest := math.Inf(1)
	loops := map[string]float64{} // checked loop times by system
	for i := range ms {
		v, ok := execOK(&ms[i])
		switch {
		case !ok:
		case isLoopSystem(ms[i].System):
			loops[ms[i].System] = v
		default:
			fastest = min(fastest, v)
		}
	}
	ratio := func(m *Measurement, fig string, v float64, loop string) {
		if d, ok := loops[loop]; ok && d > 0 {
			if m.Figures == nil {
				m.Figures = map[string]float64{}
			}
			m.Figures[fig] = v / d
		}
	}
	for i := range ms {
		m := &ms[i]
		v, ok := execOK(m)
		if !ok || m.System == variantLoopSystem {
			continue
		}
		ratio(m, figVsLoop, v, variantLoopSystem)
		if isLoopSystem(m.System) {
			continue
		}
		if m.Figures == nil {
			m.Figures = map[string]float64{}
		}
		m.Figures[figVsFastest] = v / fastest
		own := variantLoopSystem
		if m.Form != nil && m.Form.LayoutLoop != "" {
			own = m.Form.LayoutLoop
		}
		ratio(m, figVsLayoutLoop, v, own)
	}
}
