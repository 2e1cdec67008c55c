package engine

import (
	"github.com/storel/storel/ir"
)

// Segments read in place. The loop-nest IR opens a segment A(P(x + c1):
// Q(y + c2)) of an index array (a CSR row, a CSF fiber) by reading its
// bounds straight from P and Q, not through the window's closures; the
// merge-dot primitive (dotMerge) sums the products of two such segments'
// values over their matching keys.

// segBounds are the bounds of a segment A(P(x + c1):Q(y + c2)) of a
// physical array A, read in place from the physical int arrays P and Q;
// any irregularity goes through the general window closure, which reports
// the exact error.
type segBounds struct {
	arr            *cell
	lo, hi         *cell
	loSlot, hiSlot int
	loOff, hiOff   int64
	win            func(fr *frame) (int64, int64, bool)
}

// inPlace reads the bounds in place; false, with no effect, when they
// are out of order or past the segmented array.
func (s *segBounds) inPlace(fr *frame) (int64, int64, bool) {
	kl, kh := fr.i[s.loSlot]+s.loOff, fr.i[s.hiSlot]+s.hiOff
	if pa, pb := s.lo.ints, s.hi.ints; uint64(kl) < uint64(len(pa)) && uint64(kh) < uint64(len(pb)) {
		if l, h := pa[kl], pb[kh]; 0 <= l && l <= h && h <= s.arr.n {
			return l, h, true
		}
	}
	return 0, 0, false
}

// sorted reports whether every segment the bounds open in this run is
// sorted, as storage remembers of the bound arrays: the array never
// decreases, or the bounds are P(x + c):P(x + c + 1) and the array
// increases within every segment of P (a CSR row's, a CSF fiber's
// keys). A merge then checks no segment's order as it opens it, a read
// of the array's descents at both ends of every segment, which is a
// cache miss per row where the rows are short and the array long.
func (s *segBounds) sorted() bool {
	if s.arr.nondecr {
		return true
	}
	rows := s.lo == s.hi && s.loSlot == s.hiSlot && s.hiOff == s.loOff+1
	return rows && s.arr.array != nil && s.lo.array != nil && s.arr.array.IncreasesWithin(s.lo.array)
}

func (s *segBounds) bounds(fr *frame) (int64, int64, bool) {
	if l, h, ok := s.inPlace(fr); ok {
		return l, h, true
	}
	return s.win(fr)
}

// segment compiles the bounds of sub = A(lo:hi) as window does, and
// returns segBounds too when they have the form P(x + c) (CSR segments).
func (c *compiler) segment(sub *ir.Expr, cl *cell) (func(fr *frame) (int64, int64, bool), *segBounds) {
	win := c.window(sub, cl)
	bound := func(e *ir.Expr) (*cell, int, int64, bool) {
		if e.Op != ir.OpLookup || e.Args[0].Op != ir.OpGlobal {
			return nil, 0, 0, false
		}
		pc := c.cell(e.Args[0])
		if pc.info.Kind != ir.ObjArray || pc.info.Elem != ir.Int {
			return nil, 0, 0, false
		}
		k := c.keyFn(e.Args[1])
		if !k.aff {
			return nil, 0, 0, false
		}
		return pc, k.affSlot, k.affOff, true
	}
	pl, sl, ol, ok1 := bound(sub.Args[1])
	ph, sh, oh, ok2 := bound(sub.Args[2])
	if !ok1 || !ok2 {
		return win, nil
	}
	sb := &segBounds{arr: cl, lo: pl, hi: ph, loSlot: sl, hiSlot: sh, loOff: ol, hiOff: oh, win: win}
	return sb.bounds, sb
}

// dotMerge returns s plus va[i] * vb[j] for every pair of positions of
// the sorted a and b with a[i] == b[j], in the nested loops' order: the
// merge of MTTKRP (B(i,k,:) against D(j,:)). With r, b's seeks start
// where b's table (seekIndex) says: the same positions, found sooner.
func dotMerge(a, b []int64, va, vb []float64, s float64, r *rowIndex, tab []int32) float64 {
	va, vb = va[:len(a)], vb[:len(b)]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		u, w := a[i], b[j]
		switch {
		case u < w:
			i = seek(a, i+1, w)
		case w < u && r != nil:
			j = r.seek(tab, b, j+1, u)
		case w < u:
			j = seek(b, j+1, u)
		default:
			j2 := j + 1
			for j2 < len(b) && b[j2] == u {
				j2++
			}
			for ; i < len(a) && a[i] == u; i++ {
				for jj := j; jj < j2; jj++ {
					s += va[i] * vb[jj]
				}
			}
			j = j2
		}
	}
	return s
}
