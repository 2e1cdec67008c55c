package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/storel/storel/ir"
)

// DenseArray is an n-dimensional array in C (row-major) order, as stored in
// a .npy file. Exactly one of I, F is used, according to Elem.
type DenseArray struct {
	Shape []int64
	Elem  ir.Base
	I     []int64
	F     []float64
}

// Len returns the number of elements.
func (a *DenseArray) Len() int {
	if a.Elem == ir.Real {
		return len(a.F)
	}
	return len(a.I)
}

const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the header dictionary of a .npy file.
const maxNPYHeader = 1 << 20

// ReadNPY reads a NumPy .npy array (little-endian int32, int64, float32 or
// float64, C order, any shape) from r. name is used in error messages.
func ReadNPY(r io.Reader, name string) (*DenseArray, error) {
	br := bufio.NewReaderSize(r, readBufferSize)
	fail := func(format string, args ...any) (*DenseArray, error) {
		return nil, dataErr(name, 0, format, args...)
	}
	var pre [10]byte
	if n, err := io.ReadFull(br, pre[:8]); err != nil {
		if n >= len(npyMagic) || string(pre[:n]) != npyMagic[:n] {
			return fail("not a .npy file (no \\x93NUMPY signature)")
		}
		return fail("truncated .npy header")
	}
	if string(pre[:6]) != npyMagic {
		return fail("not a .npy file (no \\x93NUMPY signature)")
	}
	major := pre[6]
	var hlen int
	switch major {
	case 1:
		if _, err := io.ReadFull(br, pre[8:10]); err != nil {
			return fail("truncated .npy header")
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return fail("truncated .npy header")
		}
		n := binary.LittleEndian.Uint32(l[:])
		if n > maxNPYHeader {
			return fail(".npy header of %d bytes is too large", n)
		}
		hlen = int(n)
	default:
		return fail("unsupported .npy format version %d.%d", major, pre[7])
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(br, header); err != nil {
		return fail("truncated .npy header (%d bytes announced)", hlen)
	}
	h, err := parseNPYHeader(string(header))
	if err != nil {
		return fail("bad .npy header: %v", err)
	}
	if h.fortran {
		return fail("Fortran-order .npy arrays are not supported; save with C order")
	}
	var size, count int64 = 0, 1
	var isFloat bool
	switch h.descr {
	case "<i4":
		size = 4
	case "<i8":
		size = 8
	case "<f4":
		size, isFloat = 4, true
	case "<f8":
		size, isFloat = 8, true
	default:
		return fail("unsupported .npy dtype %q: want little-endian int32, int64, float32 or float64 (<i4, <i8, <f4, <f8)", h.descr)
	}
	for _, d := range h.shape {
		if d != 0 && count > math.MaxInt64/size/d {
			return fail("array of shape %v is too large", h.shape)
		}
		count *= d
	}
	a := &DenseArray{Shape: h.shape, Elem: ir.Int}
	if isFloat {
		a.Elem = ir.Real
		a.F = make([]float64, 0, preallocCap(count))
	} else {
		a.I = make([]int64, 0, preallocCap(count))
	}
	// decode appends the little-endian elements of one chunk.
	var decode func(chunk []byte)
	switch h.descr {
	case "<i4":
		decode = func(b []byte) {
			for p := 0; p+4 <= len(b); p += 4 {
				a.I = append(a.I, int64(int32(binary.LittleEndian.Uint32(b[p:]))))
			}
		}
	case "<i8":
		decode = func(b []byte) {
			for p := 0; p+8 <= len(b); p += 8 {
				a.I = append(a.I, int64(binary.LittleEndian.Uint64(b[p:])))
			}
		}
	case "<f4":
		decode = func(b []byte) {
			for p := 0; p+4 <= len(b); p += 4 {
				a.F = append(a.F, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[p:]))))
			}
		}
	default:
		decode = func(b []byte) {
			for p := 0; p+8 <= len(b); p += 8 {
				a.F = append(a.F, math.Float64frombits(binary.LittleEndian.Uint64(b[p:])))
			}
		}
	}
	buf := make([]byte, 1<<16)
	for left := count; left > 0; {
		n := int64(len(buf)) / size
		if n > left {
			n = left
		}
		chunk := buf[:n*size]
		if _, err := io.ReadFull(br, chunk); err != nil {
			return fail("truncated .npy data: %d of %d elements present", count-left, count)
		}
		decode(chunk)
		left -= n
	}
	if _, err := br.ReadByte(); err == nil {
		return fail("extra bytes after the %d elements of the array", count)
	} else if !errors.Is(err, io.EOF) {
		return fail("read error: %v", err)
	}
	return a, nil
}

type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseNPYHeader parses the Python dictionary literal of a .npy header:
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
func parseNPYHeader(s string) (*npyHeader, error) {
	p := &pyParser{s: s}
	h := &npyHeader{}
	seen := map[string]bool{}
	if !p.eat('{') {
		return nil, errors.New("want a dictionary starting with {")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("want : after %q", key)
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return nil, err
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return nil, err
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown key %q", key)
		}
		seen[key] = true
		if !p.eat(',') {
			if !p.eat('}') {
				return nil, errors.New("want , or } in the dictionary")
			}
			break
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	if strings.TrimSpace(p.s[p.i:]) != "" {
		return nil, errors.New("text after the dictionary")
	}
	return h, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyParser) boolean() (bool, error) {
	p.skip()
	switch {
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return false, errors.New("want True or False")
}

func (p *pyParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, errors.New("want a shape tuple starting with (")
	}
	shape := []int64{}
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		d, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, errors.New("want a non-negative integer in the shape")
		}
		p.i = j
		p.eat('L') // Python 2 long suffix
		shape = append(shape, d)
		if len(shape) > maxTNSOrder {
			return nil, errors.New("too many dimensions in the shape")
		}
		if !p.eat(',') {
			if !p.eat(')') {
				return nil, errors.New("want , or ) in the shape")
			}
			break
		}
	}
	return shape, nil
}

// Flat returns the elements as a flat array of element type elem. Integer
// data widens to real; real data cannot fill an int array. file names the
// source in errors.
func (a *DenseArray) Flat(file string, elem ir.Base) (*Array, error) {
	switch {
	case elem == a.Elem && elem == ir.Real:
		return RealArray(a.F), nil
	case elem == a.Elem:
		return IntArray(a.I), nil
	case elem == ir.Real:
		f := make([]float64, len(a.I))
		for i, v := range a.I {
			f[i] = float64(v)
		}
		return RealArray(f), nil
	}
	return nil, dataErr(file, 0, "holds reals, which cannot fill an int array (declare the array real)")
}

// COO returns the non-zero elements in coordinate form. opt.Dims, when
// given, must have one size per axis, each at least the array's.
func (a *DenseArray) COO(file string, opt ReadOptions) (*COO, error) {
	d := len(a.Shape)
	if d == 0 {
		return nil, dataErr(file, 0, "a 0-dimensional array is a scalar, not a tensor")
	}
	dims := append([]int64(nil), a.Shape...)
	if opt.Dims != nil {
		if len(opt.Dims) != d {
			return nil, dataErr(file, 0, "array has %d dimensions but %d were given", d, len(opt.Dims))
		}
		for m := range dims {
			if opt.Dims[m] < dims[m] {
				return nil, dataErr(file, 0, "dimension %d has size %d, more than the %d given", m+1, dims[m], opt.Dims[m])
			}
		}
		copy(dims, opt.Dims)
	}
	c := newCOO(d, 0)
	copy(c.Dims, dims)
	c.Field = FieldReal
	if a.Elem == ir.Int {
		c.Field = FieldInteger
	}
	coord := make([]int64, d)
	for p := 0; p < a.Len(); p++ {
		var v float64
		if a.Elem == ir.Int {
			v = float64(a.I[p])
		} else {
			v = a.F[p]
		}
		if v != 0 && (opt.Keep == nil || opt.Keep(coord, v)) {
			for m := 0; m < d; m++ {
				c.Coords[m] = append(c.Coords[m], coord[m])
			}
			c.Vals = append(c.Vals, v)
		}
		for m := d - 1; m >= 0; m-- {
			coord[m]++
			if coord[m] < a.Shape[m] {
				break
			}
			coord[m] = 0
		}
	}
	return c, nil
}

// WriteNPY writes a .npy file (format 1.0) holding ints (int64) or reals
// (float64) of the given shape in C order; exactly one of ints, reals is
// used.
func WriteNPY(w io.Writer, shape []int64, ints []int64, reals []float64) error {
	descr := "<i8"
	n := len(ints)
	if reals != nil {
		descr, n = "<f8", len(reals)
	}
	want := int64(1)
	dims := make([]string, len(shape))
	for i, d := range shape {
		want *= d
		dims[i] = strconv.FormatInt(d, 10)
	}
	if want != int64(n) {
		return fmt.Errorf("npy: shape %v needs %d elements, have %d", shape, want, n)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	// Pad so that the data starts on a 64-byte boundary, ending in '\n'.
	total := len(npyMagic) + 4 + len(header) + 1
	pad := (64 - total%64) % 64
	header += strings.Repeat(" ", pad) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("npy: header too long")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	var l [8]byte
	binary.LittleEndian.PutUint16(l[:2], uint16(len(header)))
	bw.Write(l[:2])
	bw.WriteString(header)
	if reals != nil {
		for _, f := range reals {
			binary.LittleEndian.PutUint64(l[:], math.Float64bits(f))
			bw.Write(l[:])
		}
	} else {
		for _, v := range ints {
			binary.LittleEndian.PutUint64(l[:], uint64(v))
			bw.Write(l[:])
		}
	}
	return bw.Flush()
}
