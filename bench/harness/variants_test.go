package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as storel-bench's subcommands
// (Config.Self): the variants experiment runs `SELF handloop` and
// `SELF oracle`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "handloop" || os.Args[1] == "oracle") {
		run := HandLoop
		if os.Args[1] == "oracle" {
			run = Oracle
		}
		if err := run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// buildStorel builds the storel command of this checkout into dir.
func buildStorel(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "storel")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/storel/storel/cmd/storel").CombinedOutput()
	if err != nil {
		t.Fatalf("building storel: %v\n%s", err, out)
	}
	return bin
}

// writeStandIns writes tiny stand-ins for bcsstk16 and orghs under dir
// (their names, real dimensions in the header, entries in a small
// leading block) and shrinks the variants' --quick blocks to them.
func writeStandIns(t *testing.T, dir string) {
	t.Helper()
	m := RandomSparse(40, 40, 0.15, 7)
	var b strings.Builder
	fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate real general\n4884 4884 %d\n", len(m.Vals))
	for p, v := range m.Vals {
		fmt.Fprintf(&b, "%d %d %g\n", m.Coords[0][p]+1, m.Coords[1][p]+1, v)
	}
	writeGz(t, filepath.Join(dir, "bcsstk16.mtx.gz"), b.String())
	b.Reset()
	seen := map[[3]int]bool{}
	for p := 0; p < 300; p++ {
		c := [3]int{(p * 7) % 30, (p * 13) % 25, (p * 5) % 20}
		if !seen[c] {
			seen[c] = true
			fmt.Fprintf(&b, "%d %d %d %g\n", c[0]+1, c[1]+1, c[2]+1, float64(1+p%9)/8)
		}
	}
	writeGz(t, filepath.Join(dir, "orghs_gene_go_evidence_direct.tns.gz"), b.String())
	saved := variantQuickLimits
	variantQuickLimits = map[string][]int64{"bcsstk16": {40, 40}, "orghs": {30, 25, 20}}
	t.Cleanup(func() { variantQuickLimits = saved })
}

// tinyDataConfig is a quick harness over stand-ins for the real data
// (writeStandIns) with the storel of this checkout: its Config, without
// experiments, and its OutDir.
func tinyDataConfig(t *testing.T) (Config, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeStandIns(t, data)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	return Config{Quick: true, Repo: repo, DataDir: data, OutDir: out, TmpDir: filepath.Join(out, "tmp"),
		Storel: buildStorel(t, dir), Self: testSelf(t), OracleTimeout: 30 * time.Second,
		OracleMaxNNZ: 1 << 20, Repeat: 1}, out
}

func testSelf(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// TestVariantsOnTinyData runs the whole variants experiment with the real
// storel on tiny data: every kernel's Go loop checked by the reference
// interpreter, every form checked against the Go loop, its figures
// (estimated costs, ratios) recorded, and the report's section with a
// table per kernel and a row per form.
func TestVariantsOnTinyData(t *testing.T) {
	cfg, out := tinyDataConfig(t)
	cfg.Timeout, cfg.Rounds, cfg.FactorDensity, cfg.Experiments = 30*time.Second, 2, 0.1, []string{"variants"}
	h := New(cfg)
	if err := h.RunAll(); err != nil {
		t.Fatal(err)
	}
	if len(h.Failures) > 0 {
		t.Errorf("failures: %q", h.Failures)
	}
	byKernel := map[string][]Measurement{}
	for _, m := range h.Results {
		byKernel[m.Kernel] = append(byKernel[m.Kernel], m)
	}
	for _, k := range variantKernels {
		ms := byKernel[k.kernel]
		var systems []string
		for _, m := range ms {
			systems = append(systems, m.System)
		}
		// The kernel's loop, the layout loops in their forms' order, the
		// oracle, the forms.
		want := []string{variantLoopSystem}
		for _, f := range k.forms {
			if sys := layoutLoopSystem(k.kernel, f.loop); f.loop != "" && !slices.Contains(want, sys) {
				want = append(want, sys)
			}
		}
		loops := len(want)
		want = append(want, "oracle")
		for _, f := range k.forms {
			want = append(want, f.name)
		}
		if !slices.Equal(systems, want) {
			t.Errorf("%s: systems %q, want %q", k.kernel, systems, want)
			continue
		}
		if o := ms[loops]; ms[0].CheckedAgainst != "(reference)" || o.Status != StatusOK || o.CheckedAgainst != variantLoopSystem {
			t.Errorf("%s: the Go loop %q is not the reference the oracle confirms (%s %q %s)", k.kernel, ms[0].CheckedAgainst, o.Status, o.CheckedAgainst, o.Note)
		}
		execOf := map[string]float64{}
		for _, m := range ms[:loops] {
			if m.Status != StatusOK || m.Execute == nil || m.System != variantLoopSystem && m.CheckedAgainst != variantLoopSystem {
				t.Errorf("%s %s: %s against %q (%s)", k.kernel, m.System, m.Status, m.CheckedAgainst, m.Note)
				continue
			}
			execOf[m.System] = *m.Execute
		}
		fastest := math.Inf(1)
		for _, m := range ms[loops+1:] {
			if m.Status != StatusOK || m.CheckedAgainst != variantLoopSystem {
				t.Errorf("%s %s: %s against %q (%s)", k.kernel, m.System, m.Status, m.CheckedAgainst, m.Note)
				continue
			}
			if m.Figures["cost"] <= 0 || m.Figures["naive_cost"] <= 0 || m.Optimize == nil {
				t.Errorf("%s %s: figures %v, optimize %v", k.kernel, m.System, m.Figures, m.Optimize)
			}
			if m.Form == nil || m.Form.Explain == "" || !strings.HasPrefix(m.Form.Program, "bench/programs/variants/") {
				t.Errorf("%s %s: form %+v", k.kernel, m.System, m.Form)
			} else if _, err := os.Stat(filepath.Join(h.stageDir(), m.Form.Explain)); err != nil {
				t.Errorf("%s %s: explain text: %v", k.kernel, m.System, err)
			}
			fastest = min(fastest, m.Figures[figVsFastest])
			if got, want := m.Figures[figVsLoop], *m.Execute / *ms[0].Execute; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s %s: %g x the Go loop, want %g", k.kernel, m.System, got, want)
			}
			own := variantLoopSystem
			if f := formNamed(k.kernel, m.System); f.loop != "" {
				own = layoutLoopSystem(k.kernel, f.loop)
			}
			if m.Form != nil && m.Form.LayoutLoop != "" != (own != variantLoopSystem) {
				t.Errorf("%s %s: layout loop %q, want %q", k.kernel, m.System, m.Form.LayoutLoop, own)
			}
			if got, want := m.Figures[figVsLayoutLoop], *m.Execute/execOf[own]; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s %s: %g x %s, want %g", k.kernel, m.System, got, own, want)
			}
			if m.Figures[figVsFastest] < 1 {
				t.Errorf("%s %s: %g x the fastest form", k.kernel, m.System, m.Figures[figVsFastest])
			}
		}
		if fastest != 1 {
			t.Errorf("%s: the fastest form is %g x the fastest", k.kernel, fastest)
		}
	}
	if _, err := h.WriteReport(time.Second, true); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(report[strings.Index(string(report), "## Variants"):])
	for _, k := range variantKernels {
		title := kernelTitle(k.kernel) + " on "
		at := strings.Index(section, "### "+title)
		if at < 0 {
			t.Errorf("no table for %s", k.kernel)
			continue
		}
		table := section[at:]
		if end := strings.Index(table[4:], "### "); end >= 0 {
			table = table[:end+4]
		}
		rows := tableRows(table)
		loops := len(rows) - len(k.forms)
		if loops < 1 || rows[0][0] != variantLoopSystem {
			t.Errorf("%s: rows %q", k.kernel, rows)
			continue
		}
		for _, r := range rows[1:loops] {
			if !strings.HasPrefix(r[0], variantLoopSystem+" (") || r[5] != "1" || !strings.Contains(table, "- "+r[0]+": ") {
				t.Errorf("%s: layout loop row %q, or no note naming it", k.kernel, r)
			}
		}
		for i, f := range k.forms {
			if r := rows[i+loops]; r[0] != f.name || !strings.Contains(r[1], f.program+".sdql") || r[2] == "" {
				t.Errorf("%s: row %q for form %q", k.kernel, r, f.name)
			}
		}
	}
	for _, want := range []string{"Forms past 1.5× the kernel's fastest form", "Forms past 1.25× the Go loop", handLoops["mttkrp"]} {
		if !strings.Contains(section, want) {
			t.Errorf("the report's section lacks %q", want)
		}
	}
	var saved reportData
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err == nil {
		err = json.Unmarshal(b, &saved)
	}
	if err != nil || len(saved.Results) != len(h.Results) || saved.Results[2].Form == nil || saved.Machine == "" && h.cfg.Machine != "" {
		t.Errorf("results.json: %v, %d results", err, len(saved.Results))
	}
}

// tableRows returns the cells of the data rows of the first Markdown
// table in text.
func tableRows(text string) [][]string {
	var rows [][]string
	header := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "|") {
			if header > 0 {
				break
			}
			continue
		}
		header++
		if header <= 2 {
			continue // the header and its separator
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestVariantsReportWrongAndBrokenForms runs SpMV's Go loop against three
// forms with the real storel: a right one, one whose program computes
// something else (a wrong answer: a failure of the run) and one storel
// rejects (reported as an error, not a failure, and not dropped).
func TestVariantsReportWrongAndBrokenForms(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	repo := filepath.Join(dir, "repo")
	progs := filepath.Join(repo, "bench", "programs", "variants")
	for _, d := range []string{data, progs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeStandIns(t, data)
	for name, text := range map[string]string{
		"spmv_tuple": "CREATE real ARRAY x(A_dim2);\nCREATE TENSOR y AS sum(<(i,j), a> in A) { i -> a * x(j) };\n",
		"spmv_twice": "CREATE real ARRAY x(A_dim2);\nCREATE TENSOR y AS sum(<(i,j), a> in A) { i -> 2.0 * a * x(j) };\n",
		"spmv_bad":   "CREATE real ARRAY x(A_dim2);\nCREATE TENSOR y AS sum(<(i,j), a> in A) { i -> a * x(j) \n",
	} {
		if err := os.WriteFile(filepath.Join(progs, name+".sdql"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := variantKernels
	variantKernels = []variantKernel{{"spmv", "A", 2, []variantForm{
		vf("right", "spmv_tuple", fm{"A": "csr"}, "x"),
		vf("twice", "spmv_twice", fm{"A": "csr"}, "x"),
		vf("unparsable", "spmv_bad", fm{"A": "csr"}, "x"),
	}}}
	t.Cleanup(func() { variantKernels = saved })
	out := filepath.Join(dir, "out")
	h := New(Config{Quick: true, Repo: repo, DataDir: data, OutDir: out, TmpDir: filepath.Join(out, "tmp"),
		Storel: buildStorel(t, dir), Self: testSelf(t), Timeout: 30 * time.Second, Repeat: 1, Rounds: 1, Experiments: []string{"variants"}})
	if err := h.RunAll(); err != nil {
		t.Fatal(err)
	}
	status := map[string]Status{}
	for _, m := range h.Results {
		status[m.System] = m.Status
	}
	want := map[string]Status{variantLoopSystem: StatusOK, "right": StatusOK, "twice": StatusWrong, "unparsable": StatusError}
	for s, st := range want {
		if status[s] != st {
			t.Errorf("%s: %s, want %s", s, status[s], st)
		}
	}
	if len(h.Failures) != 1 || !strings.Contains(h.Failures[0], "twice") {
		t.Errorf("failures %q, want the wrong form's", h.Failures)
	}
	if _, err := h.WriteReport(time.Second, true); err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(out, "REPORT.md"))
	rows := tableRows(string(report[strings.Index(string(report), "### SpMV on"):]))
	cells := map[string]string{}
	for _, r := range rows {
		cells[r[0]] = r[2]
	}
	if cells["twice"] != "**WRONG**" || cells["unparsable"] != "error" || cells["right"] == "" {
		t.Errorf("report cells %q", cells)
	}
	if !strings.Contains(string(report), "Forms without a checked time** (2") {
		t.Errorf("the report does not list the two forms without a time")
	}
}

func TestVariantRatiosAndTimeoutRows(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	ms := []Measurement{
		{Experiment: "variants", Kernel: "ttv", Input: "t", System: variantLoopSystem, Status: StatusOK, Execute: v(2)},
		{Experiment: "variants", Kernel: "ttv", Input: "t", System: "a", Status: StatusOK, Execute: v(3)},
		{Experiment: "variants", Kernel: "ttv", Input: "t", System: "b", Status: StatusOK, Execute: v(6)},
		{Experiment: "variants", Kernel: "ttv", Input: "t", System: "c", Status: StatusTimeout, Note: "no answer within 20s"},
	}
	setVariantRatios(ms)
	if ms[1].Figures[figVsFastest] != 1 || ms[2].Figures[figVsFastest] != 2 || ms[2].Figures[figVsLoop] != 3 || ms[3].Figures != nil || ms[0].Figures != nil {
		t.Errorf("figures %v %v %v %v", ms[0].Figures, ms[1].Figures, ms[2].Figures, ms[3].Figures)
	}
	text := variantsSection(ms)
	for _, want := range []string{"| c |  | timeout | — | — |", "| b |  | 6.00 | **2.00** | **3.00** |", "- TTV: b (2×)", "- TTV: a (1.5×); b (3×)", "Forms without a checked time** (1", "c: no answer within 20s"} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
}

// variantsSection is the report's variants section over ms.
func variantsSection(ms []Measurement) string {
	w := &mdWriter{}
	var ptrs []*Measurement
	for i := range ms {
		ptrs = append(ptrs, &ms[i])
	}
	writeVariants(w, ptrs, nil)
	return w.sb.String()
}

func TestVariantsLeaveOutMissingInputs(t *testing.T) {
	dir := t.TempDir()
	h := New(Config{Quick: true, DataDir: dir, OutDir: dir, TmpDir: dir, Timeout: time.Second, Experiments: []string{"variants"}})
	if err := h.runVariants(); err != nil {
		t.Fatal(err)
	}
	if len(h.Results) != 0 || !slices.Equal(h.Missing, []string{"bcsstk16", "orghs"}) {
		t.Errorf("results %d, missing %q", len(h.Results), h.Missing)
	}
	left := 0
	for _, n := range h.Notes {
		if n.Experiment == "variants" && strings.Contains(n.Text, "is left out") {
			left++
		}
	}
	if left != 2 {
		t.Errorf("notes %q", h.Notes)
	}
}

func TestVariantExplainCosts(t *testing.T) {
	for _, text := range []string{
		"estimated cost: naive 1.22e+07 (every dictionary built as a hash map), optimized 8.08e+04 (150x cheaper)\n",
		"estimated cost: naive 1.22e+07 (every dictionary built as a hash map), chosen 8.08e+04 (150x cheaper)\nplans compared:\n  * optimized   8.08e+04\n",
	} {
		figs := parseVariantExplain(text)
		if figs["naive_cost"] != 1.22e7 || figs["cost"] != 8.08e4 {
			t.Errorf("%q: %v", text, figs)
		}
	}
	if figs := parseVariantExplain("estimated cost: unknown\n"); len(figs) != 0 {
		t.Errorf("no costs: %v", figs)
	}
}

// TestMissedSaysWhy: a form whose layout does more work than the fastest
// form's says what that work is where it misses a target; others do not.
func TestMissedSaysWhy(t *testing.T) {
	n := 0
	for _, k := range variantKernels {
		for _, f := range k.forms {
			got := missed(k.kernel, f.name, 2)
			if want := f.name + " (2×)"; f.why == "" && got != want || f.why != "" && got != want+" — "+f.why {
				t.Errorf("%s %s: %q", k.kernel, f.name, got)
			}
			if f.why != "" {
				n++
			}
		}
	}
	if n != 3 {
		t.Errorf("%d forms say why, want 3 (SumMMM B dense and the two ELL forms)", n)
	}
}

// TestVariantRatiosOverTheLayoutLoop: a form with a layout loop is set
// against it in the "this layout" column and in the list of forms past
// the loop target; the layout loop's row gives its time over the kernel's
// loop and no target; a form whose layout loop has no checked time gets
// no ratio in that column.
func TestVariantRatiosOverTheLayoutLoop(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	dense, csc := variantLoopSystem+" (B dense)", variantLoopSystem+" (B csc)"
	ms := []Measurement{
		{System: variantLoopSystem, Status: StatusOK, Execute: v(2), Form: &FormInfo{Program: "the kernel's loop"}},
		{System: dense, Status: StatusOK, Execute: v(4), Form: &FormInfo{Program: "the dense loop"}},
		{System: csc, Status: StatusWrong, Execute: v(1), Form: &FormInfo{Program: "the csc loop"}},
		{System: "a", Status: StatusOK, Execute: v(3)},
		{System: "d", Status: StatusOK, Execute: v(6), Form: &FormInfo{Program: variantsDir + "d.sdql", LayoutLoop: dense}},
		{System: "c", Status: StatusOK, Execute: v(2.4), Form: &FormInfo{Program: variantsDir + "c.sdql", LayoutLoop: csc}},
	}
	for i := range ms {
		ms[i].Experiment, ms[i].Kernel, ms[i].Input = "variants", "mmm", "m"
	}
	setVariantRatios(ms)
	want := []map[string]float64{
		nil,
		{figVsLoop: 2},
		nil,
		{figVsFastest: 1.25, figVsLoop: 1.5, figVsLayoutLoop: 1.5},
		{figVsFastest: 2.5, figVsLoop: 3, figVsLayoutLoop: 1.5},
		{figVsFastest: 1, figVsLoop: 1.2},
	}
	for i, w := range want {
		if !maps.Equal(ms[i].Figures, w) {
			t.Errorf("%s: figures %v, want %v", ms[i].System, ms[i].Figures, w)
		}
	}
	text := variantsSection(ms)
	for _, want := range []string{
		"| " + dense + " | Go | 4.00 | — | 2.00 | 1 |",
		"| d | `d.sdql` | 6.00 | **2.50** | **3.00** | **1.50** |",
		"| c | `c.sdql` | 2.40 | 1.00 | 1.20 | — |",
		"- " + dense + ": the dense loop (the loop of: d)",
		"- MMM: a (1.5×); d (1.5× " + dense + ")",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Forms without a checked time") {
		t.Errorf("a layout loop is listed as a form without a time:\n%s", text)
	}
}
