package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// uniqueCheck verifies, for one run of a sum, that the keys its @unique
// singletons produce are distinct (Options.CheckUnique).
type uniqueCheck struct {
	sum     *ir.Expr
	pending []int64 // keys of the enclosing chain singletons in this iteration
	// recorded is set when a complete key has been recorded since the
	// last singleton of the chain started: its ancestors then skip.
	recorded bool
	seen     map[string]bool
}

// uniqueSite places a singleton in a check: depth 0 is a singleton the
// body produces directly, depth 1 one in its value, and so on.
type uniqueSite struct {
	check *uniqueCheck
	depth int
}

// startUniqueCheck registers the @unique singletons that the body of sum
// node e produces (looking through let bodies and if branches, and into
// the values of @unique singletons for tuple keys) and returns the
// function that ends the check.
func (in *interp) startUniqueCheck(e *ir.Expr) (end func()) {
	if !in.opt.CheckUnique {
		return func() {}
	}
	c := &uniqueCheck{sum: e, seen: map[string]bool{}}
	saved := map[*ir.Expr]uniqueSite{}
	had := map[*ir.Expr]bool{}
	var collect func(b *ir.Expr, depth int)
	collect = func(b *ir.Expr, depth int) {
		switch b.Op {
		case ir.OpLet:
			collect(b.Args[1], depth)
		case ir.OpIf:
			for _, br := range b.Args[1:] {
				collect(br, depth)
			}
		case ir.OpSingleton:
			if b.Ann != ir.AnnUnique {
				return
			}
			if old, ok := in.uniqueSites[b]; ok {
				saved[b], had[b] = old, true
			}
			if in.uniqueSites == nil {
				in.uniqueSites = map[*ir.Expr]uniqueSite{}
			}
			in.uniqueSites[b] = uniqueSite{c, depth}
			collect(b.Args[1], depth+1)
		}
	}
	collect(e.Args[1], 0)
	return func() {
		for n, s := range in.uniqueSites {
			if s.check != c {
				continue
			}
			if had[n] {
				in.uniqueSites[n] = saved[n]
			} else {
				delete(in.uniqueSites, n)
			}
		}
	}
}

// enter is called when the singleton at depth has produced key k.
func (c *uniqueCheck) enter(depth int, k int64) {
	c.pending = append(c.pending[:depth], k)
	c.recorded = false
}

// record is called when the singleton at depth has been evaluated. If no
// deeper @unique singleton completed the key, the key ends here: it must
// not have been produced before in this run of the sum.
func (c *uniqueCheck) record(e *ir.Expr, depth int) error {
	defer func() { c.pending = c.pending[:depth] }()
	if c.recorded {
		return nil
	}
	c.recorded = true
	var sb strings.Builder
	for i, k := range c.pending {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatInt(k, 10))
	}
	key := sb.String()
	if c.seen[key] {
		if len(c.pending) > 1 {
			key = "(" + key + ")"
		}
		where := ""
		if c.sum.Pos.IsValid() {
			where = fmt.Sprintf(" (the sum at %s)", c.sum.Pos)
		}
		return errorf(e, "@unique promise broken: the enclosing sum%s produces key %s more than once", where, key)
	}
	c.seen[key] = true
	return nil
}
