package opt

import (
	"math"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Footprint is the estimated memory a plan builds, from the structured
// cardinalities of §5.5: its result, and the largest dictionary it binds
// with a let (a temporary). A caller with a memory budget refuses a plan
// whose footprint exceeds it before running it.
type Footprint struct {
	Result     float64 // bytes
	ResultCard Card
	Temp       float64  // bytes of the largest temporary
	TempCard   Card     // its cardinality
	TempExpr   *ir.Expr // the let that binds it; nil if none
}

// Bytes per entry of a built level: a slot of a dense array, a key and a
// value of a sorted list, an entry of a Go map with its share of the table
// (map[int64]float64 under Go 1.26 takes 24 to 36 bytes an entry, as full
// as its table happens to be: 36 after 2^20 inserts, 24 after 1.5*2^20).
// A logical level may become a list or a map: the map's figure. A level of
// a physical array or hash map is read in place.
var layoutBytes = [...]float64{LayoutNone: 16, LayoutArray: 0, LayoutDense: 8, LayoutHash: 36, LayoutLogical: 36, LayoutStored: 0}

// CardBytes estimates the bytes of a dictionary of cardinality c.
func CardBytes(c Card) float64 {
	total, parents := 0.0, 1.0
	for _, l := range c {
		n := parents * l.Size
		total += n * layoutBytes[l.Layout]
		parents = n
	}
	if math.IsNaN(total) {
		return 0
	}
	return total
}

// EstimateFootprint estimates the memory the typed plan builds over the
// data in st (stats from GatherStats).
func EstimateFootprint(plan *ir.Expr, st storage.Store, stats *Stats) (Footprint, error) {
	s := newSession(st, stats)
	p := uniquify(plan)
	s.reserveNames(p)
	id, err := s.addExpr(p)
	if err != nil {
		return Footprint{}, err
	}
	s.g.Rebuild()
	fp := Footprint{ResultCard: s.g.Data(id).Card}
	fp.Result = CardBytes(fp.ResultCard)
	var bad error
	ir.Walk(p, func(e *ir.Expr) bool {
		if bad != nil || e.Op != ir.OpLet || e.Args[0].Type.Depth == 0 {
			return bad == nil
		}
		c, err := s.addExpr(e.Args[0])
		if err != nil {
			bad = err
			return false
		}
		card := s.g.Data(c).Card
		if b := CardBytes(card); b > fp.Temp {
			fp.Temp, fp.TempCard, fp.TempExpr = b, card, e
		}
		return true
	})
	return fp, bad
}
