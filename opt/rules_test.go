package opt

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/storel/storel/egraph"
	"github.com/storel/storel/eval"
	"github.com/storel/storel/internal/datadriven"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/sdql"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// ruleStore is the data the rule tests read: arrays V and W (V holds an
// explicit zero), sorted int arrays I and J, G sorted with repeats (runs),
// K sorted within the segments
// of P, Q the coordinates of a matrix whose rows (the segments of R) hold
// every coordinate, C padded with -1 (a user's ELL columns), a hash map H and a trie T
// (each with an explicit zero), and scalars n, x and y.
func ruleStore(t *testing.T) (storage.Store, map[string]ir.Type) {
	h := storage.NewHashMap(ir.Real, []int64{3, 3})
	tr := storage.NewTrie(ir.Real, []int64{3, 3})
	for _, e := range []struct {
		i, j int64
		v    float64
	}{{0, 1, 2}, {1, 0, 3}, {1, 2, 0}, {2, 2, 4}} {
		if err := h.Put([]int64{e.i, e.j}, 0, e.v); err != nil {
			t.Fatal(err)
		}
		if err := tr.Put([]int64{e.i, e.j}, 0, e.v); err != nil {
			t.Fatal(err)
		}
	}
	tr.Finish()
	st := storage.Store{
		"V": storage.RealArray([]float64{3, 0, 5, 2, 1}),
		"W": storage.RealArray([]float64{1, 2, 0, 4, 3}),
		"I": storage.IntArray([]int64{0, 2, 3, 4}),
		"J": storage.IntArray([]int64{1, 2, 4}),
		"G": storage.IntArray([]int64{0, 0, 1, 3, 3}),
		// within G's runs: M never decreases and repeats, L decreases, E
		// never repeats
		"M": storage.IntArray([]int64{2, 2, 0, 1, 1}),
		"L": storage.IntArray([]int64{2, 1, 0, 1, 1}),
		"E": storage.IntArray([]int64{0, 1, 0, 0, 1}),
		"K": storage.IntArray([]int64{1, 3, 1, 2}),
		"Q": storage.IntArray([]int64{0, 1, 0, 1}),
		"R": storage.IntArray([]int64{0, 2, 4}),
		"P": storage.IntArray([]int64{0, 2, 4}),
		"C": storage.IntArray([]int64{1, -1, 3, -1}),
		"H": h,
		"T": tr,
		"n": storage.IntScalar(4),
		"x": storage.RealScalar(2.5),
		"y": storage.RealScalar(-1.5),
	}
	env := map[string]ir.Type{
		"V": {Depth: 1, Base: ir.Real}, "W": {Depth: 1, Base: ir.Real},
		"I": {Depth: 1, Base: ir.Int}, "J": {Depth: 1, Base: ir.Int}, "K": {Depth: 1, Base: ir.Int}, "P": {Depth: 1, Base: ir.Int},
		"G": {Depth: 1, Base: ir.Int}, "M": {Depth: 1, Base: ir.Int}, "L": {Depth: 1, Base: ir.Int}, "E": {Depth: 1, Base: ir.Int},
		"Q": {Depth: 1, Base: ir.Int}, "R": {Depth: 1, Base: ir.Int},
		"C": {Depth: 1, Base: ir.Int},
		"H": {Depth: 2, Base: ir.Real}, "T": {Depth: 2, Base: ir.Real},
		"n": ir.IntType, "x": ir.RealType, "y": ir.RealType,
	}
	return st, env
}

// TestRuleGoldens applies rules to small expressions (testdata/rules):
// "rule NAME" applies one rule (NAME< a rule right to left) once to the
// input; "rule A B" applies A, then B on the result. The output lists the
// terms the last rule added to the input's class, or "blocked". Every
// term must evaluate to the input's value. Every rule must have a case
// where it fires and one where it is blocked.
func TestRuleGoldens(t *testing.T) {
	st, env := ruleStore(t)
	fired, blocked := map[string]bool{}, map[string]bool{}
	datadriven.RunTest(t, "testdata/rules", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "rule" || len(d.CmdArgs) == 0 {
			d.Fatalf(t, "want: rule NAME [NAME...]")
		}
		var names []string
		for _, a := range d.CmdArgs {
			names = append(names, a.Key)
		}
		e, err := sdql.CompileExpr("input", []byte(d.Input), env)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		terms, err := applyRules(e, st, names)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		last := names[len(names)-1]
		if len(terms) == 0 {
			blocked[last] = true
			return "blocked\n"
		}
		fired[last] = true
		want, err := eval.Eval(e, st)
		if err != nil {
			d.Fatalf(t, "the input fails: %v", err)
		}
		var out []string
		for _, term := range terms {
			got, err := eval.Eval(term, st)
			if err != nil || !value.Equal(want, got, 1e-12) {
				t.Errorf("%s: rule %s changes the value: %s computes %s (%v), the input %s", d.Pos, last, term, valueText(got), err, valueText(want))
			}
			if err := checkPrintedPlan(term, st); err != nil {
				t.Errorf("%s: rule %s: %v", d.Pos, last, err)
			}
			out = append(out, ir.Format(term))
		}
		return strings.Join(out, "\n--\n") + "\n"
	})
	var names []string
	for _, cr := range defaultRules.rules {
		if !slices.Contains(names, cr.name) {
			names = append(names, cr.name)
		}
	}
	for _, n := range names {
		if !fired[n] {
			t.Errorf("no case of testdata/rules shows rule %s firing", n)
		}
		if !blocked[n] {
			t.Errorf("no case of testdata/rules shows rule %s blocked", n)
		}
	}
}

func valueText(v value.Value) string {
	if v == nil {
		return "nothing"
	}
	return value.Format(v)
}

// applyRules loads e, applies the named rewrites one after the other (one
// iteration each) and returns the terms the last one added to e's class.
func applyRules(e *ir.Expr, st storage.Store, names []string) ([]*ir.Expr, error) {
	s := newSession(st, GatherStats(st))
	s.reserveNames(e)
	root, err := s.addExpr(e)
	if err != nil {
		return nil, err
	}
	s.g.Rebuild()
	var before []egraph.NodeID
	for i, name := range names {
		if i == len(names)-1 {
			before = append([]egraph.NodeID(nil), s.g.Nodes(root)...)
		}
		rws, err := s.rewrites(defaultRules, func(n string) bool { return n == name })
		if err != nil {
			return nil, err
		}
		if len(rws) == 0 {
			return nil, fmt.Errorf("no rule %s", name)
		}
		s.run(name, root, rws, Options{NodeLimit: 10000, IterLimit: 1, TimeLimit: 1e10})
		root = s.g.Find(root)
	}
	s.logicalAsHash = true
	x := egraph.NewExtractor[Data, int](s.g, func(g *graph, class egraph.ClassID, n egraph.Node, kids []int) (int, bool) {
		if !s.nodeInScope(g, class, n) {
			return 0, false
		}
		size := 1
		for _, k := range kids {
			size += k
		}
		return size, true
	}, func(a, b int) bool { return a < b })
	var terms []*ir.Expr
	for _, nid := range s.g.Nodes(root) {
		if slices.Contains(before, nid) {
			continue
		}
		term, err := s.termWithNode(x, nid)
		if err != nil {
			return nil, err
		}
		terms = append(terms, term)
	}
	return terms, nil
}

// termWithNode builds the term whose root is node nid and whose children
// are their classes' smallest terms.
func (s *session) termWithNode(x *egraph.Extractor[Data, int], nid egraph.NodeID) (*ir.Expr, error) {
	var build func(nid egraph.NodeID, depth int) (*ir.Expr, error)
	build = func(nid egraph.NodeID, depth int) (*ir.Expr, error) {
		if depth > 200 {
			return nil, fmt.Errorf("term too deep")
		}
		n := s.g.Node(nid)
		kids := append([]egraph.ClassID(nil), n.Children...)
		var args []*ir.Expr
		for i, k := range kids {
			if i < binderCount(n.Op) {
				continue
			}
			best, ok := x.BestNode(k)
			if !ok {
				return nil, fmt.Errorf("class %d has no term", k)
			}
			a, err := build(best, depth+1)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		n.Children = kids
		return s.nodeToIR(s.g, n, args, s.g.Data(s.g.NodeClass(nid)).Type), nil
	}
	return build(nid, 0)
}

// TestRuleFileRejects: right-hand sides that could not be built are
// errors of the rule file, named with the rule.
func TestRuleFileRejects(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"{ k -> a } * b  =>  { @unphysical k -> a * b }", "@unphysical"},
		{"sum(<k, v> in s) b  =>  sum(<k, v> in s) b[s(v + 1) := v]", "a replaced term must be a lookup"},
		{"sum(<k, v> in s) b  =>  sum(<k, v> in keys(q)) b", "not bound by the left-hand side"},
		{"sum(<k, v> in s) b  =>  sum(<k, v> in s) b * width(q)", "not bound by the left-hand side"},
		{"sum(<k, v> in s) b * width(s)  =>  b", "only appear on a right-hand side"},
	} {
		_, err := compileRuleFile("test.txt", "rule X \"reason\"\n  "+c.rule+"\n")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "rule X") {
			t.Errorf("%s: error %v, want one saying %q", c.rule, err, c.want)
		}
	}
}

// TestRowsDense: M5's condition holds for a compressed level whose rows
// each hold every coordinate 0 .. max in order, and for no other.
func TestRowsDense(t *testing.T) {
	for _, c := range []struct {
		x, p []int64
		want bool
	}{
		{[]int64{0, 1, 2, 0, 1, 2}, []int64{0, 3, 6}, true},
		{[]int64{0, 1, 2, 0, 1}, []int64{0, 3, 5}, false},    // a short row
		{[]int64{0, 2, 1, 0, 1, 2}, []int64{0, 3, 6}, false}, // out of order
		{[]int64{1, 2, 1, 2}, []int64{0, 2, 4}, false},       // coordinate 0 missing
		{[]int64{0, 1, 0, 1}, []int64{1, 3, 4}, false},       // not from position 0
		{[]int64{0, 1, 0, 1}, []int64{0, 2}, false},          // entries past the last row
		{[]int64{0, 1}, []int64{0}, false},                   // no row
	} {
		st := storage.Store{"x": storage.IntArray(c.x), "p": storage.IntArray(c.p)}
		if got := rowsDense(st, "x", "p"); got != c.want {
			t.Errorf("rowsDense(%v, %v) = %v, want %v", c.x, c.p, got, c.want)
		}
	}
	if rowsDense(storage.Store{"x": storage.RealArray([]float64{0, 1})}, "x", "p") {
		t.Errorf("rowsDense of a real array without segments holds")
	}
}
