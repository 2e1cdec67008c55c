package shard

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Source is one part's result, entry by entry in increasing coordinate
// order (as storel run writes .tns).
type Source interface {
	// Next returns the next entry (coords is reused between calls), or
	// ok = false at the end.
	Next() (coords []int64, i int64, f float64, ok bool, err error)
	Close() error
}

// Combine returns the entries of the sum of n parts' results of type t,
// opening part p's with open(p) each time the entries are visited
// (storage.WriteEntries may visit them twice), and a function that
// reports the first error met. Disjoint parts are concatenated in order;
// otherwise the parts are merged and equal keys added, in part order.
// Either way only one entry per part is held. A zero sum is left out, as a
// run writes only non-zero entries; a scalar result is always visited.
func Combine(n int, t ir.Type, disjoint bool, open func(p int) (Source, error)) (storage.Entries, func() error) {
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	real := t.Base == ir.Real
	each := func(visit func([]int64, int64, float64)) {
		srcs := make([]Source, 0, n)
		defer func() {
			for _, s := range srcs {
				if err := s.Close(); err != nil {
					fail(err)
				}
			}
		}()
		for p := 0; p < n; p++ {
			s, err := open(p)
			if err != nil {
				fail(err)
				return
			}
			srcs = append(srcs, s)
		}
		if t.Depth == 0 {
			var si int64
			var sf float64
			for p, s := range srcs {
				_, i, f, ok, err := s.Next()
				if err != nil {
					fail(err)
					return
				}
				if !ok {
					fail(fmt.Errorf("part %d: no value for a scalar result", p))
					return
				}
				si, sf = si+i, sf+f
			}
			if real {
				si = int64(sf)
			} else {
				sf = float64(si)
			}
			visit(nil, si, sf)
			return
		}
		if disjoint {
			concat(srcs, visit, fail)
			return
		}
		merge(srcs, real, visit, fail)
	}
	return each, func() error { return firstErr }
}

// concat visits disjoint parts one after the other, checking that keys
// keep increasing across them (else the split was not disjoint).
func concat(srcs []Source, visit func([]int64, int64, float64), fail func(error)) {
	var last []int64
	for p, s := range srcs {
		for {
			coords, i, f, ok, err := s.Next()
			if err != nil {
				fail(err)
				return
			}
			if !ok {
				break
			}
			if last != nil && slices.Compare(coords, last) <= 0 {
				fail(fmt.Errorf("part %d: key %v does not follow the previous part's last key %v: the parts overlap", p, plus1(coords), plus1(last)))
				return
			}
			last = append(last[:0], coords...)
			visit(coords, i, f)
		}
	}
}

func plus1(c []int64) []int64 {
	out := make([]int64, len(c))
	for i, x := range c {
		out[i] = x + 1
	}
	return out
}

// head is a part's current entry in the merge.
type head struct {
	coords []int64
	i      int64
	f      float64
	part   int
}

type heads []*head

func (h heads) Len() int { return len(h) }
func (h heads) Less(a, b int) bool {
	if c := slices.Compare(h[a].coords, h[b].coords); c != 0 {
		return c < 0
	}
	return h[a].part < h[b].part
}
func (h heads) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge visits the key-wise sum of sorted parts.
func merge(srcs []Source, real bool, visit func([]int64, int64, float64), fail func(error)) {
	h := heads{}
	advance := func(x *head) bool {
		coords, i, f, ok, err := srcs[x.part].Next()
		if err != nil {
			fail(err)
			return false
		}
		if !ok {
			return true
		}
		if x.coords != nil && slices.Compare(coords, x.coords) <= 0 {
			fail(fmt.Errorf("part %d: key %v after %v: a part's result must be sorted, each key once", x.part, plus1(coords), plus1(x.coords)))
			return false
		}
		x.coords = append(x.coords[:0], coords...)
		x.i, x.f = i, f
		heap.Push(&h, x)
		return true
	}
	for p := range srcs {
		if !advance(&head{part: p}) {
			return
		}
	}
	key := []int64{}
	for h.Len() > 0 {
		x := heap.Pop(&h).(*head)
		key = append(key[:0], x.coords...)
		si, sf := x.i, x.f
		if !advance(x) {
			return
		}
		for h.Len() > 0 && slices.Equal(h[0].coords, key) {
			y := heap.Pop(&h).(*head)
			si, sf = si+y.i, sf+y.f
			if !advance(y) {
				return
			}
		}
		if real {
			if sf != 0 {
				visit(key, int64(sf), sf)
			}
		} else if si != 0 {
			visit(key, si, float64(si))
		}
	}
}

// tnsSource reads a result written by storel run as .tns: per line the
// 1-based coordinates, then the value.
type tnsSource struct {
	path   string
	f      *os.File
	r      *bufio.Reader
	line   int
	depth  int
	real   bool
	coords []int64
}

// OpenTNS opens a .tns result of type t for Combine.
func OpenTNS(path string, t ir.Type) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &tnsSource{path: path, f: f, r: bufio.NewReaderSize(f, 1<<16), depth: t.Depth, real: t.Base == ir.Real, coords: make([]int64, t.Depth)}, nil
}

func (s *tnsSource) Close() error { return s.f.Close() }

func (s *tnsSource) Next() ([]int64, int64, float64, bool, error) {
	for {
		text, err := s.r.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, 0, 0, false, fmt.Errorf("%s: %v", s.path, err)
		}
		if text == "" && err == io.EOF {
			return nil, 0, 0, false, nil
		}
		s.line++
		fields := strings.Fields(text)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		bad := func(format string, args ...any) ([]int64, int64, float64, bool, error) {
			return nil, 0, 0, false, fmt.Errorf("%s:%d: %s", s.path, s.line, fmt.Sprintf(format, args...))
		}
		if len(fields) != s.depth+1 {
			return bad("%d fields, want %d coordinates and a value", len(fields), s.depth)
		}
		for m := 0; m < s.depth; m++ {
			k, err := strconv.ParseInt(fields[m], 10, 64)
			if err != nil || k < 1 {
				return bad("coordinate %q is not a positive integer", fields[m])
			}
			s.coords[m] = k - 1
		}
		v := fields[s.depth]
		if s.real {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad("value %q is not a number", v)
			}
			return s.coords, int64(f), f, true, nil
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad("value %q is not an integer", v)
		}
		return s.coords, i, float64(i), true, nil
	}
}

// Write combines the parts' results (see Combine) into w in format (tns,
// mtx or npy), sized as plan says, as storel run writes a result.
func Write(w io.Writer, format string, plan *Plan, open func(p int) (Source, error)) error {
	each, errf := Combine(plan.Parts, plan.Type, plan.Disjoint, open)
	err := storage.WriteEntries(w, format, each, plan.Type, storage.WriteOptions{Dims: plan.Dims, MinDims: plan.MinDims})
	if e := errf(); e != nil {
		return e
	}
	return err
}
