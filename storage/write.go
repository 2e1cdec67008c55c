package storage

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/value"
)

// WriteOptions control how results are written.
type WriteOptions struct {
	// Dims gives the size of every mode for .mtx and .npy output; when nil
	// each size is the largest key plus one.
	Dims []int64
}

// WriteValue writes the result v of type t in format "tns", "mtx" or
// "npy" (see WriteValueOpts), sizing .mtx and .npy from the largest keys.
func WriteValue(w io.Writer, format string, v value.Value, t ir.Type) error {
	return WriteValueOpts(w, format, v, t, WriteOptions{})
}

// WriteValueOpts writes the result v of type t:
//   - "tns": one line per non-zero, 1-based coordinates then the value, in
//     increasing coordinate order; a scalar is one line holding its value;
//   - "mtx": Matrix Market coordinate general (integer when every value is
//     an int, real otherwise), for matrices;
//   - "npy": a dense C-order array of int64 (every value an int) or
//     float64; a scalar has shape ().
//
// Reals print in the shortest form that reads back exactly.
func WriteValueOpts(w io.Writer, format string, v value.Value, t ir.Type, opt WriteOptions) error {
	entries, err := resultEntries(v, t)
	if err != nil {
		return err
	}
	switch strings.TrimPrefix(strings.ToLower(format), ".") {
	case "tns":
		return writeTNS(w, entries, t)
	case "mtx":
		return writeMTX(w, entries, t, opt.Dims)
	case "npy":
		return writeDenseNPY(w, entries, t, opt.Dims)
	}
	return fmt.Errorf("unknown output format %q: want tns, mtx or npy", format)
}

// resultEntries flattens v, checking that every entry has t.Depth keys.
func resultEntries(v value.Value, t ir.Type) ([]value.Entry, error) {
	if t.Depth > 0 {
		if _, ok := v.(*value.Dict); !ok {
			if value.IsZero(v) {
				return nil, nil
			}
			return nil, fmt.Errorf("result of type %s is the scalar %s", t, value.Format(v))
		}
	}
	entries := value.Entries(v)
	for _, e := range entries {
		if len(e.Coords) != t.Depth {
			return nil, fmt.Errorf("result of type %s has an entry with %d keys", t, len(e.Coords))
		}
	}
	return entries, nil
}

func formatScalar(v value.Value) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

func writeTNS(w io.Writer, entries []value.Entry, t ir.Type) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := make([]byte, 0, 128)
	for _, e := range entries {
		buf = buf[:0]
		for _, k := range e.Coords {
			if k < 0 {
				return fmt.Errorf("key %d cannot be written as a 1-based coordinate", k)
			}
			buf = strconv.AppendInt(buf, k+1, 10)
			buf = append(buf, ' ')
		}
		buf = append(buf, formatScalar(e.Val)...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	if t.Depth == 0 && len(entries) == 0 {
		bw.WriteString(formatScalar(value.Zero(t)) + "\n")
	}
	return bw.Flush()
}

// resultDims returns the size of each mode: the given dims (checked) or
// the largest key plus one.
func resultDims(entries []value.Entry, depth int, given []int64) ([]int64, error) {
	dims := make([]int64, depth)
	for _, e := range entries {
		for m, k := range e.Coords {
			if k < 0 {
				return nil, fmt.Errorf("key %d in mode %d cannot be written (keys must be non-negative)", k, m+1)
			}
			if k+1 > dims[m] {
				dims[m] = k + 1
			}
		}
	}
	if given == nil {
		return dims, nil
	}
	if len(given) != depth {
		return nil, fmt.Errorf("result has %d dimensions, %d sizes given", depth, len(given))
	}
	for m := range dims {
		if dims[m] > given[m] {
			return nil, fmt.Errorf("key %d in mode %d does not fit the given size %d", dims[m]-1, m+1, given[m])
		}
	}
	return append([]int64(nil), given...), nil
}

// allInts reports whether every value is an int (so the output can be
// integer-typed) and the type says int.
func allInts(entries []value.Entry, t ir.Type) bool {
	if t.Base != ir.Int {
		return false
	}
	for _, e := range entries {
		if _, ok := e.Val.(int64); !ok {
			return false
		}
	}
	return true
}

func writeMTX(w io.Writer, entries []value.Entry, t ir.Type, given []int64) error {
	if t.Depth != 2 {
		return fmt.Errorf("mtx output needs a matrix (Matrix Market), not a value of type %s; use tns", t)
	}
	dims, err := resultDims(entries, 2, given)
	if err != nil {
		return err
	}
	field := "real"
	if allInts(entries, t) {
		field = "integer"
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %d\n", field, dims[0], dims[1], len(entries))
	buf := make([]byte, 0, 64)
	for _, e := range entries {
		buf = strconv.AppendInt(buf[:0], e.Coords[0]+1, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, e.Coords[1]+1, 10)
		buf = append(buf, ' ')
		buf = append(buf, formatScalar(e.Val)...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

func writeDenseNPY(w io.Writer, entries []value.Entry, t ir.Type, given []int64) error {
	dims, err := resultDims(entries, t.Depth, given)
	if err != nil {
		return err
	}
	n := int64(1)
	for _, d := range dims {
		if d != 0 && n > MaxDenseElements/d {
			return fmt.Errorf("a dense %v array is larger than the limit of %d elements", dims, MaxDenseElements)
		}
		n *= d
	}
	if t.Depth == 0 {
		dims = []int64{}
	}
	offset := func(e value.Entry) int64 {
		p := int64(0)
		for m, k := range e.Coords {
			p = p*dims[m] + k
		}
		return p
	}
	if allInts(entries, t) {
		out := make([]int64, n)
		for _, e := range entries {
			out[offset(e)] = e.Val.(int64)
		}
		return WriteNPY(w, dims, out, nil)
	}
	out := make([]float64, n)
	for _, e := range entries {
		switch x := e.Val.(type) {
		case int64:
			out[offset(e)] = float64(x)
		case float64:
			out[offset(e)] = x
		case bool:
			if x {
				out[offset(e)] = 1
			}
		}
	}
	return WriteNPY(w, dims, nil, out)
}
