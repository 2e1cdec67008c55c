package egraph

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Debugging output: Graphviz drawings and a plain listing.

// WriteDot writes the graph in Graphviz dot syntax for debugging: one
// dotted cluster per e-class (labelled with its ID), one box per e-node,
// and an edge from each node to the cluster of each child. Render with
// `dot -Tsvg`. The graph is rebuilt first if dirty.
func (g *EGraph[D]) WriteDot(w io.Writer) error {
	g.ensureClean()
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph egraph {")
	fmt.Fprintln(bw, "  compound=true;")
	fmt.Fprintln(bw, "  clusterrank=local;")
	fmt.Fprintln(bw, "  node [shape=box, fontname=\"monospace\"];")
	for c := range g.Classes() {
		fmt.Fprintf(bw, "  subgraph cluster_%d {\n    style=dotted;\n    label=%q;\n", c, strconv.Itoa(int(c)))
		for i, nid := range g.classes[c].nodes {
			n := g.Node(nid)
			fmt.Fprintf(bw, "    \"%d.%d\" [label=%s];\n", c, i, dotQuote(g.lang.Format(n.Op, n.Payload)))
		}
		fmt.Fprintln(bw, "  }")
	}
	for c := range g.Classes() {
		for i, nid := range g.classes[c].nodes {
			n := g.Node(nid)
			for j, k := range n.Children {
				// Point at the child's first node, clipped to its cluster.
				attrs := fmt.Sprintf("lhead=cluster_%d", k)
				if len(n.Children) > 1 {
					attrs += fmt.Sprintf(", label=%d", j)
				}
				if k == c {
					// An edge into its own cluster cannot be clipped.
					attrs = fmt.Sprintf("label=%d", j)
				}
				fmt.Fprintf(bw, "  \"%d.%d\" -> \"%d.0\" [%s];\n", c, i, k, attrs)
			}
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// Dot returns WriteDot's output as a string.
func (g *EGraph[D]) Dot() string {
	var b strings.Builder
	_ = g.WriteDot(&b) // a strings.Builder does not fail
	return b.String()
}

// Dump lists every class with its nodes, one class per line, children
// written as class IDs: "3: (+ 1 2) (+ 2 1)". Handy in test failures.
func (g *EGraph[D]) Dump() string {
	g.ensureClean()
	var b strings.Builder
	for c := range g.Classes() {
		fmt.Fprintf(&b, "%d:", c)
		for _, nid := range g.classes[c].nodes {
			n := g.Node(nid)
			head := g.lang.Format(n.Op, n.Payload)
			if len(n.Children) == 0 {
				fmt.Fprintf(&b, " %s", head)
				continue
			}
			fmt.Fprintf(&b, " (%s", head)
			for _, k := range n.Children {
				fmt.Fprintf(&b, " %d", k)
			}
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
