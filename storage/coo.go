package storage

import (
	"fmt"

	"github.com/storel/storel/ir"
)

// COO is a tensor in coordinate form, as read from a file: entry p has
// coordinates Coords[0][p], ..., Coords[d-1][p] (0-based) and value Vals[p].
// Entries may come in any order and may repeat (builders sum repeats).
type COO struct {
	Dims   []int64   // logical size of each mode
	Coords [][]int64 // Coords[m][p]: coordinate of entry p in mode m
	Vals   []float64 // values; 1 for pattern files
	Field  string    // "real", "integer" or "pattern"
}

// Field names.
const (
	FieldReal    = "real"
	FieldInteger = "integer"
	FieldPattern = "pattern"
)

// Order returns the number of modes.
func (c *COO) Order() int { return len(c.Dims) }

// Len returns the number of stored entries (repeats counted).
func (c *COO) Len() int { return len(c.Vals) }

// Elem is the element type the tensor's values are stored as: int for
// integer and pattern data, real otherwise.
func (c *COO) Elem() ir.Base {
	if c.Field == FieldInteger || c.Field == FieldPattern {
		return ir.Int
	}
	return ir.Real
}

// Check verifies that the slices agree in length and every coordinate is
// within its mode's size.
func (c *COO) Check() error {
	if len(c.Coords) != len(c.Dims) {
		return fmt.Errorf("tensor has %d dimensions but %d coordinate columns", len(c.Dims), len(c.Coords))
	}
	for m, d := range c.Dims {
		if d < 0 {
			return fmt.Errorf("dimension %d has negative size %d", m+1, d)
		}
		if len(c.Coords[m]) != len(c.Vals) {
			return fmt.Errorf("mode %d has %d coordinates for %d values", m+1, len(c.Coords[m]), len(c.Vals))
		}
		for p, x := range c.Coords[m] {
			if x < 0 || x >= d {
				return fmt.Errorf("entry %d: coordinate %d of mode %d is outside 0..%d", p+1, x, m+1, d-1)
			}
		}
	}
	return nil
}

// newCOO returns an empty COO of the given order with room for n entries.
func newCOO(order int, n int) *COO {
	c := &COO{Dims: make([]int64, order), Coords: make([][]int64, order)}
	for m := range c.Coords {
		c.Coords[m] = make([]int64, 0, n)
	}
	c.Vals = make([]float64, 0, n)
	return c
}

// preallocCap bounds how many entries a reader reserves from a count
// declared in a header, so a lying header cannot exhaust memory before the
// data proves it.
func preallocCap(n int64) int {
	const limit = 1 << 22
	if n < 0 {
		return 0
	}
	if n > limit {
		return limit
	}
	return int(n)
}
