package harness

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/storel/storel/internal/atomicfile"
)

// reportData is what REPORT.md is made from (also results.json's shape).
type reportData struct {
	Machine  string            `json:"machine"`
	Quick    bool              `json:"quick"`
	Results  []Measurement     `json:"results"`
	Failures []string          `json:"failures"`
	Notes    []Note            `json:"notes,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`
	Duration string            `json:"duration,omitempty"`
	Config   map[string]string `json:"config,omitempty"`
	// Runs describes every run whose measurements are here (several
	// with --merge), oldest first.
	Runs []string `json:"runs,omitempty"`
}

// WriteReport writes REPORT.md, results.json and the plots. They are
// made in a staging directory under TmpDir and moved into OutDir only once
// all are complete, and only when publish is set: a run that stopped
// early leaves the report already in OutDir (a committed one) alone. It
// returns the directory that holds the new report.
func (h *Harness) WriteReport(elapsed time.Duration, publish bool) (string, error) {
	results, failures := h.merged()
	d := reportData{Machine: h.cfg.Machine, Quick: h.cfg.Quick, Results: results, Failures: failures, Notes: h.mergedNotes(),
		Versions: h.Versions(), Duration: elapsed.Round(time.Second).String(),
		Config: map[string]string{
			"repeat":          fmt.Sprint(h.cfg.Repeat),
			"e2e rounds":      fmt.Sprint(max(h.cfg.Rounds, 1)),
			"timeout":         h.cfg.Timeout.String(),
			"sweep timeout":   h.sweepLimit().String(),
			"oracle max nnz":  fmt.Sprint(h.cfg.OracleMaxNNZ),
			"factor density":  fmt.Sprintf("%g", h.cfg.FactorDensity),
			"experiments":     strings.Join(h.cfg.Experiments, ","),
			"thread counts":   fmt.Sprint(h.cfg.Threads),
			"oracle time cap": h.cfg.OracleTimeout.String(),
		}}
	if h.previous != nil {
		d.Runs = append(d.Runs, h.previous.Runs...)
		// The merged measurements of the earlier runs used the tools those
		// runs found, which this machine may lack.
		for k, v := range h.previous.Versions {
			if cur, ok := d.Versions[k]; !ok || cur == "missing" {
				d.Versions[k] = v + " (earlier runs)"
			}
		}
	}
	d.Runs = append(d.Runs, fmt.Sprintf("%s: %s (timeout %s, repeat %d, e2e rounds %d, storel build %s)",
		h.started.Format("2006-01-02 15:04 MST"), strings.Join(h.cfg.Experiments, ", "), h.cfg.Timeout, h.cfg.Repeat, max(h.cfg.Rounds, 1), h.cfg.StorelBuild))
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return "", err
	}
	stage := h.stageDir()
	if err := writeFile(filepath.Join(stage, "results.json"), string(b)); err != nil {
		return "", err
	}
	if err := writeReport(stage, &d); err != nil {
		return "", err
	}
	if !publish {
		return stage, nil
	}
	return h.cfg.OutDir, publishDir(stage, h.cfg.OutDir)
}

// stageDir is where a run's report is made before it is published.
func (h *Harness) stageDir() string {
	if h.cfg.TmpDir == "" {
		return filepath.Join(h.cfg.OutDir, "tmp", "next-report")
	}
	return filepath.Join(h.cfg.TmpDir, "next-report")
}

// WriteReportFromJSON rewrites REPORT.md and the plots from dir/results.json
// (made under dir/tmp, then moved into dir).
func WriteReportFromJSON(dir string) error {
	d, err := readResults(dir)
	if err != nil {
		return err
	}
	stage := filepath.Join(dir, "tmp", "next-report")
	if err := os.RemoveAll(stage); err != nil {
		return err
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return err
	}
	if err := writeReport(stage, d); err != nil {
		return err
	}
	return publishDir(stage, dir)
}

// readResults reads dir/results.json.
func readResults(dir string) (*reportData, error) {
	path := filepath.Join(dir, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d reportData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &d, nil
}

// publishDir moves every file under stage to the same place under out,
// REPORT.md last, so that the report in out changes only once the new one
// is complete, then removes stage.
func publishDir(stage, out string) error {
	var files []string
	err := filepath.WalkDir(stage, func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, rerr := filepath.Rel(stage, path)
			if rerr != nil {
				return rerr
			}
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.SliceStable(files, func(i, j int) bool { return files[j] == "REPORT.md" && files[i] != "REPORT.md" })
	for _, rel := range files {
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(stage, rel), dst); err != nil {
			// Another file system: copy, still replacing dst only once
			// the copy is complete.
			b, rerr := os.ReadFile(filepath.Join(stage, rel))
			if rerr != nil {
				return err
			}
			if err := atomicfile.WriteFile(dst, b); err != nil {
				return err
			}
		}
	}
	return os.RemoveAll(stage)
}

// cell formats one measurement's execute time for a table.
func cell(m *Measurement) string {
	if m.System == "oracle" {
		// The oracle's speed is not measured; it only checks storel.
		switch m.Status {
		case StatusOK:
			return "✓"
		case StatusTimeout:
			return "timeout"
		}
		return "error"
	}
	switch m.Status {
	case StatusOK:
		return fmtNum(*m.Execute)
	case StatusNoCheck:
		return fmtNum(*m.Execute) + " †"
	case StatusWrong:
		return "**WRONG**"
	case StatusTimeout:
		return "timeout"
	case StatusSkip:
		return "n/a"
	}
	return "error"
}

func fmtNum(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// execOK returns the execute time of a measurement whose answer checked.
func execOK(m *Measurement) (float64, bool) {
	if m == nil || m.Status != StatusOK || m.Execute == nil || m.System == "oracle" {
		return 0, false
	}
	return *m.Execute, true
}

type mdWriter struct{ sb strings.Builder }

func (w *mdWriter) p(format string, args ...any) { fmt.Fprintf(&w.sb, format+"\n", args...) }

func (w *mdWriter) table(header []string, rows [][]string) {
	w.p("| %s |", strings.Join(header, " | "))
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
		if i > 0 {
			seps[i] = "---:"
		}
	}
	w.p("|%s|", strings.Join(seps, "|"))
	for _, r := range rows {
		w.p("| %s |", strings.Join(r, " | "))
	}
	w.p("")
}

// group collects measurements by a key, in first-seen order.
type group struct {
	keys []string
	by   map[string][]*Measurement
}

func groupBy(ms []*Measurement, key func(*Measurement) string) *group {
	g := &group{by: map[string][]*Measurement{}}
	for _, m := range ms {
		k := key(m)
		if _, ok := g.by[k]; !ok {
			g.keys = append(g.keys, k)
		}
		g.by[k] = append(g.by[k], m)
	}
	return g
}

func systemsOf(ms []*Measurement) []string {
	return groupBy(ms, func(m *Measurement) string { return m.System }).keys
}

// storelFirst orders a table's systems with storel first, then storel's
// other storage (even when only some inputs have it, as SpMV's
// csr+pattern), then the others as they came.
func storelFirst(systems []string) []string {
	rank := func(s string) int {
		switch {
		case s == "storel":
			return 0
		case strings.HasPrefix(s, "storel"):
			return 1
		}
		return 2
	}
	out := slices.Clone(systems)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

func find(ms []*Measurement, system string) *Measurement {
	for _, m := range ms {
		if m.System == system {
			return m
		}
	}
	return nil
}

func writeReport(dir string, d *reportData) error {
	w := &mdWriter{}
	all := make([]*Measurement, len(d.Results))
	for i := range d.Results {
		all[i] = &d.Results[i]
	}
	byExp := groupBy(all, func(m *Measurement) string { return m.Experiment })

	if d.Quick {
		w.p("# storel benchmarks — QUICK run")
		w.p("")
		w.p("**This is a `--quick` run: small inputs (leading blocks of the real matrices and tensors, small synthetic ones), " +
			"a short time limit. It proves the harness and the peers work end to end; its times are not the paper's experiments.** " +
			"The full run is `bench/run.sh` (see bench/README.md).")
	} else {
		w.p("# storel benchmarks")
	}
	w.p("")
	w.p("Reproduction of the paper's §6 against real peers. Machine: %s. The last run took %s.", d.Machine, d.Duration)
	w.p("")
	var vk []string
	for k := range d.Versions {
		vk = append(vk, k)
	}
	sort.Strings(vk)
	var vs []string
	for _, k := range vk {
		vs = append(vs, k+" "+d.Versions[k])
	}
	w.p("Versions: %s.", strings.Join(vs, "; "))
	w.p("")
	var ck []string
	for k := range d.Config {
		ck = append(ck, k)
	}
	sort.Strings(ck)
	var cs []string
	for _, k := range ck {
		cs = append(cs, k+" "+d.Config[k])
	}
	w.p("Settings of the last run: %s.", strings.Join(cs, "; "))
	w.p("")
	writeBuilds(w, d, all)
	w.p("Times are milliseconds of **execution only** (median of the runs), measured by each system around the kernel itself: " +
		"loading files, building storage formats, optimizing and compiling are reported apart (storel's \"load\" includes building its formats). " +
		"Every answer is checked against storel's (and storel's against the reference interpreter on small inputs) before its time is shown: " +
		"`**WRONG**` is a failed run, `†` a time whose answer could not be checked (no reference finished), `timeout` a run killed at the time limit, " +
		"`n/a` a system that cannot run the input (reason below the table).")
	w.p("")

	// Status summary.
	counts := map[Status]int{}
	for _, m := range all {
		counts[m.Status]++
	}
	w.p("Runs: %d ok, %d wrong, %d timeout, %d error, %d not applicable, %d unchecked.",
		counts[StatusOK], counts[StatusWrong], counts[StatusTimeout], counts[StatusError], counts[StatusSkip], counts[StatusNoCheck])
	w.p("")
	if len(d.Failures) > 0 {
		w.p("## FAILURES")
		w.p("")
		for _, f := range d.Failures {
			w.p("- %s", f)
		}
		w.p("")
	}
	mode := storelMode(all)
	if note := modeNote(mode); note != "" {
		w.p("> %s", note)
		w.p("")
	}

	writeHeadline(w, byExp.by["e2e"], mode)

	if ms := byExp.by["e2e"]; len(ms) > 0 {
		w.p("## §6.1 End to end (Fig. 7)")
		w.p("")
		w.p("Each system with its best storage of Table 3 (storel: MMM CSR·CSR, SumMMM CSC·CSR, BATAX CSR·dense, TTM CSF·CSC "+
			"(and CSF·CSR), MTTKRP CSF·CSR·CSR-of-(j,l); SciPy CSR; NumPy dense; PyTorch CSR·dense; DuckDB relations with SQL join + GROUP BY; "+
			"TACO as storel, except TTM CSF·CSR: with the CSC matrix the C code TACO generates does not compile, as the paper reports). "+
			"Right-hand factors are random with density %s: 250 columns for the matrix products, rank 25 for TTM and MTTKRP. "+
			"BATAX runs as beta·Aᵀ(A·x) in SciPy, NumPy and PyTorch (hand-optimized order); SumMMM as the sum of the product; "+
			"TACO runs the expressions as written. "+
			"SpMV (y(i) = Σⱼ A(i,j)·x(j), not among the paper's kernels; examples/spmv.sdql) multiplies every matrix by a random dense x: "+
			"storel CSR·dense, SciPy CSR @ x, NumPy dense @ x, PyTorch CSR @ x (as an n×1 matrix: Debian's PyTorch has no MKL for its CSR×vector), "+
			"DuckDB a join + GROUP BY, TACO `Q(i)=A(i,j)*x(j)` with A CSR (`ds`) and x dense; on the matrices whose Matrix Market header says `pattern` "+
			"(every entry 1), storel also runs %s for SpMV and BATAX: CSR with no value array. "+
			"For SpMV storel also runs %s on every matrix: sliced ELLPACK with 32-bit columns, eight rows at a time (`sell+pattern` on the pattern matrices).",
			d.Config["factor density"], "`"+storelPatternSystem+"`", "`"+storelSellSystem+"`")
		w.p("")
		writeRoundsNote(w, ms)
		writeTacoNote(w, ms)
		w.p("")
		byKernel := groupBy(ms, func(m *Measurement) string { return m.Kernel })
		for _, kernel := range byKernel.keys {
			kms := byKernel.by[kernel]
			w.p("### %s", kernelTitle(kernel))
			w.p("")
			systems := storelFirst(systemsOf(kms))
			byInput := groupBy(kms, func(m *Measurement) string { return m.Input })
			header := append([]string{"input"}, systems...)
			var rows [][]string
			var notes []string
			var ss []series
			for i, s := range systems {
				ss = append(ss, series{name: s})
				_ = i
			}
			for ii, in := range byInput.keys {
				row := []string{in}
				for si, s := range systems {
					m := find(byInput.by[in], s)
					if m == nil {
						row = append(row, "")
						continue
					}
					row = append(row, cell(m))
					if m.Note != "" && m.Status != StatusOK {
						notes = append(notes, fmt.Sprintf("%s on %s: %s", s, in, m.Note))
					} else if m.Note != "" && s == "oracle" {
						notes = append(notes, fmt.Sprintf("%s on %s: %s", s, in, m.Note))
					}
					if v, ok := execOK(m); ok {
						ss[si].xs = append(ss[si].xs, float64(ii))
						ss[si].ys = append(ss[si].ys, v)
					}
				}
				rows = append(rows, row)
			}
			w.table(header, rows)
			writePhases(w, kms)
			writeNotes(w, notes)
			png := "e2e-" + kernel + ".png"
			if err := categoryPlot(filepath.Join(dir, png), kernelTitle(kernel)+": execution time", "ms (log)", byInput.keys, dropOracle(ss)); err == nil {
				if _, err := os.Stat(filepath.Join(dir, png)); err == nil {
					w.p("![%s](%s)", kernel, png)
					w.p("")
				}
			} else {
				w.p("(plot failed: %v)", err)
			}
		}
	}

	if ms := byExp.by["sweep"]; len(ms) > 0 {
		w.p("## §6.2 Sparsity sweep (Fig. 8)")
		w.p("")
		w.p("Random n×n matrices (both factors of MMM and SumMMM at the same density; BATAX's x dense), storel and TACO with their sparse formats of Table 3 " +
			"(TACO: MMM CSR·CSR, SumMMM CSC·CSR, BATAX CSR·dense) and with every matrix dense, against SciPy (CSR) and NumPy (dense). " +
			"The paper (Table 3) sweeps MMM on 10³×10³ and SumMMM and BATAX on 10⁵×10⁵; each size run is a section below.")
		w.p("")
		writeTacoNote(w, ms)
		writeExperimentNotes(w, d.Notes, "sweep", "Left out")
		writeSweepLike(w, dir, ms, "sweep", "density")
	}
	if ms := byExp.by["ablation"]; len(ms) > 0 {
		w.p("## §6.3 Rewrite rules on BATAX (Fig. 9)")
		w.p("")
		w.p("The rewrites are applied by hand (bench/programs/batax_f1.sdql, batax_f2.sdql, batax_f2_fused.sdql) and run with `--plan naive`, so the optimizer adds nothing; " +
			"\"trie\" stores A as a nested hash map (factorization only), \"CSR not fused\" composes the CSR mapping as the naive plan does (let A = mapping in …), " +
			"\"CSR fused\" walks CSR's arrays directly. \"optimizer (CSR)\" is `storel run --plan optimized` on the original program.")
		w.p("")
		writeSweepLike(w, dir, ms, "ablation", "density")
	}
	if ms := byExp.by["optimizer"]; len(ms) > 0 {
		writeOptimizer(w, ms)
	}
	if ms := byExp.by["overhead"]; len(ms) > 0 {
		writeOverhead(w, dir, ms)
		writeExperimentNotes(w, d.Notes, "overhead", "Note")
	}
	if ms := byExp.by["threads"]; len(ms) > 0 {
		writeThreads(w, ms)
	}
	if ms := byExp.by["variants"]; len(ms) > 0 {
		writeVariants(w, ms, d.Notes)
	}
	if ms := byExp.by["cpd"]; len(ms) > 0 {
		writeCPD(w, ms)
	}
	// The other experiments' notes (real inputs left out) have no place
	// in their sections, which may not even exist when nothing ran.
	var rest []Note
	for _, n := range d.Notes {
		if n.Experiment != "sweep" && n.Experiment != "overhead" && n.Experiment != "variants" {
			rest = append(rest, n)
		}
	}
	if len(rest) > 0 {
		w.p("## Left out")
		w.p("")
		for _, n := range rest {
			w.p("- **%s:** %s.", n.Experiment, strings.TrimSuffix(n.Text, "."))
		}
		w.p("")
	}
	if err := writeCSV(dir, d); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(w.sb.String()))
}

// kernelTitle is a kernel's name in headings and tables: the paper's
// capitals (MMM, BATAX), and SpMV as it is usually written.
func kernelTitle(kernel string) string {
	if kernel == "spmv" {
		return "SpMV"
	}
	return strings.ToUpper(kernel)
}

func dropOracle(ss []series) []series {
	var out []series
	for _, s := range ss {
		if s.name != "oracle" {
			out = append(out, s)
		}
	}
	return out
}

// storelMode tells from storel's own timings what ran: "interp" when every
// run of the optimized plan reported 0 ms of optimization and compilation
// (the reference interpreter ran the naive plan), "naive" when only the
// optimization was 0 (the engine compiled the naive plan), "" otherwise.
func storelMode(ms []*Measurement) string {
	n, noOpt, noCompile := 0, 0, 0
	for _, m := range ms {
		optimizedPlan := (m.Experiment == "e2e" || m.Experiment == "sweep" || m.Experiment == "threads") && strings.HasPrefix(m.System, "storel")
		if !optimizedPlan || m.Status != StatusOK || m.Execute == nil {
			continue
		}
		n++
		if val(m.Optimize) == 0 {
			noOpt++
			if val(m.Compile) == 0 {
				noCompile++
			}
		}
	}
	switch {
	case n == 0:
		return ""
	case noCompile == n:
		return "interp"
	case noOpt == n:
		return "naive"
	}
	return ""
}

func modeNote(mode string) string {
	switch mode {
	case "interp":
		return "**storel ran without its optimizer and engine.** Every storel run reported 0 ms of optimization and compilation: " +
			"`storel run` executed the naive plan in the reference interpreter (the build measured did not run the optimizer or the compiled engine). " +
			"storel's times below are those of the interpreter, not of the system the paper describes."
	case "naive":
		return "**storel ran without its optimizer.** Every `storel run --plan optimized` reported 0 ms of optimization: " +
			"the build measured did not run the optimizer, so the compiled engine ran the *naive* plan (paper §5.1) — " +
			"no factorization (the rewrites that make SumMMM, BATAX and MTTKRP fast) and no fusion of the storage mappings. " +
			"storel's times below are those of the naive plan. The §6.3 ablation, whose rewrites are applied by hand, shows what they are worth."
	}
	return ""
}

// lossReasons explains, per kernel and peer, why a peer can beat storel.
var lossReasons = map[string]string{
	"mmm/scipy":     "SciPy's SpGEMM is hand-tuned C++ (Gustavson's row-by-row product with a dense accumulator); the paper's §6.1 saw the same: MMM offers no rewrite to exploit, only raw loop speed",
	"mmm/numpy":     "NumPy calls BLAS dgemm on dense data; once the inputs fit in memory and are not very sparse, tuned dense kernels win (paper §6.2)",
	"mmm/torch":     "PyTorch's CSR×dense product is a tuned library kernel over a dense right-hand side",
	"mmm/duckdb":    "DuckDB's vectorized hash join and hash aggregation do well on a plain join + GROUP BY",
	"summmm/scipy":  "SciPy computes the product with its tuned SpGEMM; storel's advantage comes only from pushing the sum inward (factorization), which needs the optimizer",
	"summmm/numpy":  "dense BLAS product on small dense inputs",
	"summmm/torch":  "tuned CSR×dense product",
	"batax/scipy":   "SciPy runs the hand-optimized βAᵀ(Ax) as two C++ loops (csr_matvec, then the transpose's scatter); storel reaches the same work through its factorization rules and runs it as one loop per row (a dot product, then a scatter; SSE2 assembly on amd64, with no check per index once the index array's range is known to fit); the two do the same work, so the differences are within this machine's noise",
	"batax/numpy":   "dense BLAS matrix-vector products (dgemv) in the hand-optimized order",
	"batax/torch":   "hand-optimized βAᵀ(Ax) with tuned CSR×dense kernels",
	"ttm/duckdb":    "TTM is a single join + GROUP BY, which DuckDB's vectorized engine handles very well (the paper saw the same); storel's plan scatters a column of B per fiber entry into a dense row per (i,j), building one output row per fiber",
	"summmm/duckdb": "DuckDB runs one SUM over the join, with no GROUP BY and no product matrix; its vectorized join beats a naive plan, though it does not push the sum below the join either (paper §6.1)",
	"batax/duckdb":  "DuckDB also builds the Σᵢ nnz(row i)² rows of the self-join (it cannot factorize, paper §6.1), but with vectorized hash joins; only the factorized plan wins this back",
	"mmm/taco":      "TACO compiles C code specialized to this expression and these formats with `cc -O3 -ffast-math`; MMM offers storel no rewrite, so it is loop speed against loop speed",
	"summmm/taco":   "TACO compiles C code specialized to this expression and these formats with `cc -O3 -ffast-math`; its loops do every product (no factorization), which costs little on small or very sparse inputs",
	"batax/taco":    "TACO compiles C code specialized to this expression and these formats with `cc -O3 -ffast-math`; its loops do Σᵢ nnz(row i)² products (no factorization), which costs little on small or very sparse inputs",
	"ttm/taco":      "TACO compiles C code specialized to this expression and these formats (CSF·CSR) with `cc -O3 -ffast-math`; TTM offers storel no rewrite, so it is loop speed against loop speed",
	"mttkrp/taco":   "TACO compiles C code specialized to this expression and these formats with `cc -O3 -ffast-math`; storel's plan intersects (i,k) fibers with D's rows by a sorted merge (see the DuckDB line)",
	"spmv/scipy":    "SciPy's csr_matvec is a tight C++ loop with 32-bit indices; storel's CSR rows run the same loop in SSE2 assembly on amd64 with no check per index (the index array's range is checked once, when the tensor is built), reading the column indices from a 32-bit copy made before the timed runs (the prepare phase, in load + build), so 12 bytes per non-zero as SciPy's loop, and allocate the result on each run; the two are within this machine's noise of each other; SpMV offers no rewrite (on pattern matrices see the `storel (csr+pattern)` line, which reads no values)",
	"spmv/numpy":    "NumPy's dense A @ x is BLAS dgemv, which streams every entry of a small matrix at full memory bandwidth; it only fits the leading blocks and the narrowest matrices",
	"spmv/torch":    "PyTorch's CSR kernel over a one-column dense matrix (its CSR×vector needs MKL, which Debian's build lacks)",
	"spmv/duckdb":   "DuckDB's vectorized hash join and hash aggregation over the non-zeros",
	"spmv/taco":     "TACO compiles C code specialized to this expression and these formats with `cc -O3 -ffast-math` and 32-bit indices; SpMV offers storel no rewrite, so it is loop speed against loop speed",
	"mttkrp/duckdb": "storel's plan (see `storel explain`) intersects each (i,k) fiber of the CSF tensor with row j of D for each entry (k,j) of C: 1-2×10⁵ merges of one or two keys, each seek in a long row of D starting from a bucket table built per run (engine/seekindex.go), about one probe, as DuckDB's hash join costs; the time goes to the loop nest's work per fiber and row and to cache misses in D, not to the merge: with D stored dense, hashed or transposed (csc), free of any build, the optimizer's plans take 1.3-2.1x (wordnet) and 2.7-3.8x (orghs) the csr plan's CPU time per execution (one thread)",
}

// writeHeadline summarizes the end-to-end ratios per kernel and peer.
func writeHeadline(w *mdWriter, ms []*Measurement, mode string) {
	if len(ms) == 0 {
		return
	}
	w.p("## Headline: peer time / storel time (end to end, execution only)")
	w.p("")
	w.p("Geometric mean over the inputs where both answers checked; above 1 storel is faster, below 1 the peer is.")
	w.p("")
	byKernel := groupBy(ms, func(m *Measurement) string { return m.Kernel })
	var rows [][]string
	type loss struct {
		kernel, input, peer string
		ratio               float64
	}
	var losses []loss
	// storel's other storage (TTM's CSF·CSR, SpMV's and BATAX's
	// csr+pattern, SpMV's sell) against
	// its Table 3 storage, in a table of their own.
	var variants [][]string
	for _, kernel := range byKernel.keys {
		kms := byKernel.by[kernel]
		byInput := groupBy(kms, func(m *Measurement) string { return m.Input })
		for _, system := range systemsOf(kms) {
			if system == "storel" || system == "oracle" {
				continue
			}
			row, ratios := ratioRow(byInput, kernelTitle(kernel), system, "storel")
			if strings.HasPrefix(system, "storel") {
				variants = append(variants, row)
				continue
			}
			rows = append(rows, row)
			for _, r := range ratios {
				if r.ratio < 1 {
					losses = append(losses, loss{kernel, r.input, system, r.ratio})
				}
			}
		}
	}
	w.table([]string{"kernel", "peer", "geo. mean", "range", "inputs"}, rows)
	if len(variants) > 0 {
		w.p("storel with other storage, its time / storel's time with the storage above (below 1 the other storage is faster):")
		w.p("")
		w.table([]string{"kernel", "storel storage", "geo. mean", "range", "inputs"}, variants)
	}

	w.p("## Where storel loses, and why")
	w.p("")
	if len(losses) == 0 {
		w.p("No peer was faster than storel on any checked end-to-end input.")
		w.p("")
		return
	}
	switch mode {
	case "interp":
		w.p("The first reason everywhere in this run: storel executed in the reference interpreter (see the note above), " +
			"which walks boxed values and builds dictionaries entry by entry; the peers run compiled, tuned kernels. " +
			"The reasons that will remain once storel's engine runs the optimized plans:")
		w.p("")
	case "naive":
		w.p("The first reason in this run: storel executed the naive plan (see the note above). For SumMMM, BATAX and MTTKRP the naive plan " +
			"does asymptotically more work than the factorized one (BATAX: Σᵢ nnz(row i)² instead of 2·nnz; SumMMM: the whole product instead of two vector sums), " +
			"and the storage mappings are composed as the naive plan states them (let A = mapping in …), not fused into the loops. " +
			"The peers' reasons that will remain once the optimizer's plans run:")
		w.p("")
	}
	byKey := map[string][]loss{}
	var keys []string
	for _, l := range losses {
		k := l.kernel + "/" + l.peer
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], l)
	}
	for _, k := range keys {
		ls := byKey[k]
		var ins []string
		for _, l := range ls {
			ins = append(ins, fmt.Sprintf("%s %.2g×", l.input, l.ratio))
		}
		reason := lossReasons[k]
		if reason == "" {
			reason = "a library kernel tuned for this one operation"
		}
		kernel, peer, _ := strings.Cut(k, "/")
		w.p("- **%s vs %s** (%s): %s.", kernelTitle(kernel), peer, strings.Join(ins, ", "), reason)
	}
	w.p("")
}

// inputRatio is one input's time ratio of two systems.
type inputRatio struct {
	input string
	ratio float64
}

// ratioRow compares system with base over the inputs where both answers
// checked: a table row (title, system, geometric mean of system's time /
// base's, range, number of inputs) and the ratio on each input.
func ratioRow(byInput *group, title, system, base string) ([]string, []inputRatio) {
	var ratios []inputRatio
	sum := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, in := range byInput.keys {
		b, ok1 := execOK(find(byInput.by[in], base))
		s, ok2 := execOK(find(byInput.by[in], system))
		if !ok1 || !ok2 || b <= 0 || s <= 0 {
			continue
		}
		r := s / b
		ratios = append(ratios, inputRatio{in, r})
		sum += math.Log(r)
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if len(ratios) == 0 {
		return []string{title, system, "—", "—", "0"}, nil
	}
	return []string{title, system, fmt.Sprintf("%.3g×", math.Exp(sum/float64(len(ratios)))),
		fmt.Sprintf("%.3g× – %.3g×", lo, hi), fmt.Sprint(len(ratios))}, ratios
}

// writePhases lists storel's phases for a kernel's inputs.
func writePhases(w *mdWriter, ms []*Measurement) {
	var rows [][]string
	for _, m := range ms {
		if !strings.HasPrefix(m.System, "storel") || m.Status == StatusSkip {
			continue
		}
		rows = append(rows, []string{m.Input, m.System, fmtPtr(m.Load), fmtPtr(m.Optimize), fmtPtr(m.Compile), fmtPtr(m.Execute), string(m.Status)})
	}
	if len(rows) == 0 {
		return
	}
	w.p("<details><summary>storel's phases (ms)</summary>")
	w.p("")
	w.table([]string{"input", "system", "load + build", "optimize", "compile", "execute", "status"}, rows)
	w.p("</details>")
	w.p("")
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmtNum(*p)
}

func writeNotes(w *mdWriter, notes []string) {
	if len(notes) == 0 {
		return
	}
	for _, n := range notes {
		if len(n) > 400 {
			n = n[:400] + "…"
		}
		w.p("- %s", strings.ReplaceAll(n, "|", "\\|"))
	}
	w.p("")
}

// writeRoundsNote says how many e2e times are medians over rounds, when
// any is (results merged from runs before rounds have one round).
func writeRoundsNote(w *mdWriter, ms []*Measurement) {
	n := 0
	for _, m := range ms {
		if strings.Contains(m.Note, roundsNote) {
			n++
		}
	}
	if n == 0 {
		return
	}
	w.p("%d of these %d times are medians over rounds: each case's systems ran in turn (storel, then each peer, then storel again, ...; `--rounds`), "+
		"each run reporting the median of its own repeats, so that the machine's drift during a case falls on all of them alike. "+
		"Only the systems within %d× of the case's fastest took part (the far slower ones, and TACO, the reference interpreter and runs longer than %s, ran once).", n, len(ms), roundsWithin, roundWallBudget)
	w.p("")
}

// writeTacoNote says how TACO was timed and checked, when it ran.
func writeTacoNote(w *mdWriter, ms []*Measurement) {
	for _, m := range ms {
		if strings.HasPrefix(m.System, "taco") && m.Status != StatusSkip {
			w.p("TACO's times are the median over separate runs of `taco -time=1` (up to the repeat count while they take under %s in all): "+
				"its `-time=N` repeats `compute()`, which TACO skips once the result is up to date, so only the first of its N runs does work. "+
				"Its execute time is assembly plus compute, as the paper counts it. "+
				"TACO writes six significant digits, so its answers are checked with a relative tolerance of 1e-5 (1e-7 for the others).", processRepeatBudget)
			w.p("")
			return
		}
	}
}

// writeExperimentNotes lists an experiment's notes, each led by label.
func writeExperimentNotes(w *mdWriter, notes []Note, experiment, label string) {
	n := 0
	for _, note := range notes {
		if note.Experiment == experiment {
			w.p("- **%s:** %s.", label, strings.TrimSuffix(note.Text, "."))
			n++
		}
	}
	if n > 0 {
		w.p("")
	}
}

// writeSweepLike writes a table and a plot of time against x per system,
// one per kernel and input size.
func writeSweepLike(w *mdWriter, dir string, ms []*Measurement, name, xlabel string) {
	byKernel := groupBy(ms, func(m *Measurement) string { return m.Kernel + " " + m.Input })
	sizes := map[string]int{}
	for _, key := range byKernel.keys {
		kernel, _, _ := strings.Cut(key, " ")
		sizes[kernel]++
	}
	for _, key := range byKernel.keys {
		kms := byKernel.by[key]
		kernel, size, _ := strings.Cut(key, " ")
		w.p("### %s, %s", kernelTitle(kernel), size)
		w.p("")
		systems := systemsOf(kms)
		byX := groupBy(kms, func(m *Measurement) string { return fmt.Sprintf("%g", m.X) })
		var rows [][]string
		var noteKeys []string
		noteXs := map[string][]string{}
		ss := make([]series, len(systems))
		for i, s := range systems {
			ss[i].name = s
		}
		for _, x := range byX.keys {
			row := []string{x}
			for si, s := range systems {
				m := find(byX.by[x], s)
				if m == nil {
					row = append(row, "")
					continue
				}
				row = append(row, cell(m))
				if m.Note != "" && m.Status != StatusOK && m.Status != StatusTimeout {
					// One line per system and reason, listing its xs.
					key := s + "\x00" + m.Note
					if _, seen := noteXs[key]; !seen {
						noteKeys = append(noteKeys, key)
					}
					noteXs[key] = append(noteXs[key], x)
				}
				if v, ok := execOK(m); ok {
					ss[si].xs = append(ss[si].xs, m.X)
					ss[si].ys = append(ss[si].ys, v)
				}
			}
			rows = append(rows, row)
		}
		w.table(append([]string{xlabel}, systems...), rows)
		var notes []string
		for _, key := range noteKeys {
			s, note, _ := strings.Cut(key, "\x00")
			notes = append(notes, fmt.Sprintf("%s at %s %s: %s", s, xlabel, strings.Join(noteXs[key], ", "), note))
		}
		if name == "sweep" {
			writeSweepLosses(w, byX, systems)
		}
		writeNotes(w, notes)
		png := fmt.Sprintf("%s-%s.png", name, kernel)
		if sizes[kernel] > 1 {
			png = fmt.Sprintf("%s-%s-%s.png", name, kernel, safe(size))
		}
		if err := linePlot(filepath.Join(dir, png), fmt.Sprintf("%s %s: execution time", kernelTitle(kernel), size), xlabel, "ms (log)", true, dropOracle(ss)); err != nil {
			w.p("(plot failed: %v)", err)
		} else if _, err := os.Stat(filepath.Join(dir, png)); err == nil {
			w.p("![%s](%s)", png, png)
			w.p("")
		}
	}
}

func writeOptimizer(w *mdWriter, ms []*Measurement) {
	w.p("## §6.4 Optimizer cost (Table 4)")
	w.p("")
	w.p("`storel explain` with Table 3's formats on the smallest input of each kernel; figures are parsed from its output " +
		"(summed over stages when it reports several), and \"optimize (run)\" is the optimize phase of `storel run --timings`. " +
		"The full explain outputs are in explain/.")
	w.p("")
	byKernel := groupBy(ms, func(m *Measurement) string { return m.Kernel })
	var rows [][]string
	var notes []string
	for _, k := range byKernel.keys {
		e := find(byKernel.by[k], "storel explain")
		r := find(byKernel.by[k], "storel run")
		num := func(v float64) string {
			if v == math.Trunc(v) && v < 1e15 {
				return fmt.Sprintf("%d", int64(v))
			}
			return fmtNum(v)
		}
		fig := func(name string) string {
			if e == nil || e.Figures == nil {
				return "—"
			}
			v, ok := e.Figures[name]
			if !ok {
				return "—"
			}
			if n := e.Figures[name+"#2"]; n != 0 {
				var parts []string
				for i := 1; ; i++ {
					x, ok := e.Figures[fmt.Sprintf("%s#%d", name, i)]
					if !ok {
						break
					}
					parts = append(parts, num(x))
				}
				return num(v) + " (" + strings.Join(parts, " + ") + ")"
			}
			return num(v)
		}
		opt := "—"
		if r != nil {
			opt = fmtPtr(r.Optimize)
			if r.Status != StatusOK {
				opt += " (" + string(r.Status) + ")"
			}
		}
		in := ""
		if e != nil {
			in = e.Input
			if e.Note != "" {
				notes = append(notes, k+": "+e.Note)
			}
		}
		stages := "—"
		if e != nil {
			type st struct {
				name string
				k    float64
			}
			var sts []st
			for key, v := range e.Figures {
				if name, ok := strings.CutPrefix(key, "stage:"); ok {
					sts = append(sts, st{name, v})
				}
			}
			sort.Slice(sts, func(i, j int) bool { return sts[i].k < sts[j].k })
			var names []string
			for _, x := range sts {
				names = append(names, x.name)
			}
			if len(names) > 0 {
				stages = strings.Join(names, " + ")
			}
		}
		rows = append(rows, []string{kernelTitle(k), in, opt, stages, fig("time_ms"), fig("iterations"), fig("nodes"), fig("classes"), fig("memo")})
	}
	w.table([]string{"kernel", "input", "optimize (run) ms", "stages", "explain time ms", "iterations", "e-nodes", "e-classes", "memo"}, rows)
	writeNotes(w, notes)
}

func writeOverhead(w *mdWriter, dir string, ms []*Measurement) {
	w.p("## §6.5 Optimization overhead (Fig. 10)")
	w.p("")
	w.p("BATAX on a random 100×N matrix (CSR). Total = optimize + compile + execute (loading excluded), for the plans Fig. 10 compares: " +
		"the full storage-aware optimization (`--plan optimized`), storage-independent optimizations only (`--plan logical`: the program optimized " +
		"without its storage mapping, then composed with it naively) and, as a baseline, the naive plan, which has no optimization to pay for. " +
		"Each run is limited to the paper's five minutes (or to --timeout, if shorter).")
	w.p("")
	byX := groupBy(ms, func(m *Measurement) string { return fmt.Sprintf("%g", m.X) })
	systems := systemsOf(ms)
	ss := make([]series, len(systems))
	for i, s := range systems {
		ss[i].name = s + " (total)"
	}
	var rows [][]string
	for _, x := range byX.keys {
		row := []string{x}
		for si, s := range systems {
			m := find(byX.by[x], s)
			if m == nil || m.Execute == nil || (m.Status != StatusOK) {
				st := "—"
				if m != nil {
					st = string(m.Status)
				}
				row = append(row, st, "")
				continue
			}
			total := val(m.Optimize) + val(m.Compile) + *m.Execute
			if math.IsNaN(total) {
				total = *m.Execute
			}
			row = append(row, fmtNum(total), fmt.Sprintf("%s + %s + %s", fmtPtr(m.Optimize), fmtPtr(m.Compile), fmtPtr(m.Execute)))
			ss[si].xs = append(ss[si].xs, m.X)
			ss[si].ys = append(ss[si].ys, total)
		}
		rows = append(rows, row)
	}
	var header []string
	header = append(header, "N")
	for _, s := range systems {
		header = append(header, s+" total", "opt + compile + exec")
	}
	w.table(header, rows)
	if err := linePlot(filepath.Join(dir, "overhead-batax.png"), "BATAX 100×N: total time including optimization", "N", "ms (log)", true, ss); err != nil {
		w.p("(plot failed: %v)", err)
	} else if _, err := os.Stat(filepath.Join(dir, "overhead-batax.png")); err == nil {
		w.p("![overhead](overhead-batax.png)")
		w.p("")
	}
}

func writeThreads(w *mdWriter, ms []*Measurement) {
	w.p("## Multi-thread scaling")
	w.p("")
	w.p("Execution time with N threads (speed-up against the first count) of SpMV, BATAX and MMM on the two largest matrices of this run " +
		"and of MTTKRP on the largest 3-tensor (as e2e runs it, and with dense rank-16 factors as cpd does); " +
		"PyTorch CPU at the same thread counts where it has the kernel. " +
		"The thread counts run in turn, round after round (`--rounds`), each a median over its rounds, " +
		"and a short run repeats more in later rounds, so that another process waking up on a small machine falls on every count alike.")
	w.p("")
	// A row per case and system family: "storel N thread(s)", "torch N thread(s)".
	family := func(m *Measurement) string {
		name, _, _ := strings.Cut(m.System, " ")
		return name
	}
	byCase := groupBy(ms, func(m *Measurement) string { return m.Kernel + " on " + m.Input + "\x00" + family(m) })
	var counts []int
	for _, m := range ms {
		if !slices.Contains(counts, m.Threads) {
			counts = append(counts, m.Threads)
		}
	}
	header := []string{"case", "system"}
	for _, t := range counts {
		header = append(header, fmt.Sprintf("%d thread(s)", t))
	}
	var rows [][]string
	for _, c := range byCase.keys {
		cms := byCase.by[c]
		name, fam, _ := strings.Cut(c, "\x00")
		row := []string{name, fam}
		base := math.NaN()
		for _, t := range counts {
			i := slices.IndexFunc(cms, func(m *Measurement) bool { return m.Threads == t })
			if i < 0 {
				row = append(row, "")
				continue
			}
			s := cell(cms[i])
			if v, ok := execOK(cms[i]); ok {
				if math.IsNaN(base) {
					base = v
				} else {
					s += fmt.Sprintf(" (%.2f×)", base/v)
				}
			}
			row = append(row, s)
		}
		rows = append(rows, row)
	}
	w.table(header, rows)
}

// writeSweepLosses says at which densities a peer beats storel's best
// storage (the faster of its sparse and dense runs).
func writeSweepLosses(w *mdWriter, byX *group, systems []string) {
	var lines []string
	for _, peer := range systems {
		if strings.HasPrefix(peer, "storel") || peer == "oracle" {
			continue
		}
		var at []string
		for _, x := range byX.keys {
			best := math.Inf(1)
			for _, s := range systems {
				if strings.HasPrefix(s, "storel") {
					if v, ok := execOK(find(byX.by[x], s)); ok {
						best = math.Min(best, v)
					}
				}
			}
			p, ok := execOK(find(byX.by[x], peer))
			if !ok {
				if m := find(byX.by[x], peer); m != nil && m.Status == StatusNoCheck && m.Execute != nil {
					p, ok = *m.Execute, true // storel gave no answer at all
				}
			}
			switch {
			case ok && math.IsInf(best, 1):
				at = append(at, x+" (storel gave no answer)")
			case ok && p < best:
				at = append(at, fmt.Sprintf("%s (%.2g×)", x, best/p))
			}
		}
		if len(at) > 0 {
			lines = append(lines, fmt.Sprintf("%s is faster than storel's best storage at density %s", peer, strings.Join(at, ", ")))
		}
	}
	if len(lines) == 0 {
		w.p("storel (its better storage) is at least as fast as every peer at every density.")
	} else {
		w.p("Where storel loses: %s (× = how many times faster).", strings.Join(lines, "; "))
	}
	w.p("")
}

// writeBuilds says which storel builds the measurements come from (a
// --merge run replaces only the cases it runs again, so several can
// appear), each with the date of the run that measured it and what it
// measured.
func writeBuilds(w *mdWriter, d *reportData, all []*Measurement) {
	builds := groupBy(all, func(m *Measurement) string {
		if m.StorelBuild == "" {
			return "unrecorded"
		}
		return m.StorelBuild
	})
	var rows [][]string
	for _, b := range builds.keys {
		var what []string
		byExp := groupBy(builds.by[b], func(m *Measurement) string { return m.Experiment })
		for _, e := range byExp.keys {
			kernels := groupBy(byExp.by[e], func(m *Measurement) string { return kernelTitle(m.Kernel) }).keys
			what = append(what, fmt.Sprintf("%s (%s)", e, strings.Join(kernels, ", ")))
		}
		date := runDate(d.Runs, b)
		if date == "" {
			date = "not recorded"
		}
		rows = append(rows, []string{"`" + b + "`", date, strings.Join(what, "; ")})
	}
	if len(rows) == 1 {
		w.p("storel build measured: %s (%s).", rows[0][0], rows[0][1])
		w.p("")
		return
	}
	w.p("The storel builds measured (compare times within one build; `results.csv` lists every figure with its build and date):")
	w.p("")
	w.table([]string{"storel build", "date", "what it measured"}, rows)
}

// writeCSV writes every measurement's execute time as dir/results.csv:
// date, commit, experiment, kernel, input, x, system, threads, status, ms.
func writeCSV(dir string, d *reportData) error {
	var sb strings.Builder
	cw := csv.NewWriter(&sb)
	cw.Write([]string{"date", "commit", "experiment", "kernel", "input", "x", "system", "threads", "status", "ms"})
	for i := range d.Results {
		m := &d.Results[i]
		commit, _, _ := strings.Cut(m.StorelBuild, " ")
		x, ms := "", ""
		if m.X != 0 {
			x = fmt.Sprintf("%g", m.X)
		}
		if m.Execute != nil {
			ms = fmt.Sprintf("%g", *m.Execute)
		}
		cw.Write([]string{runDate(d.Runs, m.StorelBuild), commit, m.Experiment, m.Kernel, m.Input, x, m.System, fmt.Sprint(m.Threads), string(m.Status), ms})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "results.csv"), []byte(sb.String()))
}
