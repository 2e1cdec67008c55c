package opt

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// Dot writes the optimized plan as a Graphviz graph (render with
// dot -Tsvg): one box per operator, loops and merges highlighted, edges
// labelled with the child's role; leaves and small scalar subterms are
// written inline.
func (r *Result) Dot(w io.Writer) error {
	return WriteDot(w, r.Plan, fmt.Sprintf("estimated cost %s", r.Cost))
}

// WriteDot writes plan e as a Graphviz graph with the given title.
func WriteDot(w io.Writer, e *ir.Expr, title string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph plan {")
	fmt.Fprintf(bw, "  label=%s;\n  labelloc=t;\n", strconv.Quote(title))
	fmt.Fprintln(bw, "  node [shape=box, fontname=\"monospace\"];")
	fmt.Fprintln(bw, "  edge [fontname=\"monospace\", fontsize=10];")
	n := 0
	var walk func(e *ir.Expr) int
	walk = func(e *ir.Expr) int {
		n++
		id := n
		label, style := dotLabel(e)
		fmt.Fprintf(bw, "  n%d [label=%s%s];\n", id, strconv.Quote(label), style)
		if inlineInDot(e) {
			return id
		}
		for i, a := range e.Args {
			c := walk(a)
			fmt.Fprintf(bw, "  n%d -> n%d [label=%s];\n", id, c, strconv.Quote(argRole(e, i)))
		}
		return id
	}
	walk(e)
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// inlineInDot reports whether e is drawn as one box with its text.
func inlineInDot(e *ir.Expr) bool {
	if len(e.Args) == 0 {
		return true
	}
	if e.Type.Depth > 0 || e.Op == ir.OpSum || e.Op == ir.OpMerge || e.Op == ir.OpLet || e.Op == ir.OpIf {
		return false
	}
	return len(e.String()) <= 30
}

func dotLabel(e *ir.Expr) (label, style string) {
	if inlineInDot(e) {
		return e.String() + "\n" + e.Type.String(), ""
	}
	switch e.Op {
	case ir.OpSum:
		return fmt.Sprintf("sum <%s, %s>", e.Vars[0], e.Vars[1]), ", style=filled, fillcolor=lightblue"
	case ir.OpMerge:
		return fmt.Sprintf("merge <%s>", strings.Join(e.Vars, ", ")), ", style=filled, fillcolor=lightgreen"
	case ir.OpLet:
		return "let " + e.Vars[0], ""
	case ir.OpSingleton:
		return "{ " + e.Ann.String() + " k -> v }", ", style=filled, fillcolor=lightyellow"
	case ir.OpIf:
		return "if", ""
	case ir.OpCall:
		return e.Name, ""
	case ir.OpLookup:
		return "lookup", ""
	case ir.OpSubArray:
		return "subarray", ""
	case ir.OpRange:
		return "range", ""
	}
	return e.Op.String(), ""
}

func argRole(e *ir.Expr, i int) string {
	switch e.Op {
	case ir.OpSum:
		return [...]string{"in", "body"}[i]
	case ir.OpMerge:
		return [...]string{"in 1", "in 2", "body"}[i]
	case ir.OpLet:
		return [...]string{"=", "in"}[i]
	case ir.OpIf:
		return [...]string{"cond", "then", "else"}[i]
	case ir.OpSingleton:
		return [...]string{"key", "value"}[i]
	case ir.OpLookup:
		return [...]string{"dict", "key"}[i]
	case ir.OpSubArray:
		return [...]string{"array", "from", "to"}[i]
	case ir.OpRange:
		return [...]string{"from", "to"}[i]
	}
	return ""
}
