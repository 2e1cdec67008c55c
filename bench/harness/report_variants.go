package harness

import (
	"fmt"
	"strings"
)

// writeVariants writes the variants experiment: per kernel and input, one
// row per form with its time, its ratios to the kernel's fastest form and
// to the Go loop, its optimize time and its plan's estimated cost, then
// the forms that miss each target.
func writeVariants(w *mdWriter, ms []*Measurement, notes []Note) {
	w.p("## Variants: each kernel in several forms")
	w.p("")
	w.p("Each kernel written the ways a user might write it (`bench/programs/variants/`: tuple patterns, nested sums, lookups of the tensor being walked, "+
		"a scalar outside the sum, vectors as a declared ARRAY or loaded with `--tensor`, factor matrices dense or sparse, the built-in formats and a user's "+
		"own ELL mapping given with `--storage`), on the same data, next to one hand-written Go loop per kernel over the layout a programmer would pick "+
		"(`storel-bench handloop`, bench/harness/handloop.go; named under each table), which is also the reference answer every form is checked against "+
		"(and, on small inputs, the reference interpreter checks the kernel's first form). Times are execution only, one thread. "+
		"**× fastest** divides by the kernel's fastest storel form in the same case (target ≤ %g: the optimizer finds the fast plan whatever the form); "+
		"**× Go loop** divides by the Go loop (target ≤ %g: every plan runs at loop speed). Ratios past a target are in bold. "+
		"*est. cost* is the chosen plan's cost estimated by the optimizer (`storel explain`, whose text is linked), with the naive plan's after the slash.",
		targetVsFastest, targetVsLoop)
	w.p("")
	writeExperimentNotes(w, notes, "variants", "Note")
	byCase := groupBy(ms, func(m *Measurement) string { return m.Kernel + " on " + m.Input })
	missFastest, missLoop := map[string][]string{}, map[string][]string{}
	var failed []string
	for _, c := range byCase.keys {
		cms := byCase.by[c]
		kernel := cms[0].Kernel
		w.p("### %s", kernelTitle(kernel)+" on "+cms[0].Input)
		w.p("")
		var rows [][]string
		var rowNotes []string
		for _, m := range cms {
			if m.System == "oracle" {
				if m.Status != StatusOK {
					rowNotes = append(rowNotes, "reference interpreter: "+string(m.Status)+" "+m.Note)
				} else {
					rowNotes = append(rowNotes, "the reference interpreter agrees with "+m.CheckedAgainst+" (first form's program)")
				}
				continue
			}
			vsF, vsL := "—", "—"
			if v, ok := m.Figures[figVsFastest]; ok {
				vsF = ratioCell(v, targetVsFastest)
				if v > targetVsFastest {
					missFastest[kernel] = append(missFastest[kernel], missed(kernel, m.System, v))
				}
			}
			if v, ok := m.Figures[figVsLoop]; ok {
				vsL = ratioCell(v, targetVsLoop)
				if v > targetVsLoop {
					missLoop[kernel] = append(missLoop[kernel], missed(kernel, m.System, v))
				}
			}
			cost := "—"
			if v, ok := m.Figures["cost"]; ok {
				cost = fmt.Sprintf("%.3g", v)
				if n, ok := m.Figures["naive_cost"]; ok {
					cost += fmt.Sprintf(" / %.3g", n)
				}
			}
			plan := ""
			if m.Form != nil {
				plan = "`" + strings.TrimPrefix(m.Form.Program, variantsDir) + "`"
				if m.Form.Storage != "" {
					plan += " + `" + strings.TrimPrefix(m.Form.Storage, variantsDir) + "`"
				}
				if m.Form.Explain != "" {
					plan += fmt.Sprintf(" ([plan](%s))", m.Form.Explain)
				}
			}
			if m.System == variantLoopSystem {
				vsL, plan = "1", "Go"
				if m.Form != nil {
					rowNotes = append(rowNotes, "Go loop: "+m.Form.Program)
				}
			}
			rows = append(rows, []string{m.System, plan, cell(m), vsF, vsL, fmtPtr(m.Optimize), cost})
			if m.Status != StatusOK && m.Note != "" {
				rowNotes = append(rowNotes, fmt.Sprintf("%s: %s", m.System, m.Note))
			}
			if m.Status != StatusOK && m.System != variantLoopSystem {
				failed = append(failed, fmt.Sprintf("%s %s (%s)", kernel, m.System, m.Status))
			}
		}
		w.table([]string{"form", "program", "execute ms", "× fastest", "× Go loop", "optimize ms", "est. cost / naive"}, rows)
		writeNotes(w, rowNotes)
	}
	kernels := groupBy(ms, func(m *Measurement) string { return m.Kernel }).keys
	writeMisses(w, fmt.Sprintf("Forms past %g× the kernel's fastest form", targetVsFastest), kernels, missFastest)
	writeMisses(w, fmt.Sprintf("Forms past %g× the Go loop", targetVsLoop), kernels, missLoop)
	if len(failed) > 0 {
		w.p("**Forms without a checked time** (%d; not counted above): %s.", len(failed), strings.Join(failed, "; "))
		w.p("")
	}
}

// missed is a form past a target at ratio v, with why its layout does
// more work where the form says.
func missed(kernel, form string, v float64) string {
	s := fmt.Sprintf("%s (%.3g×)", form, v)
	if why := formWhy(kernel, form); why != "" {
		s += " — " + why
	}
	return s
}

// writeMisses lists, per kernel, the forms past a target.
func writeMisses(w *mdWriter, title string, kernels []string, miss map[string][]string) {
	n := 0
	for _, k := range kernels {
		n += len(miss[k])
	}
	w.p("**%s** (%d):", title, n)
	w.p("")
	for _, k := range kernels {
		if len(miss[k]) > 0 {
			w.p("- %s: %s", kernelTitle(k), strings.Join(miss[k], "; "))
		} else {
			w.p("- %s: none", kernelTitle(k))
		}
	}
	w.p("")
}

// ratioCell formats a ratio, in bold past target.
func ratioCell(v, target float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v >= 100 {
		s = fmt.Sprintf("%.0f", v)
	}
	if v > target {
		return "**" + s + "**"
	}
	return s
}
