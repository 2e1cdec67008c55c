package egraph_test

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/storel/storel/egraph"
)

// Example defines a small language, saturates an expression under a few
// rules and extracts the smallest equivalent term.
func Example() {
	lang := egraph.NewOpTable()
	lang.Define("*", 2)
	lang.Define("/", 2)
	lang.Define("<<", 2)
	lang.DefineLeaf("num",
		func(tok string) (uint64, bool) {
			v, err := strconv.ParseInt(tok, 10, 64)
			return uint64(v), err == nil
		},
		func(p uint64) string { return strconv.FormatInt(int64(p), 10) })
	syms := &egraph.Symbols{}
	lang.DefineLeaf("sym",
		func(tok string) (uint64, bool) { return syms.Intern(tok), true },
		syms.Name)

	type D = egraph.NoData
	var rules []*egraph.Rewrite[D]
	for _, r := range [][3]string{
		{"comm-mul", "(* ?a ?b)", "(* ?b ?a)"},
		{"mul-two", "(* ?a 2)", "(<< ?a 1)"},
		{"div-assoc", "(/ (* ?a ?b) ?c)", "(* ?a (/ ?b ?c))"},
		{"div-self", "(/ ?a ?a)", "1"}, // a real rule set would check ?a != 0
		{"mul-one", "(* ?a 1)", "?a"},
	} {
		rw, err := egraph.ParseRewrite[D](lang, r[0], r[1], r[2])
		if err != nil {
			panic(err)
		}
		rules = append(rules, rw)
	}

	expr, err := egraph.ParseExpr(lang, "(/ (* a 2) 2)")
	if err != nil {
		panic(err)
	}
	g := egraph.New[D](lang, egraph.NoAnalysis{})
	runner := egraph.NewRunner(g)
	runner.IterationLimit = 10
	root := runner.AddExpr(expr)
	runner.Run(rules)

	x := egraph.NewExtractor(g, egraph.AstSize[D], cmp.Less[int])
	best, cost, err := x.Extract(root)
	if err != nil {
		panic(err)
	}
	fmt.Println(best.Format(lang), cost)
	// Output: a 1
}
