package engine

import (
	"slices"
	"testing"
)

// TestSeqRowsWidthChunks stores rows of several shapes in sequential
// mode's chunks: dense rows of one width (recorded by their keys alone),
// then a list and a dense row of another width after them in the same
// block (the chunk's rows recorded from then on), a dense row in a block
// of its own, and two workers' rows appended one after the other. Every
// row reads back as stored (its values where they were written, its list
// keys), and rows of one width record no ends.
func TestSeqRowsWidthChunks(t *testing.T) {
	type row struct {
		vals []float64
		cols []int32 // nil: dense
	}
	build := func(key int64, shapes []int, blockAt map[int]bool) (*seqRows, []row) {
		vals, cols := make([]float64, 200), make([]int32, 200)
		for i := range vals {
			vals[i] = float64(key*1000) + float64(i+1)
		}
		s := &seqRows{key: key - 1}
		var rows []row
		at, ct := 0, 0
		for r, n := range shapes {
			if blockAt[r] {
				at += 7 // a gap: the row does not follow the chunk's values
			}
			rw := row{vals: vals[at : at+abs(n)]}
			if n < 0 { // a list of -n keys
				rw.cols = cols[ct : ct-n]
				for q := range rw.cols {
					rw.cols[q] = int32(2 * q)
				}
				ct -= n
			}
			at += abs(n)
			s.key++
			store(s, chunkReals, rw.vals, rw.cols)
			rows = append(rows, rw)
		}
		return s, rows
	}
	check := func(name string, s *seqRows, rows []row) {
		t.Helper()
		if len(s.keys) != len(rows) {
			t.Fatalf("%s: %d rows recorded, want %d", name, len(s.keys), len(rows))
		}
		ci := 0
		for r, want := range rows {
			ci = s.chunkFrom(r, ci)
			if got := s.chunkOf(r); got != ci {
				t.Fatalf("%s: row %d in chunk %d by search, %d in order", name, r, got, ci)
			}
			v0, v1, c0, c1 := s.span(r, ci)
			ch := &s.chunks[ci]
			got := ch.reals[v0:v1]
			if len(got) != len(want.vals) || &got[0] != &want.vals[0] {
				t.Errorf("%s: row %d reads %v, want %v", name, r, got, want.vals)
			}
			if gc := ch.cols[c0:c1]; !slices.Equal(gc, want.cols) || len(gc) > 0 && &gc[0] != &want.cols[0] {
				t.Errorf("%s: row %d has keys %v, want %v", name, r, gc, want.cols)
			}
		}
	}
	s, rows := build(0, []int{4, 4, 4, 4}, nil)
	check("one width", s, rows)
	if len(s.chunks) != 1 || len(s.vEnds)+len(s.cEnds) > 0 {
		t.Errorf("4 rows of width 4: %d chunks, %d and %d ends recorded", len(s.chunks), len(s.vEnds), len(s.cEnds))
	}
	mixed := []int{4, 4, 4, -3, 4, 2, 4, 4, -2, 3, 3}
	s, rows = build(0, mixed, map[int]bool{6: true, 9: true})
	check("mixed", s, rows)
	if len(s.chunks) != 3 || s.chunks[2].width != 3 {
		t.Errorf("mixed: chunks %+v, want 3, the last of width 3", s.chunks)
	}
	o, orows := build(100, []int{5, 5, -4, 5, 6, 6}, map[int]bool{3: true})
	check("second", o, orows)
	s.appendRows(o)
	check("appended", s, append(rows, orows...))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
