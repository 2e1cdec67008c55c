package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/storel/storel/ir"
)

// declined is an outermost sum the loop-nest IR left to the older paths.
type declined struct {
	e   *ir.Expr
	why string
}

// Explain writes the kernel's loop nests: per loop the iterator, how it
// runs, its guards and how they are discharged, its lets, its sink and
// its parallel split; then the sums left to the older paths and why.
func (k *Kernel) Explain(w io.Writer) {
	inner := map[*nloop]bool{}
	for _, nl := range k.nests {
		for _, c := range nl.children() {
			inner[c] = true
		}
	}
	n := 0
	for _, nl := range k.nests {
		if !inner[nl] {
			nl.explain(w, "", k.threads)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "no loop nests")
	}
	for _, d := range k.declined {
		fmt.Fprintf(w, "older path: %s: %s\n", loopHead(d.e), d.why)
	}
	if k.alt != nil {
		fmt.Fprintln(w, "with a hash map whose first-level keys no position table covers (negative or sparse), each row looked up by key is found by a probe:")
		k.alt.Explain(w)
	}
}

func loopHead(e *ir.Expr) string {
	if e.Op == ir.OpMerge {
		return fmt.Sprintf("merge(<%s, %s, %s> in <%s, %s>)", e.Vars[0], e.Vars[1], e.Vars[2], ir.Format(e.Args[0]), ir.Format(e.Args[1]))
	}
	return fmt.Sprintf("sum(<%s, %s> in %s)", e.Vars[0], e.Vars[1], ir.Format(e.Args[0]))
}

// children are the loops run in nl's iterations.
func (nl *nloop) children() []*nloop {
	var out []*nloop
	for s := nl.stmt; s != nil; s = s.next {
		if s.loop != nil {
			out = append(out, s.loop)
		}
	}
	return out
}

func (nl *nloop) explain(w io.Writer, ind string, threads int) {
	fmt.Fprintf(w, "%sloop %s\n", ind, loopHead(nl.e))
	in := ind + "    "
	fmt.Fprintf(w, "%siterator: %s\n", in, nl.info.iter)
	exec := nl.info.exec
	if v := nl.vec; v != nil {
		if nl.rowRange {
			exec += "; in position space, bounds laid out row by row"
		}
		if nl.laid {
			exec += "; in position space, each row's entries laid out in the block"
		}
		switch {
		case v.dot != nil && v.dot.in != nil:
			exec += "; in position space, rows' sums by the segmented dot primitive over the terms whose index the guards pass"
		case v.dot != nil:
			exec += fmt.Sprintf("; in position space, rows' sums by the segmented dot primitive, %d partial sums a row", dotLanes)
		case v.scatter != nil:
			exec += "; in position space, rows by the scale-and-scatter primitive"
		}
		exec += fmt.Sprintf("; a call of at most %d positions lane by lane", shortRun)
	}
	if nl.flat != nil {
		for _, s := range nl.flat.steps {
			if r := s.rowDot; r != nil && len(r.e) > 0 {
				exec += "; each row's value (the sum below times " + formatFactors(r.e) + ")" +
					", added at its key in place by the segmented dot primitive, which applies the factors"
			} else if s.postVec != nil {
				exec += "; the factors " + ir.Format(replaceNode(s.postOf, s.sumOf, &ir.Expr{Op: ir.OpVar, Name: "(the sum below)", Type: s.sumOf.Type})) +
					" over a block's rows in batches"
			}
			if s.letVec != nil {
				exec += "; the let " + s.name + " over a block's rows in batches"
			}
			if s.keyVec != nil {
				exec += "; the rows' keys " + ir.Format(s.keyE) + " and values into the sink in batches"
			}
		}
	}
	fmt.Fprintf(w, "%sruns: %s\n", in, exec)
	for _, g := range nl.info.guards {
		fmt.Fprintf(w, "%sguard %s\n", in, g)
	}
	for _, l := range nl.info.lets {
		fmt.Fprintf(w, "%slet %s\n", in, l)
	}
	fmt.Fprintf(w, "%ssink: %s\n", in, nl.info.sink)
	fmt.Fprintf(w, "%ssplit: %s\n", in, nl.splitText(ind == "", threads))
	for _, c := range nl.children() {
		c.explain(w, in, threads)
	}
}

func (nl *nloop) splitText(outer bool, threads int) string {
	switch {
	case !outer:
		return "runs inside its parent's iteration"
	case !nl.split || threads < 2:
		return "one worker"
	}
	ranges := "ranges of iterations"
	if nl.workBy != "" {
		ranges = "ranges of equal work (iterations + " + nl.workBy + ")"
	}
	workers, waking := fmt.Sprint(threads), ""
	if threads > 2 && workerWake > 0 {
		waking = fmt.Sprintf(" (fewer for a short run: about the square root of its time over %v, at least 2)", workerWake)
		workers += waking
	}
	claimed := fmt.Sprintf("%s workers taking %d %s in turn", workers, threads*claimsPerWorker, ranges)
	switch {
	case nl.rowsIfIncreasing:
		return claimed + ", writing disjoint rows of one shared result, a row workspace per worker (no private copies), where the keys read increase (checked per run); otherwise private results merged in worker order"
	case nl.rows && nl.sink.spec != nil && nl.sink.spec.depth > 1:
		return claimed + ", writing disjoint rows of one shared result, a row workspace per worker (no private copies)"
	case nl.rows:
		return claimed + ", writing disjoint entries of one shared result (no private copies)"
	case nl.inOrder && !nl.rows:
		text := claimed + ", a private result per range, appended in range order"
		if nl.inOrderIfIncreasing {
			text += " where the keys read increase (checked per run); otherwise one range per worker, private results merged in worker order"
		}
		return text
	case nl.sink.spec != nil && nl.sink.spec.depth == 1 && nl.sink.spec.dense:
		text := fmt.Sprintf("%d workers dealt %d %s in rotation, one private row each, merged in worker order; fewer workers (one: no private row) where merging their rows costs more than they save",
			threads, threads*claimsPerWorker, ranges)
		if waking != "" {
			text += "; the workers run on goroutines that claim them in turn" + waking
		}
		return text
	case nl.sink.spec != nil:
		return fmt.Sprintf("%d workers over %s, private results merged in worker order", threads, ranges)
	}
	return claimed + ", partial sums added in chunk order"
}

// String is the explanation as text.
func (k *Kernel) String() string {
	var b strings.Builder
	k.Explain(&b)
	return b.String()
}

// formatFactors lists factors as "a", "a and b", "a, b and c".
func formatFactors(fs []*ir.Expr) string {
	out := ""
	for k, f := range fs {
		switch {
		case k == 0:
		case k == len(fs)-1:
			out += " and "
		default:
			out += ", "
		}
		out += ir.Format(f)
	}
	return out
}
