package harness

import (
	"fmt"
	"math"
	"strings"
)

// writeVariants writes the variants experiment: per kernel and input, one
// row per Go loop and per form with its time, its ratios to the kernel's
// fastest form, to the kernel's Go loop and to the Go loop over its own
// layout, its optimize time and its plan's estimated cost, then the forms
// that miss each target.
func writeVariants(w *mdWriter, ms []*Measurement, notes []Note) {
	w.p("## Variants: each kernel in several forms")
	w.p("")
	w.p("Each kernel written the ways a user might write it (`bench/programs/variants/`: tuple patterns, nested sums, lookups of the tensor being walked, "+
		"a scalar outside the sum, vectors as a declared ARRAY or loaded with `--tensor`, factor matrices dense or sparse, the built-in formats and a user's "+
		"own ELL mapping given with `--storage`), on the same data, next to one hand-written Go loop per kernel over the layout a programmer would pick "+
		"(`storel-bench handloop`, bench/harness/handloop.go; named under each table), which is also the reference answer every form is checked against "+
		"(and, on small inputs, the reference interpreter checks the kernel's first form). Where a form's stored layout makes more work than that loop does "+
		"whatever the plan (ELL's padding slots, a dense factor's zeros, a factor stored by columns where the product walks rows, COO's entries without row or fiber starts), a second Go loop walks "+
		"that layout as a programmer would (`handloop --layout`, a row *Go loop (layout)*, also named under the table and checked against the kernel's loop). "+
		"Times are execution only, one thread. "+
		"**× fastest** divides by the kernel's fastest storel form in the same case (target ≤ %g: the optimizer finds the fast plan whatever the form); "+
		"**× Go loop (kernel)** divides by the kernel's Go loop, the plan and the layout together; **× Go loop (this layout)** by the Go loop over the form's own "+
		"layout, where one exists, else the kernel's (target ≤ %g: every plan runs at the speed of a loop doing that plan's work; the list of forms past it "+
		"below uses this column). Ratios past a target are in bold. "+
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
			loop := isLoopSystem(m.System)
			vsF, vsL, vsOwn := "—", "—", "—"
			if v, ok := m.Figures[figVsFastest]; ok {
				vsF = ratioCell(v, targetVsFastest)
				if v > targetVsFastest {
					missFastest[kernel] = append(missFastest[kernel], missed(kernel, m.System, v))
				}
			}
			if v, ok := m.Figures[figVsLoop]; ok {
				if loop {
					vsL = ratioCell(v, math.Inf(1)) // a loop misses no target
				} else {
					vsL = ratioCell(v, targetVsLoop)
				}
			}
			if v, ok := m.Figures[figVsLayoutLoop]; ok {
				vsOwn = ratioCell(v, targetVsLoop)
				if v > targetVsLoop {
					s := missed(kernel, m.System, v)
					if m.Form != nil && m.Form.LayoutLoop != "" {
						// The layout's loop does the work the why names.
						s = fmt.Sprintf("%s (%.3g× %s)", m.System, v, m.Form.LayoutLoop)
					}
					missLoop[kernel] = append(missLoop[kernel], s)
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
			if loop {
				vsOwn, plan = "1", "Go"
				if m.System == variantLoopSystem {
					vsL = "1"
				}
				if m.Form != nil {
					rowNotes = append(rowNotes, m.System+": "+m.Form.Program+loopForms(cms, m.System))
				}
			}
			rows = append(rows, []string{m.System, plan, cell(m), vsF, vsL, vsOwn, fmtPtr(m.Optimize), cost})
			if m.Status != StatusOK && m.Note != "" {
				rowNotes = append(rowNotes, fmt.Sprintf("%s: %s", m.System, m.Note))
			}
			if m.Status != StatusOK && !loop {
				failed = append(failed, fmt.Sprintf("%s %s (%s)", kernel, m.System, m.Status))
			}
		}
		w.table([]string{"form", "program", "execute ms", "× fastest", "× Go loop (kernel)", "× Go loop (this layout)", "optimize ms", "est. cost / naive"}, rows)
		writeNotes(w, rowNotes)
	}
	kernels := groupBy(ms, func(m *Measurement) string { return m.Kernel }).keys
	writeMisses(w, fmt.Sprintf("Forms past %g× the kernel's fastest form", targetVsFastest), kernels, missFastest)
	writeMisses(w, fmt.Sprintf("Forms past %g× the Go loop over their layout", targetVsLoop), kernels, missLoop)
	if len(failed) > 0 {
		w.p("**Forms without a checked time** (%d; not counted above): %s.", len(failed), strings.Join(failed, "; "))
		w.p("")
	}
}

// loopForms lists, for a layout loop, the forms of the case divided by it.
func loopForms(ms []*Measurement, system string) string {
	var forms []string
	for _, m := range ms {
		if m.Form != nil && m.Form.LayoutLoop == system {
			forms = append(forms, m.System)
		}
	}
	if len(forms) == 0 {
		return ""
	}
	return " (the loop of: " + strings.Join(forms, "; ") + ")"
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
