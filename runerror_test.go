package storel_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	storel "github.com/storel/storel"
	"github.com/storel/storel/storage"
)

// Run-time errors name the user's text (file:line:col and the source
// line) whichever plan and engine run: the optimizer's rewrites and the
// compiled kernel keep the position of the expression they came from.
func TestRunErrorPositions(t *testing.T) {
	decls := "CREATE int SCALAR n;\nCREATE int ARRAY x(n);\nCREATE real ARRAY y(n);\n"
	for _, c := range []struct {
		name, body, at, msg string
	}{
		// j - j folds to 0 in the optimized plan: the division node is
		// rebuilt from the e-graph and keeps the position of the one
		// written.
		{"div", "sum(<i,_> in 0:n) sum(<j,_> in 0:n) { i -> 1 / (j - j) }", "/ (j", "integer division by zero"},
		{"mod", "sum(<i,_> in 0:n) sum(<j,xj> in x) { i -> j % (xj - 2) }", "% (xj", "integer modulo by zero"},
		{"read", "sum(<i,_> in 0:n) { i -> 2.0 * y(i + 1) }", "(i + 1)", "y(3) is past the end of y, which has 3 elements"},
	} {
		line := "CREATE TENSOR r AS " + c.body + ";"
		src := decls + line + "\n"
		wantPos := fmt.Sprintf("prog.sdql:4:%d", strings.Index(line, c.at)+1)
		for _, run := range []storel.RunOptions{
			{Plan: storel.PlanNaive, Engine: storel.EngineInterp},
			{Plan: storel.PlanNaive, Engine: storel.EngineCompiled, Threads: 1},
			{Plan: storel.PlanOptimized, Engine: storel.EngineInterp},
			{Plan: storel.PlanOptimized, Engine: storel.EngineCompiled, Threads: 1},
			{Plan: storel.PlanOptimized, Engine: storel.EngineCompiled, Threads: 3},
			{Plan: storel.PlanLogical, Engine: storel.EngineCompiled, Threads: 3},
		} {
			name := fmt.Sprintf("%s/%s/%s/%d", c.name, run.Plan, run.Engine, run.Threads)
			w := storel.NewWorkspace()
			w.SetObject("n", storage.IntScalar(3))
			w.SetObject("x", storage.IntArray([]int64{1, 2, 3}))
			w.SetObject("y", storage.RealArray([]float64{1, 2, 3}))
			p, err := w.Compile("prog.sdql", []byte(src), "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Run(run)
			var re *storel.RunError
			if !errors.As(err, &re) {
				t.Errorf("%s: got %v, want a RunError at %s", name, err, wantPos)
				continue
			}
			if re.Pos.String() != wantPos || re.Msg != c.msg || re.Line != line {
				t.Errorf("%s: got %s: %s (line %q)\nwant %s: %s", name, re.Pos, re.Msg, re.Line, wantPos, c.msg)
			}
			caret := strings.Repeat(" ", strings.Index(line, c.at)) + "^"
			if want := wantPos + ": " + c.msg + "\n" + line + "\n" + caret; err.Error() != want {
				t.Errorf("%s: message\n%s\nwant\n%s", name, err, want)
			}
		}
	}
}
