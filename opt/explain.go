package opt

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storel/storel/ir"
)

// Explain writes the report of `storel explain` after the naive plan (which
// the caller prints): the optimized plan as SDQLite, the estimated costs
// and cardinality, per stage the e-graph figures of the paper's Table 4 and
// why it stopped, and the rules that fired most.
func (r *Result) Explain(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintln(bw, "optimized plan:")
	writeIndented(bw, ir.Format(r.Plan))
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "estimated cost: naive %s (every dictionary built as a hash map), chosen %s", r.NaiveCost, r.Cost)
	if r.Cost.Value > 0 && !isInf(r.NaiveCost) && !isInf(r.Cost) {
		fmt.Fprintf(bw, " (%sx cheaper)", formatCount(r.NaiveCost.Value/r.Cost.Value))
	}
	fmt.Fprintln(bw)
	r.writeCandidates(bw)
	fmt.Fprintf(bw, "estimated result cardinality: %s\n", r.Cost.Card)
	fmt.Fprintln(bw)
	r.writeStages(bw)
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "rules applied most (unions that changed the e-graph):")
	writeTopRules(bw, r.totalApplied(), 12)
}

// writeCandidates writes the cost of each plan compared, the chosen one
// marked.
func (r *Result) writeCandidates(w io.Writer) {
	fmt.Fprintln(w, "plans compared (each physical, costed alike; the cheapest is kept):")
	for _, c := range r.Candidates {
		mark := " "
		if c.Label == r.Chosen {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %-11s %s\n", mark, c.Label, c.Cost)
	}
	if r.Chosen != "optimized" {
		fmt.Fprintf(w, "  (the search's plan is estimated dearer than the %s plan, which runs instead)\n", r.Chosen)
		for _, c := range r.Candidates {
			if c.Label == "optimized" {
				fmt.Fprintln(w, "the search's plan:")
				writeIndented(w, ir.Format(unusedAsUnderscore(c.Plan)))
			}
		}
	}
}

// writeStages writes the table of e-graph figures.
func (r *Result) writeStages(w io.Writer) {
	fmt.Fprintf(w, "%-10s %6s %6s %7s %8s %7s %10s  %s\n", "stage", "rounds", "iters", "nodes", "classes", "memo", "time", "stop")
	var total time.Duration
	for _, s := range r.Stages {
		fmt.Fprintf(w, "%-10s %6d %6d %7d %8d %7d %10s  %s\n", s.Name, s.Rounds, s.Iterations, s.Nodes, s.Classes, s.Memo, formatDuration(s.Time), s.StopReason)
		total += s.Time
	}
	status := "saturated"
	if !r.Saturated {
		status = "stopped: " + r.StopReason + " (the plan is the best found so far)"
	}
	fmt.Fprintf(w, "%-10s %6s %6s %7s %8s %7s %10s  %s\n", "total", "", "", "", "", "", formatDuration(r.Time), status)
}

func writeTopRules(w io.Writer, applied map[string]int, n int) {
	type kv struct {
		name string
		n    int
	}
	var l []kv
	for k, v := range applied {
		l = append(l, kv{k, v})
	}
	slices.SortFunc(l, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.name, b.name)
	})
	if len(l) > n {
		l = l[:n]
	}
	byName := map[string]*ruleDef{}
	for _, d := range defaultRules.defs {
		byName[d.Name] = d
	}
	for _, x := range l {
		reason := ""
		if d := byName[strings.TrimSuffix(x.name, "<")]; d != nil {
			reason = d.Reason
			if strings.HasSuffix(x.name, "<") {
				reason += " (right to left)"
			}
		}
		fmt.Fprintf(w, "  %-5s %5d  %s\n", x.name, x.n, reason)
	}
}

func writeIndented(w io.Writer, text string) {
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintln(w, "  "+line)
	}
}

// formatDuration prints a duration in milliseconds with 3 significant
// digits.
func formatDuration(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", math.Max(ms, 0))
}
