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
	// Dims gives the size of every mode for .mtx and .npy output (a key
	// past it is an error); a mode it leaves 0, or all when nil, is sized
	// by MinDims and the largest key.
	Dims []int64
	// MinDims are sizes known from the program (storel.Result.Dims): a
	// mode is at least this large, and larger if a key needs it; 0 means
	// unknown.
	MinDims []int64
}

// CheckWritable reports whether format ("tns", "mtx" or "npy") can hold a
// result of type t whose modes have the sizes dims (0 = not known yet),
// so that a caller can refuse before computing anything.
func CheckWritable(format string, t ir.Type, dims []int64) error {
	switch strings.TrimPrefix(strings.ToLower(format), ".") {
	case "tns":
		return nil
	case "mtx":
		if t.Depth != 2 {
			return fmt.Errorf("mtx output needs a matrix (Matrix Market), not a value of type %s; use tns", t)
		}
		return nil
	case "npy":
		n := int64(1)
		for _, d := range dims {
			if d > 0 && n > MaxDenseElements/d {
				return fmt.Errorf("a dense %v array is larger than the limit of %d elements; use tns", dims, MaxDenseElements)
			}
			n *= max(d, 1)
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q: want tns, mtx or npy", format)
}

// Entries visits the entries of a result in increasing coordinate order
// (coordinates outermost first; the slice is reused between calls): the
// non-zero leaves of a dictionary, or the one value of a scalar. An int or
// bool result passes its value in i (a bool as 0 or 1), a real one in f.
// It lets a large result be written without building its logical value.
type Entries func(visit func(coords []int64, i int64, f float64))

// ValueEntries returns the entries of the logical value v of type t,
// checking that every leaf has t.Depth keys.
func ValueEntries(v value.Value, t ir.Type) (Entries, error) {
	if t.Depth > 0 {
		if _, ok := v.(*value.Dict); !ok {
			if value.IsZero(v) {
				return func(func([]int64, int64, float64)) {}, nil
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
	return func(visit func([]int64, int64, float64)) {
		for _, e := range entries {
			switch x := e.Val.(type) {
			case int64:
				visit(e.Coords, x, float64(x))
			case float64:
				visit(e.Coords, int64(x), x)
			case bool:
				b := int64(0)
				if x {
					b = 1
				}
				visit(e.Coords, b, float64(b))
			}
		}
	}, nil
}

// WriteValue writes the result v of type t in format "tns", "mtx" or
// "npy" (see WriteEntries), sizing .mtx and .npy from the largest keys.
func WriteValue(w io.Writer, format string, v value.Value, t ir.Type) error {
	return WriteValueOpts(w, format, v, t, WriteOptions{})
}

// WriteValueOpts writes the logical value v of type t (see WriteEntries).
func WriteValueOpts(w io.Writer, format string, v value.Value, t ir.Type, opt WriteOptions) error {
	each, err := ValueEntries(v, t)
	if err != nil {
		return err
	}
	return WriteEntries(w, format, each, t, opt)
}

// WriteEntries writes a result of type t given by its entries:
//   - "tns": one line per non-zero, 1-based coordinates then the value, in
//     increasing coordinate order; a scalar is one line holding its value;
//   - "mtx": Matrix Market coordinate general (integer for an int result,
//     real otherwise), for matrices;
//   - "npy": a dense C-order array of int64 (an int result) or float64; a
//     scalar has shape ().
//
// Reals print in the shortest form that reads back exactly.
func WriteEntries(w io.Writer, format string, each Entries, t ir.Type, opt WriteOptions) error {
	if err := CheckWritable(format, t, opt.Dims); err != nil {
		return err
	}
	switch strings.TrimPrefix(strings.ToLower(format), ".") {
	case "mtx":
		return writeMTX(w, each, t, opt)
	case "npy":
		return writeDenseNPY(w, each, t, opt)
	}
	return writeTNS(w, each, t)
}

// appendScalar formats a value of a result of type t.
func appendScalar(buf []byte, t ir.Type, i int64, f float64) []byte {
	if t.Base == ir.Real {
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	}
	return strconv.AppendInt(buf, i, 10)
}

func writeTNS(w io.Writer, each Entries, t ir.Type) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := make([]byte, 0, 128)
	var err error
	n := 0
	each(func(coords []int64, i int64, f float64) {
		n++
		if err != nil {
			return
		}
		buf = buf[:0]
		for _, k := range coords {
			if k < 0 {
				err = fmt.Errorf("key %d cannot be written as a 1-based coordinate", k)
				return
			}
			buf = strconv.AppendInt(buf, k+1, 10)
			buf = append(buf, ' ')
		}
		buf = appendScalar(buf, t, i, f)
		buf = append(buf, '\n')
		bw.Write(buf)
	})
	if err != nil {
		return err
	}
	if t.Depth == 0 && n == 0 {
		bw.Write(append(appendScalar(buf[:0], t, 0, 0), '\n'))
	}
	return bw.Flush()
}

// resultDims returns the size of each mode, and the number of entries: a
// size given in opt.Dims (checked against the keys), else the larger of
// opt.MinDims and the largest key plus one.
func resultDims(each Entries, depth int, opt WriteOptions) ([]int64, int, error) {
	dims := make([]int64, depth)
	n := 0
	var err error
	each(func(coords []int64, _ int64, _ float64) {
		n++
		for m, k := range coords {
			if k < 0 && err == nil {
				err = fmt.Errorf("key %d in mode %d cannot be written (keys must be non-negative)", k, m+1)
			}
			if k+1 > dims[m] {
				dims[m] = k + 1
			}
		}
	})
	if err != nil {
		return nil, 0, err
	}
	if opt.Dims != nil && len(opt.Dims) != depth {
		return nil, 0, fmt.Errorf("result has %d dimensions, %d sizes given", depth, len(opt.Dims))
	}
	for m := range dims {
		if m < len(opt.Dims) && opt.Dims[m] > 0 {
			if dims[m] > opt.Dims[m] {
				return nil, 0, fmt.Errorf("key %d in mode %d does not fit the given size %d", dims[m]-1, m+1, opt.Dims[m])
			}
			dims[m] = opt.Dims[m]
		} else if m < len(opt.MinDims) {
			dims[m] = max(dims[m], opt.MinDims[m])
		}
	}
	return dims, n, nil
}

func writeMTX(w io.Writer, each Entries, t ir.Type, opt WriteOptions) error {
	dims, n, err := resultDims(each, 2, opt)
	if err != nil {
		return err
	}
	field := "real"
	if t.Base != ir.Real {
		field = "integer"
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %d\n", field, dims[0], dims[1], n)
	buf := make([]byte, 0, 64)
	each(func(coords []int64, i int64, f float64) {
		buf = strconv.AppendInt(buf[:0], coords[0]+1, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, coords[1]+1, 10)
		buf = append(buf, ' ')
		buf = appendScalar(buf, t, i, f)
		buf = append(buf, '\n')
		bw.Write(buf)
	})
	return bw.Flush()
}

func writeDenseNPY(w io.Writer, each Entries, t ir.Type, opt WriteOptions) error {
	dims, _, err := resultDims(each, t.Depth, opt)
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
	offset := func(coords []int64) int64 {
		p := int64(0)
		for m, k := range coords {
			p = p*dims[m] + k
		}
		return p
	}
	if t.Base != ir.Real {
		out := make([]int64, n)
		each(func(coords []int64, i int64, _ float64) { out[offset(coords)] = i })
		return WriteNPY(w, dims, out, nil)
	}
	out := make([]float64, n)
	each(func(coords []int64, _ int64, f float64) { out[offset(coords)] = f })
	return WriteNPY(w, dims, nil, out)
}
