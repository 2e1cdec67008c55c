package opt

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Alternative is one way of storing a program's tensors: the naive plan of
// the program composed with one choice of storage mappings, and the
// physical data those mappings read. The paper's egg could only carry one
// number as a cost, so it could not compare plans across storage mappings;
// here each alternative is optimized and the estimated costs compared.
//
// Suggested command-line syntax (the integrator's): --tensor
// A=FILE:csr|csc|hash stores A in each format and optimizes every
// combination; storel explain then shows the costs side by side, and storel
// run executes the cheapest.
type Alternative struct {
	Label string // shown in the report, e.g. "A=csr B=csc"
	Naive *ir.Expr
	Store storage.Store
}

// Alternatives is the outcome of OptimizeAlternatives.
type Alternatives struct {
	Labels  []string
	Results []*Result // nil where Errs[i] is not
	Errs    []error
	Best    int // the alternative with the cheapest plan
}

// Chosen returns the result of the cheapest alternative.
func (a *Alternatives) Chosen() *Result { return a.Results[a.Best] }

// OptimizeAlternatives optimizes each alternative and picks the one whose
// plan has the lowest estimated cost. It fails only if every alternative
// fails.
func OptimizeAlternatives(alts []Alternative, opt Options) (*Alternatives, error) {
	if len(alts) == 0 {
		return nil, fmt.Errorf("opt: no storage alternative to optimize")
	}
	out := &Alternatives{Best: -1}
	for _, alt := range alts {
		res, err := Optimize(alt.Naive, alt.Store, opt)
		out.Labels = append(out.Labels, alt.Label)
		out.Results = append(out.Results, res)
		out.Errs = append(out.Errs, err)
		if err == nil && (out.Best < 0 || res.Cost.Value < out.Results[out.Best].Cost.Value) {
			out.Best = len(out.Results) - 1
		}
	}
	if out.Best < 0 {
		return nil, fmt.Errorf("opt: every storage alternative failed; the first: %s: %v", alts[0].Label, out.Errs[0])
	}
	return out, nil
}

// Explain writes the alternatives' costs side by side, then the report of
// the chosen one.
func (a *Alternatives) Explain(w io.Writer) {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "storage alternatives:")
	fmt.Fprintf(bw, "  %-3s %-30s %12s %12s %10s\n", "", "storage", "naive cost", "plan cost", "optimize")
	for i, l := range a.Labels {
		mark := ""
		if i == a.Best {
			mark = "*"
		}
		if a.Errs[i] != nil {
			fmt.Fprintf(bw, "  %-3s %-30s failed: %v\n", mark, l, a.Errs[i])
			continue
		}
		r := a.Results[i]
		fmt.Fprintf(bw, "  %-3s %-30s %12s %12s %10s\n", mark, l, r.NaiveCost, r.Cost, formatDuration(r.Time))
	}
	fmt.Fprintf(bw, "chosen: %s\n\n", a.Labels[a.Best])
	bw.Flush()
	a.Chosen().Explain(w)
}

// Cross returns every combination of one choice per tensor, each as a
// label ("A=csr B=csc", tensors in name order) and the chosen format per
// tensor: what a command line that accepts --tensor A=FILE:csr|csc needs to
// build the alternatives.
func Cross(choices map[string][]string) (labels []string, combos []map[string]string) {
	names := slices.Sorted(maps.Keys(choices))
	combos = []map[string]string{{}}
	for _, n := range names {
		var next []map[string]string
		for _, c := range combos {
			for _, f := range choices[n] {
				m := maps.Clone(c)
				m[n] = f
				next = append(next, m)
			}
		}
		combos = next
	}
	for _, c := range combos {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + "=" + c[n]
		}
		labels = append(labels, strings.Join(parts, " "))
	}
	return labels, combos
}
