package opt

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/storel/storel/eval"
	"github.com/storel/storel/value"
)

// TestAlternativesPickTheCheapest stores MMM's A in three formats, checks
// every plan computes the same matrix product and that the cheapest is
// chosen and reported.
func TestAlternativesPickTheCheapest(t *testing.T) {
	var alts []Alternative
	var want value.Value
	for _, f := range []string{"hash", "csc", "csr"} {
		naive, st := setupKernel(t, "mmm", 3, []tensorSpec{{"A", f, []int64{20, 25}, 0.1}, {"B", "csr", []int64{25, 20}, 0.1}})
		v, err := eval.Eval(naive, st)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = v
		}
		alts = append(alts, Alternative{Label: "A=" + f + " B=csr", Naive: naive, Store: st})
	}
	res, err := OptimizeAlternatives(alts, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Results {
		if res.Errs[i] != nil {
			t.Fatalf("%s: %v", res.Labels[i], res.Errs[i])
		}
		got, err := eval.Eval(r.Plan, alts[i].Store)
		if err != nil || !value.Equal(want, got, 1e-9) {
			t.Errorf("%s: the plan computes %v (%v)", res.Labels[i], got, err)
		}
		if r.Cost.Value < res.Chosen().Cost.Value {
			t.Errorf("%s costs %s, less than the chosen %s", res.Labels[i], r.Cost, res.Chosen().Cost)
		}
	}
	var sb strings.Builder
	res.Explain(&sb)
	for _, a := range alts {
		if !strings.Contains(sb.String(), a.Label) {
			t.Errorf("the report does not show %s:\n%s", a.Label, sb.String())
		}
	}
	// CSR (row by row) and CSC (outer products, k outermost) both stream
	// A once; probing a hash map per entry is far dearer.
	if res.Labels[res.Best] == "A=hash B=csr" {
		t.Errorf("chose %s\n%s", res.Labels[res.Best], sb.String())
	}
}

// TestDotDrawsThePlan checks the Graphviz output of MTTKRP's plan, and
// that dot accepts it when it is installed.
func TestDotDrawsThePlan(t *testing.T) {
	k := paperKernels[len(paperKernels)-1]
	naive, st := setupKernel(t, k.name, 1, k.tensors)
	res, err := Optimize(naive, st, searchLimits)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := res.Dot(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"digraph plan {", "merge <", "sum <", "{ @dense k -> v }"} {
		if !strings.Contains(out, want) {
			t.Errorf("the graph lacks %q:\n%s", want, out)
		}
	}
	if _, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = strings.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dot rejects the graph: %v\n%s", err, msg)
		}
	}
}

func TestCrossListsEveryCombination(t *testing.T) {
	labels, combos := Cross(map[string][]string{"B": {"csr", "csc"}, "A": {"csf"}, "C": {"dense", "hash"}})
	want := []string{"A=csf B=csr C=dense", "A=csf B=csr C=hash", "A=csf B=csc C=dense", "A=csf B=csc C=hash"}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if len(combos) != 4 || combos[3]["B"] != "csc" || combos[3]["C"] != "hash" {
		t.Errorf("combinations %v", combos)
	}
}
