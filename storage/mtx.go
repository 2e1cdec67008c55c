package storage

import (
	"io"
	"math"
	"strings"
)

// ReadMatrixMarket reads a Matrix Market matrix (coordinate or array;
// real, integer or pattern; general, symmetric or skew-symmetric) from r.
// Symmetric and skew-symmetric matrices are expanded to both triangles,
// the diagonal once. Array files keep only their non-zero values. name is
// used in error messages.
func ReadMatrixMarket(r io.Reader, name string, opt ReadOptions) (*COO, error) {
	return readMatrixMarket(newLineReader(r, name, nil), opt)
}

type mtxHeader struct {
	array     bool // "array" rather than "coordinate"
	field     string
	symmetry  string // "general", "symmetric" or "skew-symmetric"
	rows      int64
	cols      int64
	entries   int64 // lines of data the size line announces
	entryLine int   // line of the size line, for messages
}

func readMatrixMarket(lr *lineReader, opt ReadOptions) (*COO, error) {
	h, err := readMTXHeader(lr)
	if err != nil {
		return nil, err
	}
	dims := []int64{h.rows, h.cols}
	if opt.Dims != nil {
		if len(opt.Dims) != 2 {
			return nil, dataErr(lr.file, h.entryLine, "a matrix has 2 dimensions, %d given", len(opt.Dims))
		}
		dims = []int64{opt.Dims[0], opt.Dims[1]}
	}
	if h.symmetry != "general" && dims[0] != dims[1] {
		return nil, dataErr(lr.file, h.entryLine, "%s matrix must be square, not %d x %d", h.symmetry, dims[0], dims[1])
	}
	n := h.entries
	if h.symmetry != "general" && !h.array {
		n *= 2
	}
	if opt.Keep != nil {
		n = 0 // only a slice of the entries is stored
	}
	c := newCOO(2, preallocCap(n))
	copy(c.Dims, dims)
	c.Field = h.field
	keep := func(int64, int64, float64) bool { return true }
	if opt.Keep != nil {
		key := make([]int64, 2)
		keep = func(i, j int64, v float64) bool {
			key[0], key[1] = i, j
			return opt.Keep(key, v)
		}
	}
	if h.array {
		err = readMTXArray(lr, h, c, keep)
	} else {
		err = readMTXCoordinate(lr, h, c, keep)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func readMTXHeader(lr *lineReader) (*mtxHeader, error) {
	line, err := lr.next()
	if err == io.EOF {
		return nil, dataErr(lr.file, 1, "empty file, want a %%%%MatrixMarket header")
	}
	if err != nil {
		return nil, err
	}
	var tok [6][]byte
	n := splitFields(line, tok[:])
	if n == 0 || !strings.EqualFold(string(tok[0]), "%%MatrixMarket") {
		return nil, lr.errorf("not a Matrix Market file: first line must start with %%%%MatrixMarket")
	}
	if n != 5 {
		return nil, lr.errorf("Matrix Market header needs 4 words after %%%%MatrixMarket (matrix, format, field, symmetry), found %d", n-1)
	}
	word := func(i int) string { return strings.ToLower(string(tok[i])) }
	h := &mtxHeader{}
	if word(1) != "matrix" {
		return nil, lr.errorf("unsupported Matrix Market object %s, want matrix", quote(tok[1]))
	}
	switch word(2) {
	case "coordinate":
	case "array":
		h.array = true
	default:
		return nil, lr.errorf("unknown Matrix Market format %s, want coordinate or array", quote(tok[2]))
	}
	switch word(3) {
	case "real", "double":
		h.field = FieldReal
	case "integer":
		h.field = FieldInteger
	case "pattern":
		h.field = FieldPattern
		if h.array {
			return nil, lr.errorf("pattern field is not allowed with array format")
		}
	case "complex":
		return nil, lr.errorf("complex matrices are not supported (SDQLite values are int or real)")
	default:
		return nil, lr.errorf("unknown Matrix Market field %s, want real, integer or pattern", quote(tok[3]))
	}
	switch word(4) {
	case "general", "symmetric", "skew-symmetric":
		h.symmetry = word(4)
	case "hermitian":
		// A real Hermitian matrix is symmetric.
		h.symmetry = "symmetric"
	default:
		return nil, lr.errorf("unknown Matrix Market symmetry %s, want general, symmetric or skew-symmetric", quote(tok[4]))
	}
	// Comments and blank lines, then the size line.
	for {
		line, err = lr.next()
		if err == io.EOF {
			return nil, dataErr(lr.file, lr.line, "file ends before the size line")
		}
		if err != nil {
			return nil, err
		}
		if len(line) > 0 && line[0] == '%' || isBlank(line) {
			continue
		}
		break
	}
	h.entryLine = lr.line
	want := 3
	what := "rows, columns and entries"
	if h.array {
		want, what = 2, "rows and columns"
	}
	n = splitFields(line, tok[:])
	if n != want {
		return nil, lr.errorf("size line must hold %d numbers (%s), found %d fields", want, what, n)
	}
	var size [3]int64
	for i := 0; i < want; i++ {
		v, ok := parseInt(tok[i])
		if !ok || v < 0 {
			return nil, lr.errorf("bad size %s on the size line: want a non-negative integer", quote(tok[i]))
		}
		size[i] = v
	}
	h.rows, h.cols = size[0], size[1]
	if h.array {
		var ok bool
		h.entries, ok = arrayEntries(h.rows, h.cols, h.symmetry)
		if !ok {
			return nil, lr.errorf("array of %d x %d entries is too large", h.rows, h.cols)
		}
	} else {
		h.entries = size[2]
	}
	return h, nil
}

// arrayEntries returns how many values an array file stores: all of them,
// the lower triangle with the diagonal (symmetric), or without it
// (skew-symmetric).
func arrayEntries(rows, cols int64, symmetry string) (int64, bool) {
	switch symmetry {
	case "general":
		if rows != 0 && cols > math.MaxInt64/rows {
			return 0, false
		}
		return rows * cols, true
	case "symmetric":
		if rows > 3e9 {
			return 0, false
		}
		return rows * (rows + 1) / 2, true
	}
	if rows > 3e9 {
		return 0, false
	}
	return rows * (rows - 1) / 2, true
}

// nextDataLine returns the next line that is neither blank nor a comment.
func nextDataLine(lr *lineReader, comment byte) ([]byte, error) {
	for {
		line, err := lr.next()
		if err != nil {
			return nil, err
		}
		if len(line) > 0 && line[0] == comment || isBlank(line) {
			continue
		}
		return line, nil
	}
}

func readMTXCoordinate(lr *lineReader, h *mtxHeader, c *COO, keep func(i, j int64, v float64) bool) error {
	rows, cols := c.Dims[0], c.Dims[1]
	want := 3
	if h.field == FieldPattern {
		want = 2
	}
	var tok [4][]byte
	ci, cj := c.Coords[0], c.Coords[1]
	vals := c.Vals
	for k := int64(0); ; k++ {
		line, err := nextDataLine(lr, '%')
		if err == io.EOF {
			if k < h.entries {
				return dataErr(lr.file, lr.line, "file ends after %d of the %d entries announced on line %d", k, h.entries, h.entryLine)
			}
			break
		}
		if err != nil {
			return err
		}
		if k >= h.entries {
			return lr.errorf("more entries than the %d announced on line %d", h.entries, h.entryLine)
		}
		if n := splitFields(line, tok[:]); n != want {
			return lr.errorf("entry needs %d fields, found %d", want, n)
		}
		i, ok := parseInt(tok[0])
		if !ok {
			return lr.errorf("bad row index %s", quote(tok[0]))
		}
		j, ok := parseInt(tok[1])
		if !ok {
			return lr.errorf("bad column index %s", quote(tok[1]))
		}
		if i < 1 || i > rows {
			return lr.errorf("row index %d out of range 1..%d", i, rows)
		}
		if j < 1 || j > cols {
			return lr.errorf("column index %d out of range 1..%d", j, cols)
		}
		v := 1.0
		switch h.field {
		case FieldReal:
			if v, ok = parseFloat(tok[2]); !ok {
				return lr.errorf("bad real value %s", quote(tok[2]))
			}
		case FieldInteger:
			iv, ok := parseInt(tok[2])
			if !ok {
				return lr.errorf("bad integer value %s", quote(tok[2]))
			}
			v = float64(iv)
		}
		i--
		j--
		if i == j && h.symmetry == "skew-symmetric" {
			return lr.errorf("skew-symmetric matrix has an entry on the diagonal")
		}
		if keep(i, j, v) {
			ci, cj, vals = append(ci, i), append(cj, j), append(vals, v)
		}
		if i == j {
			continue
		}
		switch h.symmetry {
		case "symmetric":
			if keep(j, i, v) {
				ci, cj, vals = append(ci, j), append(cj, i), append(vals, v)
			}
		case "skew-symmetric":
			if keep(j, i, -v) {
				ci, cj, vals = append(ci, j), append(cj, i), append(vals, -v)
			}
		}
	}
	c.Coords[0], c.Coords[1], c.Vals = ci, cj, vals
	return nil
}

func readMTXArray(lr *lineReader, h *mtxHeader, c *COO, keep func(i, j int64, v float64) bool) error {
	rows, cols := h.rows, h.cols
	if c.Dims[0] < rows || c.Dims[1] < cols {
		return dataErr(lr.file, h.entryLine, "array of %d x %d does not fit the given dimensions %d x %d", rows, cols, c.Dims[0], c.Dims[1])
	}
	ci, cj := c.Coords[0], c.Coords[1]
	vals := c.Vals
	// Values come column by column; for (skew-)symmetric files only the
	// lower triangle (without the diagonal when skew) is stored.
	var i, j int64
	if h.symmetry == "skew-symmetric" {
		i = 1
	}
	var tok [2][]byte
	for k := int64(0); ; k++ {
		line, err := nextDataLine(lr, '%')
		if err == io.EOF {
			if k < h.entries {
				return dataErr(lr.file, lr.line, "file ends after %d of the %d values of a %d x %d array", k, h.entries, rows, cols)
			}
			break
		}
		if err != nil {
			return err
		}
		if k >= h.entries {
			return lr.errorf("more values than the %d of a %d x %d array", h.entries, rows, cols)
		}
		if n := splitFields(line, tok[:]); n != 1 {
			return lr.errorf("array entry needs 1 value, found %d fields", n)
		}
		var v float64
		if h.field == FieldInteger {
			iv, ok := parseInt(tok[0])
			if !ok {
				return lr.errorf("bad integer value %s", quote(tok[0]))
			}
			v = float64(iv)
		} else {
			var ok bool
			if v, ok = parseFloat(tok[0]); !ok {
				return lr.errorf("bad real value %s", quote(tok[0]))
			}
		}
		if v != 0 {
			if keep(i, j, v) {
				ci, cj, vals = append(ci, i), append(cj, j), append(vals, v)
			}
			if i != j {
				switch h.symmetry {
				case "symmetric":
					if keep(j, i, v) {
						ci, cj, vals = append(ci, j), append(cj, i), append(vals, v)
					}
				case "skew-symmetric":
					if keep(j, i, -v) {
						ci, cj, vals = append(ci, j), append(cj, i), append(vals, -v)
					}
				}
			}
		}
		i++
		if i == rows {
			j++
			switch h.symmetry {
			case "general":
				i = 0
			case "symmetric":
				i = j
			default:
				i = j + 1
			}
		}
	}
	c.Coords[0], c.Coords[1], c.Vals = ci, cj, vals
	return nil
}
