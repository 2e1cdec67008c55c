package harness

import (
	"fmt"
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

// storelFormats are the paper's Table 3 best formats for storel. MTTKRP's D
// is the program's (j,l) matrix stored row-major, which is the CSC of the
// formula's D(l,j).
var storelFormats = map[string]map[string]string{
	"mmm":    {"A": "csr", "B": "csr"},
	"summmm": {"A": "csc", "B": "csr"},
	"batax":  {"A": "csr"},
	"spmv":   {"A": "csr"},
	"ttm":    {"A": "csf", "B": "csc"},
	"mttkrp": {"B": "csf", "C": "csr", "D": "csr"},
}

// denseFormats store every matrix dense (the sweep's "storel dense").
var denseFormats = map[string]map[string]string{
	"mmm":    {"A": "dense", "B": "dense"},
	"summmm": {"A": "dense", "B": "dense"},
	"batax":  {"A": "dense"},
}

// matrixKernels run on every real matrix; SpMV is not among the paper's
// kernels but is the plainest sparse kernel to compare libraries on.
var matrixKernels = []string{"mmm", "summmm", "batax", "spmv"}
var tensorKernels = []string{"ttm", "mttkrp"}

func (h *Harness) program(kernel string) string {
	return filepath.Join(h.cfg.Repo, "examples", kernel+".sdql")
}

func (h *Harness) benchProgram(name string) string {
	return filepath.Join(h.cfg.Repo, "bench", "programs", name+".sdql")
}

func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// answerPath names where a system writes its answer for a case.
func (h *Harness) answerPath(k caseKey, system string, threads int) string {
	return filepath.Join(h.cfg.TmpDir, "answers", safe(fmt.Sprintf("%s-%s-%s-%g-%s-t%d", k.experiment, k.kernel, k.input, k.x, system, threads)))
}

// storelJob runs storel with the given formats and plan.
func (h *Harness) storelJob(k caseKey, system string, r StorelRun, in *Inputs, reference bool) job {
	ans := h.answerPath(k, system, r.Threads) + ".tns"
	return job{system: system, reference: reference, threads: r.Threads, answer: ans,
		exec: Exec{Args: h.storelArgs("run", r, in, ans), Timeout: h.cfg.Timeout}}
}

// oracleJob runs the reference interpreter on the naive plan when the input
// is small enough; ok is false otherwise.
func (h *Harness) oracleJob(k caseKey, program string, formats map[string]string, in *Inputs) (job, bool) {
	if in.NNZ > h.cfg.OracleMaxNNZ {
		return job{}, false
	}
	ans := h.answerPath(k, "oracle", 1) + ".tns"
	return job{system: "oracle", oracle: true, threads: 1, answer: ans,
		exec: Exec{Args: h.oracleArgs(program, formats, in, ans), Timeout: h.cfg.OracleTimeout}}, true
}

// peerJobs are the other systems of a matrix or tensor kernel.
func (h *Harness) peerJobs(k caseKey, in *Inputs, systems []string) []job {
	var jobs []job
	for _, s := range systems {
		prefix := h.answerPath(k, s, 1)
		switch s {
		case "scipy", "numpy", "torch":
			j := job{system: s, threads: 1, answer: prefix, npy: true,
				exec: Exec{Args: h.pyArgs(s, k.kernel, in, 1, prefix), Timeout: h.cfg.Timeout}}
			if why := h.pythonMissing(s); why != "" {
				j.skip = why
			}
			jobs = append(jobs, j)
		case "duckdb":
			j := job{system: s, threads: 1, answer: prefix, npy: true}
			if h.cfg.DuckDB == "" {
				j.skip = "duckdb-peer not built (run bench/install-peers.sh)"
			} else {
				j.exec = Exec{Args: h.duckArgs(k.kernel, in, 1, prefix), Timeout: h.cfg.Timeout}
			}
			jobs = append(jobs, j)
		case "taco", "taco dense":
			if h.cfg.Taco == "" {
				continue
			}
			j := job{system: s, threads: 1, answer: prefix + ".tns", tacoTimes: true, tolerance: tacoTolerance}
			args, err := h.tacoArgs(k.kernel, in, j.answer, s == "taco dense")
			scratch := filepath.Join(h.cfg.TmpDir, "taco")
			if err == nil {
				err = os.MkdirAll(scratch, 0o755)
			}
			if err != nil {
				j.skip = err.Error()
			} else {
				// TACO compiles its kernels in $TMPDIR/taco_tmp_*; a run killed
				// at the time limit leaves its directory among the results' tmp.
				j.exec = Exec{Args: args, Timeout: h.cfg.Timeout, Env: []string{"TMPDIR=" + scratch + "/"}}
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// runE2E is §6.1: every kernel on every real input of its order.
func (h *Harness) runE2E() error {
	for _, kernel := range append(append([]string(nil), matrixKernels...), tensorKernels...) {
		order := 2
		peers := []string{"scipy", "numpy", "torch", "duckdb", "taco"}
		if kernel == "ttm" || kernel == "mttkrp" {
			order, peers = 3, []string{"duckdb", "taco"}
		}
		for i := range realData {
			d := &realData[i]
			if d.order() != order || (h.cfg.Quick && d.QuickLimits == nil) || !h.selected(kernel, d.Name) {
				continue
			}
			path, dims, nnz, err := h.datasetFile(d)
			if h.skipMissing("e2e", d, err) {
				continue
			}
			if err != nil {
				return err
			}
			in, err := h.kernelInputs(kernel, d.Name, path, dims, nnz)
			if err != nil {
				return err
			}
			k := caseKey{"e2e", kernel, d.Name, 0}
			jobs := []job{h.storelJob(k, "storel", StorelRun{h.program(kernel), storelFormats[kernel], "optimized", 1}, in, true)}
			if o, ok := h.oracleJob(k, h.program(kernel), storelFormats[kernel], in); ok {
				jobs = append(jobs, o)
			}
			if kernel == "ttm" {
				jobs = append(jobs, h.storelJob(k, "storel (CSF, CSR)", StorelRun{h.program(kernel), map[string]string{"A": "csf", "B": "csr"}, "optimized", 1}, in, false))
			}
			if kernel == "spmv" || kernel == "batax" {
				pattern, err := mtxIsPattern(filepath.Join(h.cfg.DataDir, d.File))
				if err != nil {
					return err
				}
				if pattern {
					jobs = append(jobs, h.storelJob(k, storelPatternSystem, StorelRun{h.program(kernel), map[string]string{"A": "csr+pattern"}, "optimized", 1}, in, false))
				}
				if kernel == "spmv" {
					format := "sell"
					if pattern {
						format = "sell+pattern"
					}
					jobs = append(jobs, h.storelJob(k, storelSellSystem, StorelRun{h.program(kernel), map[string]string{"A": format}, "optimized", 1}, in, false))
				}
			}
			jobs = append(jobs, h.peerJobs(k, in, peers)...)
			h.runJobs(k, jobs)
		}
	}
	return nil
}

// storelPatternSystem is SpMV's and BATAX's second storel line on
// pattern matrices (Matrix Market field "pattern": every entry is 1): CSR
// without a value array.
const storelPatternSystem = "storel (csr+pattern)"

// storelSellSystem is SpMV's storel line over sell (sliced ELLPACK, 32-bit
// columns, eight rows at a time), without values on pattern matrices.
const storelSellSystem = "storel (sell)"

// sweepSeries is one line group of Fig. 8: a kernel on random n x n
// matrices over densities.
type sweepSeries struct {
	kernel    string
	n         int64
	densities []float64
}

// sweepDensities are the paper's densities (§6.2 sweeps 1e-4 ... 1).
var sweepDensities = []float64{1e-4, 1e-3, 1e-2, 1e-1, 0.3, 1}

// paperSweepN is Table 3's size for SumMMM and BATAX in §6.2 (MMM's is 10^3).
const paperSweepN = 100000

// maxSweepNNZ bounds the non-zeros of one generated sweep matrix in the
// full run: 10^5 x 10^5 at density 1e-3 (10^7) fits this machine's budget,
// 1e-2 (10^8) does not (see sweepSkipReason).
const maxSweepNNZ = 20_000_000

// sweepPlan lists the §6.2 series. The full run has MMM at the paper's
// 10^3 x 10^3 over every density; SumMMM and BATAX at the paper's
// 10^5 x 10^5 on the densities whose inputs fit (the others are noted in
// the report with the reason), and on 2000 x 2000 over every density.
func (h *Harness) sweepPlan() []sweepSeries {
	if h.cfg.Quick {
		q := []float64{1e-2, 1e-1, 1}
		return []sweepSeries{{"mmm", 100, q}, {"summmm", 200, q}, {"batax", 200, q}}
	}
	var paper []float64
	for _, d := range sweepDensities {
		if d*paperSweepN*paperSweepN <= maxSweepNNZ {
			paper = append(paper, d)
		}
	}
	return []sweepSeries{
		{"mmm", 1000, sweepDensities},
		{"summmm", paperSweepN, paper}, {"summmm", 2000, sweepDensities},
		{"batax", paperSweepN, paper}, {"batax", 2000, sweepDensities},
	}
}

// sweepSkipped says which of the paper's sweep points the plan leaves out
// and why, for the report.
func (h *Harness) sweepSkipped() []string {
	if h.cfg.Quick {
		return []string{"--quick sweeps small matrices only (MMM 100×100, SumMMM and BATAX 200×200, densities 0.01, 0.1, 1); " +
			"the paper's sizes (MMM 10³×10³, SumMMM and BATAX 10⁵×10⁵) are in the full run"}
	}
	var notes []string
	for _, kernel := range []string{"summmm", "batax"} {
		if !h.selected(kernel, "") {
			continue
		}
		var skipped []float64
		for _, d := range sweepDensities {
			if d*paperSweepN*paperSweepN > maxSweepNNZ {
				skipped = append(skipped, d)
			}
		}
		if len(skipped) > 0 {
			notes = append(notes, sweepSkipReason(kernel, paperSweepN, skipped))
		}
	}
	return notes
}

// sweepSkipReason explains, with the sizes involved, why a kernel's n x n
// series stops before the given densities.
func sweepSkipReason(kernel string, n int64, densities []float64) string {
	var ds []string
	for _, d := range densities {
		ds = append(ds, fmt.Sprintf("%g", d))
	}
	d := densities[0]
	nnz := d * float64(n) * float64(n)
	files := "one"
	if kernel != "batax" {
		files = "two"
	}
	work := func(d float64) float64 { return float64(n) * math.Pow(d*float64(n), 2) }
	// A generated .mtx line ("i j v") takes about 22 bytes at these sizes.
	return fmt.Sprintf("%s %dx%d at density %s: from %g on a matrix has %.0e non-zeros (%.1f GB of .mtx text; the kernel reads %s), "+
		"ten times the 1e-3 case, whose inputs already take each system seconds to read and hundreds of MB to hold; "+
		"TACO's unfactorized loops would do n·(n·d)² ≈ %.0e multiply-adds per run (%.0e at 1e-3), and dense storage needs %.0f GB per matrix at any density. "+
		"That is past this machine's budget for the sweep (2 cores, 24 GiB shared by all runs, ~20 minutes in all). "+
		"The 2000x2000 series covers every density",
		strings.ToUpper(kernel), n, n, strings.Join(ds, ", "), d, nnz, nnz*22/1e9, files,
		work(d), work(1e-3), float64(n)*float64(n)*8/1e9)
}

// runSweep is §6.2: sparse and dense storage over densities.
func (h *Harness) runSweep() error {
	for _, note := range h.sweepSkipped() {
		h.note("sweep", note)
	}
	for _, s := range h.sweepPlan() {
		kernel, n := s.kernel, s.n
		if !h.selected(kernel, "") {
			continue
		}
		// Dense storage does the same work at every density: a dense run
		// that timed out is not tried again at the series' other densities.
		denseTimedOut := map[string]float64{}
		for _, d := range s.densities {
			label := fmt.Sprintf("%dx%d", n, n)
			a, err := h.genMatrix(n, n, d, 21)
			if err != nil {
				return err
			}
			nnz := int64(math.Round(d * float64(n) * float64(n)))
			in := &Inputs{Label: label, Tensors: map[string]string{"A": a}, Dims: map[string][]int64{}, Shapes: map[string][]int64{"A": {n, n}}, NNZ: nnz}
			if kernel == "batax" {
				in.Beta = bataxBeta
				if in.X, err = h.genVector(n, 22); err != nil {
					return err
				}
			} else {
				b, err := h.genMatrix(n, n, d, 23)
				if err != nil {
					return err
				}
				in.Tensors["B"], in.Shapes["B"] = b, []int64{n, n}
			}
			k := caseKey{"sweep", kernel, label, d}
			dense := h.storelJob(k, "storel dense", StorelRun{h.program(kernel), denseFormats[kernel], "optimized", 1}, in, false)
			if why := h.denseTooBig(in); why != "" {
				dense.skip = why
			}
			jobs := []job{
				h.storelJob(k, "storel sparse", StorelRun{h.program(kernel), storelFormats[kernel], "optimized", 1}, in, true),
				dense,
			}
			if o, ok := h.oracleJob(k, h.program(kernel), storelFormats[kernel], in); ok {
				jobs = append(jobs, o)
			}
			for _, j := range h.peerJobs(k, in, []string{"scipy", "numpy", "taco", "taco dense"}) {
				if j.system == "numpy" || j.system == "taco dense" {
					if why := h.denseTooBig(in); why != "" && j.skip == "" {
						j.skip = why
					}
				}
				jobs = append(jobs, j)
			}
			for i := range jobs {
				if at, ok := denseTimedOut[jobs[i].system]; ok && jobs[i].skip == "" {
					jobs[i].skip = fmt.Sprintf("timed out at density %g; dense storage does the same work at every density", at)
				}
			}
			for _, m := range h.runJobs(k, capTimeouts(jobs, h.sweepLimit())) {
				if denseSystems[m.System] && m.Status == StatusTimeout {
					denseTimedOut[m.System] = d
				}
			}
		}
	}
	return nil
}

// sweepLimit is the time limit of a sweep run.
func (h *Harness) sweepLimit() time.Duration {
	if h.cfg.SweepTimeout > 0 && h.cfg.SweepTimeout < h.cfg.Timeout {
		return h.cfg.SweepTimeout
	}
	return h.cfg.Timeout
}

// denseSystems are the sweep's systems that store every matrix dense.
var denseSystems = map[string]bool{"storel dense": true, "numpy": true, "taco dense": true}

// capTimeouts lowers the jobs' time limits to limit (0: no cap).
func capTimeouts(jobs []job, limit time.Duration) []job {
	if limit <= 0 {
		return jobs
	}
	for i := range jobs {
		if jobs[i].exec.Timeout > limit {
			jobs[i].exec.Timeout = limit
		}
	}
	return jobs
}

// denseTooBig says why in's matrices cannot be stored dense within one
// run's memory limit ("" when they can): a 10^5 x 10^5 matrix takes 80 GB.
func (h *Harness) denseTooBig(in *Inputs) string {
	if h.cfg.MaxRSS <= 0 {
		return ""
	}
	bytes := 0.0
	for _, shape := range in.Shapes {
		b := 8.0
		for _, d := range shape {
			b *= float64(d)
		}
		bytes += b
	}
	if bytes <= float64(h.cfg.MaxRSS) {
		return ""
	}
	return fmt.Sprintf("dense storage of the inputs needs %.0f GB, more than the %.1f GB a run may use", bytes/1e9, float64(h.cfg.MaxRSS)/1e9)
}

// ablationVariants are §6.3's BATAX versions: the rewrites applied by hand
// (bench/programs), run with the naive plan so that no optimizer adds its
// own rewrites, plus the optimizer's own plan.
var ablationVariants = []struct {
	system, program, format, plan string
}{
	{"naive (trie)", "", "trie", "naive"},
	{"factorization 1 (trie)", "batax_f1", "trie", "naive"},
	{"factorizations 1+2 (trie)", "batax_f2", "trie", "naive"},
	{"1+2, CSR not fused", "batax_f2", "csr", "naive"},
	{"1+2, CSR fused", "batax_f2_fused", "csr", "naive"},
	{"optimizer (CSR)", "", "csr", "optimized"},
}

func (h *Harness) ablationSetup() (int64, []float64) {
	if h.cfg.Quick {
		return 300, []float64{1e-3, 1e-2, 1e-1, 0.5}
	}
	return 1000, []float64{1e-4, 1e-3, 1e-2, 1e-1, 0.3, 1}
}

// runAblation is §6.3 (Fig. 9): BATAX on a 1000 x 1000 matrix.
func (h *Harness) runAblation() error {
	if !h.selected("batax", "") {
		return nil
	}
	n, densities := h.ablationSetup()
	for _, d := range densities {
		a, err := h.genMatrix(n, n, d, 31)
		if err != nil {
			return err
		}
		x, err := h.genVector(n, 32)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%dx%d", n, n)
		in := &Inputs{Label: label, Tensors: map[string]string{"A": a}, Dims: map[string][]int64{}, Shapes: map[string][]int64{"A": {n, n}},
			X: x, Beta: bataxBeta, NNZ: int64(math.Round(d * float64(n) * float64(n)))}
		k := caseKey{"ablation", "batax", label, d}
		// The optimizer's plan is the reference; it runs first.
		jobs := []job{h.storelJob(k, "optimizer (CSR)", StorelRun{h.program("batax"), map[string]string{"A": "csr"}, "optimized", 1}, in, true)}
		if o, ok := h.oracleJob(k, h.program("batax"), map[string]string{"A": "csr"}, in); ok {
			jobs = append(jobs, o)
		}
		for _, v := range ablationVariants {
			if v.plan == "optimized" {
				continue
			}
			prog := h.program("batax")
			if v.program != "" {
				prog = h.benchProgram(v.program)
			}
			jobs = append(jobs, h.storelJob(k, v.system, StorelRun{prog, map[string]string{"A": v.format}, v.plan, 1}, in, false))
		}
		h.runJobs(k, jobs)
	}
	return nil
}

// runOptimizer is §6.4 (Table 4): the optimizer's figures per kernel, from
// `storel explain` and from the optimize phase of `storel run`.
func (h *Harness) runOptimizer() error {
	for _, kernel := range append(append([]string(nil), matrixKernels...), tensorKernels...) {
		if !h.selected(kernel, "") {
			continue
		}
		in, d, err := h.smallestInput(kernel)
		if h.skipMissing("optimizer", d, err) {
			continue
		}
		if err != nil {
			return err
		}
		k := caseKey{"optimizer", kernel, in.Label, 0}
		m := Measurement{Experiment: "optimizer", Kernel: kernel, Input: in.Label, System: "storel explain", Threads: 1, StorelBuild: h.cfg.StorelBuild}
		r := Run(Exec{Args: h.storelArgs("explain", StorelRun{h.program(kernel), storelFormats[kernel], "optimized", 1}, in, ""), Timeout: h.cfg.Timeout})
		m.Wall = float64(r.Wall.Microseconds()) / 1000
		m.Status = r.Status
		if r.Status == StatusOK {
			m.Figures = ParseExplainFigures(r.Stdout)
			if err := writeFile(filepath.Join(h.stageDir(), "explain", kernel+".txt"), r.Stdout); err != nil {
				return err
			}
			var missing []string
			for _, f := range []string{"iterations", "nodes", "classes", "time_ms"} {
				if _, ok := m.Figures[f]; !ok {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				m.Note = "explain does not report: " + strings.Join(missing, ", ")
			}
		} else {
			m.Note = r.Err
			h.Failures = append(h.Failures, fmt.Sprintf("optimizer %s: storel explain: %s", kernel, r.Err))
		}
		h.Results = append(h.Results, m)
		h.logf("optimizer %s: explain %s figures %v %s", kernel, m.Status, m.Figures, m.Note)
		// The optimize phase of a real run, checked like any other run.
		h.runJobs(k, []job{h.storelJob(k, "storel run", StorelRun{h.program(kernel), storelFormats[kernel], "optimized", 1}, in, true)})
	}
	return nil
}

// smallestInput is the smallest real input of the kernel's order.
func (h *Harness) smallestInput(kernel string) (*Inputs, *dataset, error) {
	order := 2
	if kernel == "ttm" || kernel == "mttkrp" {
		order = 3
	}
	var best *dataset
	for i := range realData {
		d := &realData[i]
		if d.order() == order && (best == nil || d.NNZ < best.NNZ) {
			best = d
		}
	}
	path, dims, nnz, err := h.datasetFile(best)
	if err != nil {
		return nil, best, err
	}
	in, err := h.kernelInputs(kernel, best.Name, path, dims, nnz)
	return in, best, err
}

func (h *Harness) overheadSizes() []int64 {
	if h.cfg.Quick {
		return []int64{100, 1000, 10000}
	}
	return []int64{100, 1000, 10000, 100000, 1000000}
}

// overheadLogical is the system name of §6.5's first line: storage-
// independent optimizations only (`storel run --plan logical`).
const overheadLogical = "storage-independent optimization"

// planFlag matches the --plan line of `storel help`: "--plan naive|optimized".
var planFlag = regexp.MustCompile(`--plan\s+([a-z]+(?:\|[a-z]+)*)`)

// storelPlans lists the plans `storel help` offers for --plan.
func storelPlans(help string) []string {
	m := planFlag.FindStringSubmatch(help)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], "|")
}

// hasLogicalPlan says whether this storel runs `--plan logical` (the
// program optimized without its storage mappings, then composed naively).
func (h *Harness) hasLogicalPlan() bool {
	if h.logicalPlan == nil {
		r := Run(Exec{Args: []string{h.cfg.Storel, "help"}, Timeout: time.Minute})
		ok := slices.Contains(storelPlans(r.Stdout+"\n"+r.Stderr), "logical")
		h.logicalPlan = &ok
	}
	return *h.logicalPlan
}

// runOverhead is §6.5 (Fig. 10): BATAX on a 100 x N matrix, total time
// including optimization: the naive plan, storage-independent
// optimizations only (when storel offers --plan logical), and the full
// storage-aware optimization.
func (h *Harness) runOverhead() error {
	if !h.selected("batax", "") {
		return nil
	}
	logical := h.hasLogicalPlan()
	if !logical {
		h.note("overhead", "this storel has no `--plan logical` (see `storel help`), so the paper's line of storage-independent optimizations only is missing; "+
			"the harness runs it as soon as `storel help` lists the plan")
	}
	for _, n := range h.overheadSizes() {
		a, err := h.genMatrix(100, n, h.cfg.FactorDensity, 41)
		if err != nil {
			return err
		}
		x, err := h.genVector(n, 42)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("100x%d", n)
		in := &Inputs{Label: label, Tensors: map[string]string{"A": a}, Dims: map[string][]int64{}, Shapes: map[string][]int64{"A": {100, n}},
			X: x, Beta: bataxBeta, NNZ: int64(math.Round(h.cfg.FactorDensity * 100 * float64(n)))}
		k := caseKey{"overhead", "batax", label, float64(n)}
		f := map[string]string{"A": "csr"}
		jobs := []job{h.storelJob(k, "optimized plan", StorelRun{h.program("batax"), f, "optimized", 1}, in, true)}
		if logical {
			jobs = append(jobs, h.storelJob(k, overheadLogical, StorelRun{h.program("batax"), f, "logical", 1}, in, false))
		}
		jobs = append(jobs, h.storelJob(k, "naive plan", StorelRun{h.program("batax"), f, "naive", 1}, in, false))
		h.runJobs(k, capTimeouts(jobs, overheadTimeout))
	}
	return nil
}

// overheadTimeout is the paper's time-out of §6.5 (five minutes).
const overheadTimeout = 5 * time.Minute

// runThreads: storel's scaling over thread counts on the two largest matrices.
func (h *Harness) runThreads() error {
	type cand struct {
		d   *dataset
		nnz int64
	}
	var cs []cand
	for i := range realData {
		d := &realData[i]
		if d.order() != 2 || (h.cfg.Quick && d.QuickLimits == nil) {
			continue
		}
		_, _, nnz, err := h.datasetFile(d)
		if h.skipMissing("threads", d, err) {
			continue
		}
		if err != nil {
			return err
		}
		cs = append(cs, cand{d, nnz})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].nnz > cs[j].nnz })
	if len(cs) > 2 {
		cs = cs[:2]
	}
	for _, c := range cs {
		for _, kernel := range []string{"spmv", "batax", "mmm"} {
			if err := h.threadsCase(kernel, c.d); err != nil {
				return err
			}
		}
	}
	// The largest 3-tensor: MTTKRP as e2e runs it, and with dense factors
	// as cpd does (rank 16).
	var big *dataset
	var bigNNZ int64
	for i := range realData {
		d := &realData[i]
		if d.order() != 3 || (h.cfg.Quick && d.QuickLimits == nil) {
			continue
		}
		if _, _, nnz, err := h.datasetFile(d); err == nil && nnz > bigNNZ {
			big, bigNNZ = d, nnz
		}
	}
	if big != nil {
		for _, kernel := range []string{"mttkrp", cpdKernel} {
			if err := h.threadsCase(kernel, big); err != nil {
				return err
			}
		}
	}
	return nil
}

// threadsCase runs storel at each thread count on d, and PyTorch at each
// count where pypeer has the kernel (SpMV, BATAX, MTTKRP with dense
// factors): the peer a multi-core user would weigh it against.
func (h *Harness) threadsCase(kernel string, d *dataset) error {
	// The cpd case is MTTKRP's program with dense factors.
	program, formats, selectedAs := h.program(kernel), storelFormats[kernel], kernel
	if kernel == cpdKernel {
		program, formats, selectedAs = h.program("mttkrp"), cpdFormats, "mttkrp"
	}
	if !h.selected(selectedAs, d.Name) {
		return nil
	}
	path, dims, nnz, err := h.datasetFile(d)
	if err != nil {
		return err
	}
	var in *Inputs
	if kernel == cpdKernel {
		in, err = h.cpdInputs(d.Name, path, dims, nnz, cpdRanks[0])
	} else {
		in, err = h.kernelInputs(kernel, d.Name, path, dims, nnz)
	}
	if err != nil {
		return err
	}
	k := caseKey{"threads", kernel, d.Name, 0}
	var jobs []job
	for i, t := range h.cfg.Threads {
		jobs = append(jobs, h.storelJob(k, fmt.Sprintf("storel %d thread(s)", t), StorelRun{program, formats, "optimized", t}, in, i == 0))
	}
	if kernel == "spmv" || kernel == "batax" || kernel == cpdKernel {
		for _, t := range h.cfg.Threads {
			system := fmt.Sprintf("torch %d thread(s)", t)
			prefix := h.answerPath(k, system, t)
			j := job{system: system, threads: t, answer: prefix, npy: true,
				exec: Exec{Args: h.pyArgs("torch", kernel, in, t, prefix), Timeout: h.cfg.Timeout}}
			if why := h.pythonMissing("torch"); why != "" {
				j.skip = why
			}
			jobs = append(jobs, j)
		}
	}
	h.runJobs(k, jobs)
	return nil
}

var (
	// "iterations: 21", "time = 3.2 ms", "e-nodes 2316"
	wordThenNumber = regexp.MustCompile(`([A-Za-z][A-Za-z_-]*(?: [A-Za-z_-]+)?)\s*[:=]?\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*(ms|µs|us|s)?\b`)
	// a figure's name followed by ':' or '=' announces the word-first layout
	wordFirst = regexp.MustCompile(`(?i)(iter[a-z]*|e-?nodes?|nodes|e-?classes|classes|memo[a-z]*|time)\s*[:=]`)
	// "21 iterations", "2316 e-nodes", "1.2 ms"
	numberThenWord = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*(e-?nodes|e-?classes|iterations|iters|nodes|classes|memo[a-z]*|ms|µs|us)\b`)
)

// figureKey names the figure a word stands for ("" if none).
func figureKey(word, unit string) string {
	switch {
	case strings.Contains(word, "iter"):
		return "iterations"
	case strings.Contains(word, "class"):
		return "classes"
	case strings.Contains(word, "node"):
		return "nodes"
	case strings.Contains(word, "memo"):
		return "memo"
	case strings.Contains(word, "time") || unit != "" || word == "ms" || word == "us" || word == "µs":
		return "time_ms"
	}
	return ""
}

func toMS(v float64, unit string) float64 {
	switch unit {
	case "s":
		return v * 1000
	case "µs", "us":
		return v / 1000
	}
	return v
}

// ParseExplainFigures reads optimizer figures from `storel explain` output,
// whatever its exact layout: in sections whose heading ("== ..." or
// "# ...") speaks of the optimizer, the e-graph or its stages, and on lines
// naming e-graph figures anywhere, it takes numbers next to words naming
// iterations, e-nodes, e-classes, memo entries and time. Plan listings
// ("27 nodes" of a printed plan) are outside such sections and lines. A
// figure reported more than once (one per optimizer stage) is summed, and
// each occurrence is also kept as "name#1", "name#2", ...
func ParseExplainFigures(text string) map[string]float64 {
	if figs, ok := parseStageTable(text); ok {
		return figs
	}
	figs := map[string]float64{}
	count := map[string]int{}
	add := func(key string, v float64) {
		count[key]++
		figs[fmt.Sprintf("%s#%d", key, count[key])] = v
		figs[key] += v
	}
	inSection := false
	for _, line := range strings.Split(text, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if strings.HasPrefix(l, "==") || strings.HasPrefix(l, "#") {
			inSection = strings.Contains(l, "optimi") || strings.Contains(l, "graph") || strings.Contains(l, "stage") ||
				strings.Contains(l, "figure") || strings.Contains(l, "statistic") || strings.Contains(l, "saturat")
			if !strings.Contains(l, "e-graph") && !strings.Contains(l, "egraph") && !strings.Contains(l, "iteration") {
				continue // a heading's own numbers ("27 nodes" of a plan) are not figures
			}
		}
		named := strings.Contains(l, "e-graph") || strings.Contains(l, "egraph") || strings.Contains(l, "e-node") ||
			strings.Contains(l, "enode") || strings.Contains(l, "e-class") || strings.Contains(l, "eclass") ||
			strings.Contains(l, "iteration") || strings.Contains(l, "memo")
		if !inSection && !named {
			continue
		}
		// "iterations: 59  e-nodes: 46456" reads word first; "31 iterations,
		// 47441 e-nodes" number first. Reading both ways would pair 59 with
		// e-nodes.
		seen := map[string]bool{}
		if wordFirst.MatchString(line) {
			seen["number-first"] = true
		}
		for _, m := range numberThenWord.FindAllStringSubmatch(line, -1) {
			if seen["number-first"] {
				break
			}
			v, err := strconv.ParseFloat(m[1], 64)
			key := figureKey(m[2], "")
			if err != nil || key == "" || seen[key] {
				continue
			}
			seen[key] = true
			add(key, toMS(v, m[2]))
		}
		for _, m := range wordThenNumber.FindAllStringSubmatch(line, -1) {
			v, err := strconv.ParseFloat(m[2], 64)
			key := figureKey(strings.ToLower(m[1]), m[3])
			if err != nil || key == "" || seen[key] {
				continue
			}
			seen[key] = true
			add(key, toMS(v, m[3]))
		}
	}
	return figs
}

// stageColumns maps a figure table's column headings to figure names.
var stageColumns = map[string]string{
	"iters": "iterations", "iterations": "iterations", "nodes": "nodes", "e-nodes": "nodes",
	"classes": "classes", "e-classes": "classes", "time": "time_ms", "memo": "memo",
}

// parseStageTable reads a table of figures, one row per optimizer stage:
//
//	stage      rounds  iters   nodes  classes       time  stop
//	fuse            1      7     128       91    0.52 ms  saturated
//	total                                        1.20 ms  saturated
//
// A "total" row gives the total time. Each stage's figures are kept as
// "name#k" (k-th stage) and summed into "name"; the stage names go into
// "stage:NAME" = k.
func parseStageTable(text string) (map[string]float64, bool) {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		head := strings.Fields(strings.ToLower(line))
		known := 0
		for _, h := range head {
			if stageColumns[h] != "" {
				known++
			}
		}
		if known < 3 {
			continue
		}
		figs := map[string]float64{}
		stages := 0
		for _, row := range lines[i+1:] {
			f := strings.Fields(row)
			if len(f) == 0 {
				break
			}
			if strings.EqualFold(f[0], "total") {
				for j := 1; j < len(f); j++ {
					if v, err := strconv.ParseFloat(f[j], 64); err == nil && j+1 < len(f) && isTimeUnit(f[j+1]) {
						figs["time_ms"] = toMS(v, f[j+1])
						break
					}
				}
				continue
			}
			stages++
			figs[fmt.Sprintf("stage:%s", f[0])] = float64(stages)
			tok := 1
			for _, h := range head[1:] {
				if tok >= len(f) {
					break
				}
				v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(f[tok], "ms"), "s"), 64)
				tok++
				if err != nil {
					continue
				}
				name := stageColumns[h]
				if name == "time_ms" {
					unit := "ms"
					if tok < len(f) && isTimeUnit(f[tok]) {
						unit = f[tok]
						tok++
					}
					v = toMS(v, unit)
				}
				if name == "" {
					continue
				}
				figs[fmt.Sprintf("%s#%d", name, stages)] = v
				if name != "time_ms" || !hasTotal(lines[i+1:]) {
					figs[name] += v
				}
			}
		}
		return figs, stages > 0
	}
	return nil, false
}

func isTimeUnit(s string) bool { return s == "ms" || s == "s" || s == "µs" || s == "us" }

func hasTotal(rows []string) bool {
	for _, r := range rows {
		f := strings.Fields(r)
		if len(f) == 0 {
			return false
		}
		if strings.EqualFold(f[0], "total") {
			return true
		}
	}
	return false
}
