package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Config says what to run and with which tools.
type Config struct {
	Quick   bool
	Repo    string // storel's repository (examples/ lives there)
	DataDir string // the real matrices and tensors (shared/data)
	OutDir  string // REPORT.md, results.json and the plots go here
	TmpDir  string // generated inputs and answers

	Storel string // the storel binary
	Self   string // this harness's binary (for the oracle subcommand)
	Python string // the python with SciPy, NumPy, PyTorch
	PyPeer string // bench/peers/pypeer.py
	DuckDB string // the duckdb-peer binary ("" = not available)
	Taco   string // a taco binary on PATH ("" = none)

	Experiments []string // which experiments, in order (see AllExperiments)
	Repeat      int      // runs per measurement; the median is reported
	// Rounds runs each e2e case's systems this many times in turn (storel,
	// then each peer, then storel again, ...), so that the machine's drift
	// during a case falls on all of them alike; a system's phases are the
	// medians over its rounds. 0 or 1: one round.
	Rounds  int
	Timeout time.Duration
	// SweepTimeout caps a run of the §6.2 sweep (at most Timeout), which
	// has many cases where some systems are hopeless (dense storage at
	// low densities, unfactorized loops at high ones).
	SweepTimeout time.Duration
	// MaxRSS bounds one run's resident memory in bytes (0: no bound).
	MaxRSS int64
	// OracleTimeout bounds a reference-interpreter run; when it runs out
	// the check against the oracle is skipped (storel's answer is still the
	// reference for the peers).
	OracleTimeout time.Duration
	// OracleMaxNNZ: the oracle runs only on inputs with at most this many
	// non-zeros in the main tensor.
	OracleMaxNNZ int64
	// Kernels and Inputs, when not empty, restrict the runs to these
	// kernels and (for e2e and threads) these real inputs.
	Kernels []string
	Inputs  []string
	// Merge keeps the measurements of an earlier results.json in OutDir,
	// replacing only the cases this run measures again.
	Merge         bool
	Threads       []int   // thread counts of the scaling experiment
	FactorDensity float64 // density of the generated right-hand factors
	Machine       string  // one-line description of the machine (for the report)
	// StorelBuild identifies the storel binary measured (commit, whether
	// the tree had other changes, and a hash of the binary).
	StorelBuild string
	Log         io.Writer
}

// AllExperiments lists the experiments in the order of the paper's §6.
var AllExperiments = []string{"e2e", "sweep", "ablation", "optimizer", "overhead", "threads", "variants", "cpd"}

// Measurement is one system's run on one input.
type Measurement struct {
	Experiment string  `json:"experiment"`
	Kernel     string  `json:"kernel"`
	Input      string  `json:"input"`
	X          float64 `json:"x,omitempty"` // density (sweep, ablation) or N (overhead)
	System     string  `json:"system"`
	Threads    int     `json:"threads"`
	Status     Status  `json:"status"`
	// Phases in milliseconds, NaN (null in JSON) when the system did not
	// report them. Execute is the median of Repeat runs.
	Load     *float64 `json:"load_ms,omitempty"`
	Build    *float64 `json:"build_ms,omitempty"`
	Optimize *float64 `json:"optimize_ms,omitempty"`
	Compile  *float64 `json:"compile_ms,omitempty"`
	Execute  *float64 `json:"execute_ms,omitempty"`
	Wall     float64  `json:"wall_ms"`
	// CheckedAgainst names the reference its answer was compared with.
	CheckedAgainst string `json:"checked_against,omitempty"`
	Note           string `json:"note,omitempty"`
	// Figures holds optimizer metrics parsed from `storel explain`.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Build is the storel build that ran (see Config.StorelBuild).
	StorelBuild string `json:"storel_build,omitempty"`
	// Form says what a variants measurement ran.
	Form *FormInfo `json:"form,omitempty"`
}

func ms(t map[string]float64, phase string) *float64 {
	if v, ok := t[phase]; ok && !math.IsNaN(v) {
		return &v
	}
	return nil
}

// Harness runs experiments and collects measurements.
type Harness struct {
	cfg      Config
	Results  []Measurement
	Failures []string // mismatches and broken runs that make the run fail
	// Notes are remarks for the report, such as the cases an experiment
	// leaves out and why.
	Notes []Note
	// Missing lists the real inputs left out because the data directory
	// lacks them: a report without them is not the full report.
	Missing []string
	// pyMissing caches why each Python peer cannot run ("" = it can).
	pyMissing map[string]string
	previous  *reportData // --merge: the earlier results
	// logicalPlan caches whether storel offers --plan logical.
	logicalPlan *bool
	started     time.Time
}

// New returns a harness for cfg.
func New(cfg Config) *Harness {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Harness{cfg: cfg, started: time.Now()}
}

func (h *Harness) logf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// selected says whether kernel and input (real data; "" for generated)
// are among those asked for.
func (h *Harness) selected(kernel, input string) bool {
	if len(h.cfg.Kernels) > 0 && !slices.Contains(h.cfg.Kernels, kernel) {
		return false
	}
	return input == "" || len(h.cfg.Inputs) == 0 || slices.Contains(h.cfg.Inputs, input)
}

// loadPrevious reads OutDir/results.json for --merge.
func (h *Harness) loadPrevious() error {
	b, err := os.ReadFile(filepath.Join(h.cfg.OutDir, "results.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var d reportData
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("--merge: %s: %v", filepath.Join(h.cfg.OutDir, "results.json"), err)
	}
	h.previous = &d
	return nil
}

// merged returns the previous run's measurements and failures with the
// cases measured again by this run replaced by the new ones.
func (h *Harness) merged() ([]Measurement, []string) {
	if h.previous == nil {
		return h.Results, h.Failures
	}
	type key struct {
		e, k, i string
		x       float64
	}
	redone := map[key]bool{}
	for _, m := range h.Results {
		redone[key{m.Experiment, m.Kernel, m.Input, m.X}] = true
	}
	var ms []Measurement
	done := map[key]bool{}
	for _, m := range h.previous.Results {
		kk := key{m.Experiment, m.Kernel, m.Input, m.X}
		if !redone[kk] {
			ms = append(ms, m)
			continue
		}
		if !done[kk] {
			done[kk] = true
			for _, n := range h.Results {
				if (key{n.Experiment, n.Kernel, n.Input, n.X}) == kk {
					ms = append(ms, n)
				}
			}
		}
	}
	for _, n := range h.Results {
		if !done[key{n.Experiment, n.Kernel, n.Input, n.X}] {
			ms = append(ms, n)
		}
	}
	var fs []string
	for _, f := range h.previous.Failures {
		stale := false
		for kk := range redone {
			if strings.HasPrefix(f, kk.e+" "+kk.k+" "+kk.i+" ") {
				stale = true
			}
		}
		if !stale {
			fs = append(fs, f)
		}
	}
	return ms, append(fs, h.Failures...)
}

// Note is a remark of an experiment for the report.
type Note struct {
	Experiment string `json:"experiment"`
	Text       string `json:"text"`
}

// note records a remark of an experiment for the report (once).
func (h *Harness) note(experiment, text string) {
	n := Note{experiment, text}
	if !slices.Contains(h.Notes, n) {
		h.Notes = append(h.Notes, n)
		h.logf("%s: %s", experiment, text)
	}
}

// mergedNotes returns the previous run's notes of the experiments this run
// did not run again, then this run's.
func (h *Harness) mergedNotes() []Note {
	if h.previous == nil {
		return h.Notes
	}
	var ns []Note
	for _, n := range h.previous.Notes {
		if !slices.Contains(h.cfg.Experiments, n.Experiment) {
			ns = append(ns, n)
		}
	}
	return append(ns, h.Notes...)
}

// RunAll runs the configured experiments.
func (h *Harness) RunAll() error {
	if h.cfg.Merge {
		if err := h.loadPrevious(); err != nil {
			return err
		}
	}
	// What an earlier run left unpublished is not this run's.
	if err := os.RemoveAll(h.stageDir()); err != nil {
		return err
	}
	for _, e := range h.cfg.Experiments {
		start := time.Now()
		h.logf("== experiment %s", e)
		var err error
		switch e {
		case "e2e":
			err = h.runE2E()
		case "sweep":
			err = h.runSweep()
		case "ablation":
			err = h.runAblation()
		case "optimizer":
			err = h.runOptimizer()
		case "overhead":
			err = h.runOverhead()
		case "threads":
			err = h.runThreads()
		case "variants":
			err = h.runVariants()
		case "cpd":
			err = h.runCPD()
		default:
			err = fmt.Errorf("unknown experiment %q (have %s)", e, strings.Join(AllExperiments, ", "))
		}
		if err != nil {
			return fmt.Errorf("experiment %s: %v", e, err)
		}
		h.logf("== experiment %s done in %s", e, time.Since(start).Round(time.Second))
		if err := h.SaveJSON(); err != nil {
			return err
		}
	}
	return nil
}

// SaveJSON writes every measurement so far to results.json in the
// staging directory of the report (see WriteReport): a checkpoint that
// survives a run stopped part way, without touching OutDir.
func (h *Harness) SaveJSON() error {
	if h.cfg.OutDir == "" {
		return nil // no report to make (a harness in a test)
	}
	results, failures := h.merged()
	b, err := json.MarshalIndent(struct {
		Machine  string        `json:"machine"`
		Quick    bool          `json:"quick"`
		Results  []Measurement `json:"results"`
		Failures []string      `json:"failures"`
		Notes    []Note        `json:"notes,omitempty"`
	}{h.cfg.Machine, h.cfg.Quick, results, failures, h.mergedNotes()}, "", " ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(h.stageDir(), "results.json"), string(b))
}

// job is one system to run on a case and how to read its answer.
type job struct {
	system string
	exec   Exec
	// answer: path of a .tns (storel, oracle, taco) or the prefix of a
	// .idx.npy/.val.npy pair (peers).
	answer string
	npy    bool
	// reference marks storel's own run: its answer checks the others.
	reference bool
	oracle    bool
	threads   int
	// tacoTimes: parse TACO's -time output instead of timing lines.
	tacoTimes bool
	// tolerance of the check of this job's answer (zero: DefaultTolerance).
	tolerance Tolerance
	skip      string // non-empty: do not run, record why
	// always: the job takes part in every round whatever its time
	// (within roundWallBudget), and its time does not set the pace of the
	// others (the variants experiment's Go loop and forms).
	always bool
}

// processRepeatBudget bounds the wall time spent repeating a process whose
// own repeats cannot be trusted (TACO's): once the runs so far took this
// long, the median of those is taken.
const processRepeatBudget = 15 * time.Second

// runRepeated runs a job and returns its last result, its timings and how
// many times it ran. Most systems repeat the kernel themselves and report
// the median. TACO's -time=N does not: TensorBase::compute() returns at
// once when its result is up to date, so only the first of N computes
// works (its "median" is of no-ops). A TACO job therefore runs the whole
// process with -time=1 up to repeat times, while the runs take less than
// processRepeatBudget, and its phases are the medians over the runs.
func runRepeated(j job, repeat int) (ExecResult, map[string]float64, int) {
	if !j.tacoTimes {
		r := Run(j.exec)
		return r, r.Timings, 1
	}
	phases := map[string][]float64{}
	var r ExecResult
	var spent time.Duration
	runs := 0
	for runs < max(repeat, 1) && (runs == 0 || spent < processRepeatBudget) {
		r = Run(j.exec)
		spent += r.Wall
		if r.Status != StatusOK {
			return r, nil, runs + 1
		}
		runs++
		for phase, v := range parseTacoTimes(r.Stdout + "\n" + r.Stderr) {
			phases[phase] = append(phases[phase], v)
		}
	}
	return r, medians(phases), runs
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// tol is the tolerance the job's answer is checked with.
func (j *job) tol() Tolerance {
	if j.tolerance == (Tolerance{}) {
		return DefaultTolerance
	}
	return j.tolerance
}

// looser returns the more lenient of two tolerances, for comparing two
// answers each written with its own precision.
func looser(a, b Tolerance) Tolerance {
	return Tolerance{Rel: max(a.Rel, b.Rel), Abs: max(a.Abs, b.Abs)}
}

// caseKey identifies a case in the results.
type caseKey struct {
	experiment, kernel, input string
	x                         float64
}

// runJobs runs a case's jobs in order: the reference (storel) first, the
// oracle next, then the others, each answer checked before its time is
// recorded.
func (h *Harness) runJobs(k caseKey, jobs []job) []Measurement {
	var ref *Answer
	refName := ""
	// Without storel's or the oracle's answer, the peers are still
	// compared with each other (their times stay marked unchecked).
	var cross *Answer
	crossName := ""
	var crossTol Tolerance
	// Failures are collected per case, since a later run (the oracle, or
	// peers agreeing with each other) can show which side was wrong.
	type caseFailure struct {
		idx int
		msg string
	}
	var caseFailures []caseFailure
	var dissent *Answer
	var dissentTol Tolerance
	var dissenters []int
	oracleConfirmed := false
	var out []Measurement
	// firstTimes holds the phases of each job that ran to an answer, by
	// its index in out (one measurement per job), for later rounds.
	firstTimes := map[int]map[string]float64{}
	for _, j := range jobs {
		m := Measurement{Experiment: k.experiment, Kernel: k.kernel, Input: k.input, X: k.x, System: j.system, Threads: j.threads, StorelBuild: h.cfg.StorelBuild}
		if j.skip != "" {
			m.Status, m.Note = StatusSkip, j.skip
			h.logf("%s %s %s %s: skip (%s)", k.experiment, k.kernel, k.input, j.system, j.skip)
			out = append(out, m)
			continue
		}
		if err := ensureDir(j.answer); err != nil {
			m.Status, m.Note = StatusError, err.Error()
			out = append(out, m)
			continue
		}
		removeAnswer(j.answer, j.npy)
		if j.exec.MaxRSS == 0 {
			j.exec.MaxRSS = h.cfg.MaxRSS
		}
		r, t, runs := runRepeated(j, h.cfg.Repeat)
		if runs > 1 {
			m.Note = fmt.Sprintf("median of %d runs of the process", runs)
		}
		m.Wall = float64(r.Wall.Microseconds()) / 1000
		m.setPhases(t)
		m.Status = r.Status
		if r.Status == StatusError && r.Code == 3 {
			m.Status = StatusSkip // the peer says it cannot run this input
		}
		if r.Status != StatusOK {
			m.Note = r.Err
			if j.oracle {
				m.Note = "oracle: " + m.Note
			}
			if m.Status == StatusError && j.reference {
				caseFailures = append(caseFailures, caseFailure{len(out), fmt.Sprintf("%s %s %s %s: %s", k.experiment, k.kernel, k.input, j.system, r.Err)})
			}
			h.logf("%s %s %s %s: %s %s", k.experiment, k.kernel, k.input, j.system, m.Status, m.Note)
			out = append(out, m)
			continue
		}
		if m.Execute == nil {
			m.Status, m.Note = StatusError, "no execute timing in its output"
			out = append(out, m)
			continue
		}
		ans, err := readAnswer(j.answer, j.npy)
		dup := ""
		if err == nil {
			dup = ans.Duplicate()
		}
		fail := func() {
			caseFailures = append(caseFailures, caseFailure{len(out), fmt.Sprintf("%s %s %s %s: %s", k.experiment, k.kernel, k.input, j.system, m.Note)})
		}
		switch {
		case err != nil:
			m.Status, m.Note = StatusError, "reading its answer: "+err.Error()
			fail()
		case dup != "":
			// A coordinate listed twice is not an answer; it checks nothing.
			m.Status, m.Note = StatusWrong, "its answer lists "+dup+" more than once"
			fail()
		case j.reference && ref == nil:
			ref, refName = ans, j.system
			m.CheckedAgainst = "(reference)"
		case ref == nil:
			if j.oracle {
				ref, refName = ans, "oracle"
				m.CheckedAgainst = "(reference)"
			} else {
				m.Status, m.Note = StatusNoCheck, "storel gave no answer to check against"
				if cross == nil {
					cross, crossName, crossTol = ans, j.system, j.tol()
				} else if cerr := Compare(cross, ans, looser(crossTol, j.tol())); cerr != nil {
					m.Note += "; disagrees with " + crossName + ": " + cerr.Error()
				} else {
					m.Note += "; agrees with " + crossName
				}
			}
		default:
			cerr := Compare(ref, ans, j.tol())
			switch {
			case cerr == nil:
				m.CheckedAgainst = refName
				if j.oracle {
					oracleConfirmed = true
				}
			case j.oracle:
				// The oracle is the ground truth: the reference run is
				// the one that is wrong.
				for i := range out {
					if out[i].CheckedAgainst == "(reference)" {
						out[i].Status = StatusWrong
						out[i].Note = "disagrees with the reference interpreter: " + cerr.Error()
						caseFailures = append(caseFailures, caseFailure{i, fmt.Sprintf("%s %s %s %s: %s", k.experiment, k.kernel, k.input, out[i].System, out[i].Note)})
					}
				}
				m.Note = "reference interpreter; " + refName + "'s answer disagrees"
				ref, refName, oracleConfirmed = ans, "oracle", true
			default:
				m.Status, m.Note = StatusWrong, "against "+refName+": "+cerr.Error()
				fail()
				// Peers that disagree with storel but agree with each
				// other point at storel (unless the oracle vouched for it).
				if dissent == nil {
					dissent, dissenters, dissentTol = ans, []int{len(out)}, j.tol()
				} else if Compare(dissent, ans, looser(dissentTol, j.tol())) == nil {
					dissenters = append(dissenters, len(out))
				}
			}
		}
		h.logf("%s %s %s %s: %s execute %s ms (wall %.0f ms) %s", k.experiment, k.kernel, k.input, j.system, m.Status, fmtMS(m.Execute), m.Wall, m.Note)
		if m.Status == StatusOK || m.Status == StatusNoCheck {
			firstTimes[len(out)] = t
		}
		out = append(out, m)
		// Only the reference's answer is kept, in memory; the files are large.
		removeAnswer(j.answer, j.npy)
	}
	h.moreRounds(k, jobs, out, firstTimes)
	if len(dissenters) >= 2 && !oracleConfirmed {
		var names []string
		for _, i := range dissenters {
			names = append(names, out[i].System)
		}
		agree := strings.Join(names, ", ")
		for i := range out {
			if out[i].CheckedAgainst == "(reference)" && out[i].System != "oracle" {
				out[i].Status = StatusWrong
				out[i].CheckedAgainst = ""
				out[i].Note = "disagrees with " + agree + ", which agree with each other: " + strings.TrimPrefix(out[dissenters[0]].Note, "against "+refName+": ")
				caseFailures = append(caseFailures, caseFailure{i, fmt.Sprintf("%s %s %s %s: %s", k.experiment, k.kernel, k.input, out[i].System, out[i].Note)})
			}
		}
		keep := caseFailures[:0]
		for _, f := range caseFailures {
			if !slices.Contains(dissenters, f.idx) {
				keep = append(keep, f)
			}
		}
		caseFailures = keep
		for _, i := range dissenters {
			out[i].Status = StatusNoCheck
			out[i].Note = "agrees with " + agree + "; storel's answer differs, so it is not checked against storel"
		}
	}
	for _, f := range caseFailures {
		h.Failures = append(h.Failures, f.msg)
	}
	h.Results = append(h.Results, out...)
	if err := h.SaveJSON(); err != nil {
		h.logf("saving results: %v", err)
	}
	return out
}

func fmtMS(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

func readAnswer(path string, npy bool) (*Answer, error) {
	if npy {
		return ReadNPYAnswer(path)
	}
	return ReadTNSAnswer(path)
}

func removeAnswer(path string, npy bool) {
	if npy {
		os.Remove(path + ".idx.npy")
		os.Remove(path + ".val.npy")
		return
	}
	os.Remove(path)
}
