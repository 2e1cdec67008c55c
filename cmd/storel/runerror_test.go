package main

import (
	"strconv"
	"strings"
	"testing"
)

// A run-time error names the user's text, file:line:col with the line and
// a caret, under the default plan, the interpreter and the naive plan.
func TestRunErrorNamesTheSource(t *testing.T) {
	line := "CREATE TENSOR R AS sum(<i,_> in 0:3) sum(<j,_> in 0:3) { i -> 1 / (j - j) };"
	prog := writeFile(t, t.TempDir(), "divzero.sdql", line+"\n")
	col := strings.Index(line, "/ (j")
	want := prog + ":1:" + strconv.Itoa(col+1) + ": integer division by zero\n" + line + "\n" + strings.Repeat(" ", col) + "^\n"
	for _, args := range [][]string{nil, {"--engine", "interp"}, {"--plan", "naive"}, {"--threads", "3"}} {
		code, _, stderr := cli(t, append([]string{"run", prog}, args...)...)
		if code != 1 || stderr != "storel: "+want {
			t.Errorf("%v: exit %d, stderr\n%s\nwant\nstorel: %s", args, code, stderr, want)
		}
	}
}
