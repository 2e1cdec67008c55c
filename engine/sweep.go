package engine

// Sweeping narrow rows. In workspace mode (workspace.go) a row's keys
// are tracked as they are written, by a mark in a bitmap of the slice or
// in a list, so that compaction visits the keys written and no others.
// On a slice as narrow as MMM's 250 columns that bookkeeping costs more
// than it saves: the scatter loop's read-modify-write of the bitmap's
// word, and then a loop per marked key (trailing zeros, load, two
// stores), about 3 ns a key. With AVX-512 the whole slice is compacted
// instead, eight keys at a time by a compare with zero and two compress
// instructions (sweep_amd64.s), and the scatter loops write no marks
// (workspace.sweep). A row of 250 keys costs 32 steps, 85 ns, whether it
// holds 10 entries or 200 (the Go loop over every key: 410 ns).
// TestSweepRatio compares sweeping with marking on MMM by a narrow
// factor.

// The sweep keeps what compaction keeps: the non-zero entries (NaN
// included, -0 not), in key order. A row is swept when the scatter loop
// that opens it would have marked it (its slice at most bitmapFactor
// times the keys of the call) and the slice is at most sweepMax long.

// sweepMax is the longest slice swept whole.
const sweepMax = 1 << 12

// sweepGo writes the non-zero entries of ws, whose keys are base,
// base+1, ..., to keys and vals in key order, zeroes ws and returns the
// number of entries. keys and vals have room for len(ws) entries.
func sweepGo[V int64 | float64](ws []V, base int32, keys []int32, vals []V) int {
	keys, vals = keys[:len(ws)], vals[:len(ws)]
	n := 0
	for k, v := range ws {
		keys[n], vals[n] = base+int32(k), v
		n += isNonZero(v)
		ws[k] = 0
	}
	return n
}

// keepGo writes the non-zero values of src (NaN included, -0 not),
// whose keys are base, base+1, ..., to keys and vals in key order and
// returns their number; src is left as it is, and may be vals itself
// (each value is written at or before where it was read). One pass
// without branches: each value is written at the count of non-zeros
// before it, which then grows by one only for a non-zero, so a run of
// few non-zeros (a dense copy of a sparse matrix) costs what a run with
// none does. keys and vals have room for len(src) entries.
func keepGo(src []float64, base int32, keys []int32, vals []float64) int {
	keys, vals = keys[:len(src)], vals[:len(src)]
	n := 0
	for q, v := range src {
		keys[n], vals[n] = base+int32(q), v
		n += isNonZero(v)
	}
	return n
}

// sweepRow is sweepGo from key 0, in assembly for reals where it can.
func sweepRow[V int64 | float64](ws []V, keys []int32, vals []V) int {
	if r, ok := any(ws).([]float64); ok {
		return sweepReals(r, keys, any(vals).([]float64))
	}
	return sweepGo(ws, 0, keys, vals)
}

// sweeps reports whether the open row of w, over a slice of n keys,
// should be swept rather than marked, and if so puts w in sweep mode. A
// row already marked stays marked: the two modes never mix.
func (w *workspace) sweeps(n int) bool {
	if w.sweep {
		return true
	}
	if w.marking || !useSweep || n > sweepMax {
		return false
	}
	w.sweep = true
	return true
}

// sweptRow, when set (by tests), is called for every row swept.
var sweptRow func()

// sweepLeaf is releaseLeaf for a row in sweep mode: every entry of the
// slice is visited (and zeroed), and touched is only reset.
func sweepLeaf[V int64 | float64](b *builder, w *workspace, own, shared, dense, block *[]V, spill *map[int64]V) bool {
	ws := *shared
	w.sweep, w.touched = false, w.touched[:0]
	if sweptRow != nil {
		sweptRow()
	}
	n, hi := 0, int64(-1)
	var keys []int32
	var vals []V
	need := len(ws)
	if need > 0 {
		keys, vals = carve(&w.keyBlock, block, need, w.carved, w.out)
		if n = sweepRow(ws, keys, vals); n > 0 {
			hi = int64(keys[n-1])
		}
	}
	if n > 0 && hi+1 <= denseLeafFactor*int64(n) {
		// From the list (not committed: the room is reused) to a slice.
		row := carveDense(dense, int(hi+1), &w.carvedDense, w.out)
		for p, k := range keys[:n] {
			row[k] = vals[p]
		}
		*own = row
		w.startStreak(hi + 1)
		b.ws = nil
		return true
	}
	keepList(b, w, own, block, keys, vals, need, n, takeSpill(spill))
	if n > 0 {
		w.denseRows = 0
	}
	return false
}

// appendNonZeroKeys appends the keys of the non-zero entries of ws to
// keys.
func appendNonZeroKeys[V int64 | float64](keys []int64, ws []V) []int64 {
	for k, v := range ws {
		if v != 0 {
			keys = append(keys, int64(k))
		}
	}
	return keys
}
