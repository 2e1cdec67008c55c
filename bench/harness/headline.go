package harness

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/storel/storel/internal/atomicfile"
)

// headlinePeers are the peers of the README's table, in its column order.
var headlinePeers = []struct{ system, title string }{
	{"scipy", "SciPy"}, {"taco", "TACO"}, {"torch", "PyTorch"}, {"duckdb", "DuckDB"},
}

// Headline markers delimit the table in README.md.
const (
	headlineBegin = "<!-- BEGIN headline: written by `storel-bench report` from bench/results/results.json; do not edit -->"
	headlineEnd   = "<!-- END headline -->"
)

// headlineMarkdown is the compact end-to-end table the README carries: per
// kernel, each peer's time over storel's (geometric mean over the inputs
// where both answers checked), the storel builds measured, and the machine
// and dates of the runs. It is empty when there are no end-to-end results.
func headlineMarkdown(d *reportData) string {
	var e2e []*Measurement
	for i := range d.Results {
		if m := &d.Results[i]; m.Experiment == "e2e" && m.Threads <= 1 {
			e2e = append(e2e, m)
		}
	}
	if len(e2e) == 0 {
		return ""
	}
	w := &mdWriter{}
	byKernel := groupBy(e2e, func(m *Measurement) string { return m.Kernel })
	header := []string{"kernel", "inputs"}
	for _, p := range headlinePeers {
		header = append(header, p.title)
	}
	header = append(header, "storel build")
	var rows [][]string
	dates := map[string]bool{}
	for _, kernel := range byKernel.keys {
		kms := byKernel.by[kernel]
		byInput := groupBy(kms, func(m *Measurement) string { return m.Input })
		n := 0
		builds := map[string]bool{}
		for _, m := range kms {
			if m.System == "storel" && m.Status == StatusOK {
				n++
				commit, _, _ := strings.Cut(m.StorelBuild, " ")
				builds[commit] = true
				if date := runDate(d.Runs, m.StorelBuild); date != "" {
					dates[date] = true
				}
			}
		}
		row := []string{kernelTitle(kernel), fmt.Sprint(n)}
		for _, p := range headlinePeers {
			r, ratios := ratioRow(byInput, "", p.system, "storel")
			if len(ratios) == 0 {
				row = append(row, "—")
				continue
			}
			row = append(row, r[2])
		}
		row = append(row, strings.Join(sortedKeys(builds), ", "))
		rows = append(rows, row)
	}
	w.p("%s", headlineBegin)
	w.p("")
	when := strings.Join(sortedKeys(dates), ", ")
	if when == "" {
		when = "date not recorded"
	}
	w.p("Peer time / storel time, execution only, one thread (%s; %s):", d.Machine, when)
	w.p("")
	w.table(header, rows)
	w.p("— : no checked figure for that peer (SciPy and PyTorch have no sparse 3-tensor kernels; " +
		"the harness runs them on matrices only).")
	w.p("")
	w.p("%s", headlineEnd)
	return w.sb.String()
}

// runDate is the date (YYYY-MM-DD) of the last run in runs that measured
// build, or "".
func runDate(runs []string, build string) string {
	date := ""
	for _, r := range runs {
		if build != "" && strings.Contains(r, "storel build "+build+")") && len(r) >= 10 {
			date = r[:10]
		}
	}
	return date
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// UpdateReadme replaces the headline block of the README at path with the
// one made from dir/results.json. The README must hold both markers.
func UpdateReadme(path, dir string) error {
	d, err := readResults(dir)
	if err != nil {
		return err
	}
	if d.Quick {
		return fmt.Errorf("%s/results.json is a --quick run; the README carries the full run's figures", dir)
	}
	block := headlineMarkdown(d)
	if block == "" {
		return fmt.Errorf("%s/results.json has no end-to-end results", dir)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(b, []byte(headlineBegin))
	j := bytes.Index(b, []byte(headlineEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no headline markers (%q ... %q)", path, headlineBegin, headlineEnd)
	}
	var out bytes.Buffer
	out.Write(b[:i])
	out.WriteString(block)
	out.Write(bytes.TrimPrefix(b[j+len(headlineEnd):], []byte("\n")))
	return atomicfile.WriteFile(path, out.Bytes())
}
