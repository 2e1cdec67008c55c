package storage

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
)

// sortedEntries renders the entries of c as "i j ... = v" lines in
// coordinate order (0-based), repeats kept.
func sortedEntries(c *COO) []string {
	var out []string
	for p, v := range c.Vals {
		var sb strings.Builder
		for m := range c.Coords {
			fmt.Fprintf(&sb, "%d ", c.Coords[m][p])
		}
		fmt.Fprintf(&sb, "= %g", v)
		out = append(out, sb.String())
	}
	sort.Strings(out)
	return out
}

func TestReadMatrixMarket(t *testing.T) {
	cases := []struct {
		name, text string
		dims       []int64
		field      string
		entries    []string
	}{
		{"coordinate real general", `%%MatrixMarket matrix coordinate real general
% a comment

3 4 3
1 1 6
3 4 -.5
1 3 9e1
`, []int64{3, 4}, FieldReal, []string{"0 0 = 6", "0 2 = 90", "2 3 = -0.5"}},
		{"upper-case header, CRLF, no final newline", "%%MatrixMarket MATRIX Coordinate Integer General\r\n2 2 1\r\n2 1 7", []int64{2, 2}, FieldInteger, []string{"1 0 = 7"}},
		{"pattern symmetric", `%%MatrixMarket matrix coordinate pattern symmetric
3 3 3
1 1
2 1
3 2
`, []int64{3, 3}, FieldPattern, []string{"0 0 = 1", "0 1 = 1", "1 0 = 1", "1 2 = 1", "2 1 = 1"}},
		{"skew-symmetric", `%%MatrixMarket matrix coordinate real skew-symmetric
3 3 2
2 1 4
3 1 -1.5
`, []int64{3, 3}, FieldReal, []string{"0 1 = -4", "0 2 = 1.5", "1 0 = 4", "2 0 = -1.5"}},
		{"tabs and spaces", "%%MatrixMarket matrix coordinate real general\n  2\t2  1 \n\t1   2\t3.25  \n", []int64{2, 2}, FieldReal, []string{"0 1 = 3.25"}},
		{"array general column-major, zeros dropped", `%%MatrixMarket matrix array real general
2 3
1
0
3
4
0
6
`, []int64{2, 3}, FieldReal, []string{"0 0 = 1", "0 1 = 3", "0 2 = 0", "1 1 = 4", "1 2 = 6"}[:0]},
		{"array symmetric", `%%MatrixMarket matrix array integer symmetric
2 2
1
2
3
`, []int64{2, 2}, FieldInteger, []string{"0 0 = 1", "0 1 = 2", "1 0 = 2", "1 1 = 3"}},
		{"array skew-symmetric", `%%MatrixMarket matrix array real skew-symmetric
3 3
1
2
3
`, []int64{3, 3}, FieldReal, []string{"0 1 = -1", "0 2 = -2", "1 0 = 1", "1 2 = -3", "2 0 = 2", "2 1 = 3"}},
		{"empty", "%%MatrixMarket matrix coordinate real general\n5 6 0\n", []int64{5, 6}, FieldReal, nil},
		{"hermitian real", "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 3\n", []int64{2, 2}, FieldReal, []string{"0 1 = 3", "1 0 = 3"}},
	}
	// The array general case: fill in its expected entries here (0 dropped).
	cases[5].entries = []string{"0 0 = 1", "0 1 = 3", "1 1 = 4", "1 2 = 6"}
	for _, tc := range cases {
		c, err := ReadMatrixMarket(strings.NewReader(tc.text), "m.mtx", ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(c.Dims, tc.dims) || c.Field != tc.field {
			t.Errorf("%s: dims %v field %s, want %v %s", tc.name, c.Dims, c.Field, tc.dims, tc.field)
		}
		if got := sortedEntries(c); !reflect.DeepEqual(got, tc.entries) && !(len(got) == 0 && len(tc.entries) == 0) {
			t.Errorf("%s: entries %q, want %q", tc.name, got, tc.entries)
		}
	}
}

func TestReadMatrixMarketErrors(t *testing.T) {
	const hdr = "%%MatrixMarket matrix coordinate real general\n"
	cases := []struct{ text, want string }{
		{"", "m.mtx:1: empty file"},
		{"hello\n", "m.mtx:1: not a Matrix Market file"},
		{"%%MatrixMarket matrix coordinate real\n", "m.mtx:1: Matrix Market header needs 4 words"},
		{"%%MatrixMarket vector coordinate real general\n", `m.mtx:1: unsupported Matrix Market object "vector"`},
		{"%%MatrixMarket matrix sparse real general\n", `m.mtx:1: unknown Matrix Market format "sparse"`},
		{"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "m.mtx:1: complex matrices are not supported"},
		{"%%MatrixMarket matrix coordinate float general\n", `m.mtx:1: unknown Matrix Market field "float"`},
		{"%%MatrixMarket matrix coordinate real upper\n", `m.mtx:1: unknown Matrix Market symmetry "upper"`},
		{"%%MatrixMarket matrix array pattern general\n", "m.mtx:1: pattern field is not allowed with array format"},
		{hdr + "% only comments\n", "m.mtx:2: file ends before the size line"},
		{hdr + "3 3\n", "m.mtx:2: size line must hold 3 numbers"},
		{hdr + "3 x 1\n", `m.mtx:2: bad size "x"`},
		{hdr + "3 -3 1\n", `m.mtx:2: bad size "-3"`},
		{"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", "m.mtx:2: symmetric matrix must be square, not 2 x 3"},
		{hdr + "3 3 2\n1 1 1\n", "m.mtx:3: file ends after 1 of the 2 entries announced on line 2"},
		{hdr + "3 3 1\n1 1 1\n2 2 2\n", "m.mtx:4: more entries than the 1 announced on line 2"},
		{hdr + "3 3 1\n1 1\n", "m.mtx:3: entry needs 3 fields, found 2"},
		{hdr + "3 3 1\n1 1 1 1\n", "m.mtx:3: entry needs 3 fields, found 4"},
		{hdr + "3 3 1\n0 1 1\n", "m.mtx:3: row index 0 out of range 1..3"},
		{hdr + "3 3 1\n1 4 1\n", "m.mtx:3: column index 4 out of range 1..3"},
		{hdr + "3 3 1\n1.5 1 1\n", `m.mtx:3: bad row index "1.5"`},
		{hdr + "3 3 1\n1 99999999999999999999 1\n", `m.mtx:3: bad column index "99999999999999999999"`},
		{hdr + "3 3 1\n1 1 1,5\n", `m.mtx:3: bad real value "1,5"`},
		{hdr + "3 3 1\n1 1 1e999\n", `m.mtx:3: bad real value "1e999"`},
		{"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", `m.mtx:3: bad integer value "2.5"`},
		{"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 2\n", "m.mtx:3: entry needs 2 fields, found 3"},
		{"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", "m.mtx:3: skew-symmetric matrix has an entry on the diagonal"},
		{"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", "m.mtx:5: file ends after 3 of the 4 values"},
		{"%%MatrixMarket matrix array real general\n1 1\n1\n2\n", "m.mtx:4: more values than the 1"},
		{"%%MatrixMarket matrix array real general\n1 1\n1 2\n", "m.mtx:3: array entry needs 1 value, found 2 fields"},
		{"%%MatrixMarket matrix array real general\n1 1\nx\n", `m.mtx:3: bad real value "x"`},
		{"%%MatrixMarket matrix array real general\n4000000000 4000000000000\n", "m.mtx:2: array of 4000000000 x 4000000000000 entries is too large"},
	}
	for _, tc := range cases {
		_, err := ReadMatrixMarket(strings.NewReader(tc.text), "m.mtx", ReadOptions{})
		var de *DataError
		if err == nil || !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.text, err, tc.want)
		}
	}
	// Given dimensions replace the header's and bound the indices.
	text := hdr + "3 3 1\n3 3 1\n"
	if c, err := ReadMatrixMarket(strings.NewReader(text), "m.mtx", ReadOptions{Dims: []int64{5, 4}}); err != nil || !reflect.DeepEqual(c.Dims, []int64{5, 4}) {
		t.Errorf("dims 5x4: %v %v", c, err)
	}
	if _, err := ReadMatrixMarket(strings.NewReader(text), "m.mtx", ReadOptions{Dims: []int64{2, 4}}); err == nil || !strings.HasPrefix(err.Error(), "m.mtx:3: row index 3 out of range 1..2") {
		t.Errorf("dims 2x4: %v", err)
	}
	if _, err := ReadMatrixMarket(strings.NewReader(text), "m.mtx", ReadOptions{Dims: []int64{2}}); err == nil || !strings.HasPrefix(err.Error(), "m.mtx:2: a matrix has 2 dimensions, 1 given") {
		t.Errorf("one dim: %v", err)
	}
}

func TestReadTNS(t *testing.T) {
	text := "# comment\n1 2 3 1.5\n\n2 1 1 -2\n  2 2 4\t3e0 \n1 2 3 1\n"
	c, err := ReadTNS(strings.NewReader(text), "t.tns", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Dims, []int64{2, 2, 4}) || c.Field != FieldReal {
		t.Errorf("dims %v field %s", c.Dims, c.Field)
	}
	want := []string{"0 1 2 = 1", "0 1 2 = 1.5", "1 0 0 = -2", "1 1 3 = 3"}
	if got := sortedEntries(c); !reflect.DeepEqual(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	c, err = ReadTNS(strings.NewReader(text), "t.tns", ReadOptions{Dims: []int64{3, 3, 5}})
	if err != nil || !reflect.DeepEqual(c.Dims, []int64{3, 3, 5}) {
		t.Errorf("given dims: %v %v", c, err)
	}
	c, err = ReadTNS(strings.NewReader(""), "t.tns", ReadOptions{Dims: []int64{3, 3}})
	if err != nil || c.Order() != 2 || c.Len() != 0 {
		t.Errorf("empty with dims: %v %v", c, err)
	}
	c, err = ReadTNS(strings.NewReader("7 2\n"), "t.tns", ReadOptions{})
	if err != nil || !reflect.DeepEqual(c.Dims, []int64{7}) || !reflect.DeepEqual(c.Coords[0], []int64{6}) {
		t.Errorf("vector: %v %v", c, err)
	}
}

func TestReadTNSErrors(t *testing.T) {
	cases := []struct {
		text string
		dims []int64
		want string
	}{
		{"", nil, "t.tns: no entries, so the order is unknown"},
		{"# nothing\n\n", nil, "t.tns:2: no entries"},
		{"5\n", nil, "t.tns:1: entry needs at least one coordinate and a value, found 1 field"},
		{"1 2 3\n1 2\n", nil, "t.tns:2: entry has 2 fields, earlier entries have 3"},
		{"1 2 3\n1 2 3 4\n", nil, "t.tns:2: entry has 4 fields"},
		{"1 2 3\n0 2 3\n", nil, "t.tns:2: index 0 in mode 1: indices start at 1"},
		{"1 -2 3\n", nil, "t.tns:1: index -2 in mode 2: indices start at 1"},
		{"1 x 3\n", nil, `t.tns:1: bad index "x" in mode 2`},
		{"1 2 three\n", nil, `t.tns:1: bad value "three"`},
		{"1 2 3\n", []int64{1, 5, 5}, "t.tns:1: entry has 2 coordinates but 3 dimensions were given"},
		{"1 2 3\n1 6 3\n", []int64{1, 5}, "t.tns:2: index 6 in mode 2 out of range 1..5"},
		{strings.Repeat("1 ", 40) + "1\n", nil, "t.tns:1: entry has 40 coordinates; at most 32"},
	}
	for _, tc := range cases {
		_, err := ReadTNS(strings.NewReader(tc.text), "t.tns", ReadOptions{Dims: tc.dims})
		var de *DataError
		if err == nil || !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.text, err, tc.want)
		}
	}
}

func TestReadText(t *testing.T) {
	text := "# header\n1\n\n  -2  \n3 # three\n"
	a, err := ReadText(strings.NewReader(text), "a.txt", ir.Int)
	if err != nil || !reflect.DeepEqual(a.I, []int64{1, -2, 3}) || a.Elem != ir.Int {
		t.Errorf("int: %v %v", a, err)
	}
	a, err = ReadText(strings.NewReader(text+"2.5\n"), "a.txt", ir.Real)
	if err != nil || !reflect.DeepEqual(a.F, []float64{1, -2, 3, 2.5}) || a.Elem != ir.Real {
		t.Errorf("real: %v %v", a, err)
	}
	cases := []struct {
		text string
		elem ir.Base
		want string
	}{
		{"1\n2.5\n", ir.Int, `a.txt:2: real value "2.5" cannot fill an int array`},
		{"1\nx\n", ir.Int, `a.txt:2: bad integer "x"`},
		{"1\n\nx\n", ir.Real, `a.txt:3: bad number "x"`},
		{"1 2\n", ir.Real, `a.txt:1: one number a line, found "2" after "1"`},
	}
	for _, tc := range cases {
		_, err := ReadText(strings.NewReader(tc.text), "a.txt", tc.elem)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.text, err, tc.want)
		}
	}
}

// npyBytes builds a .npy file by hand (independently of WriteNPY).
func npyBytes(major byte, header string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major == 1 {
		b.WriteByte(byte(len(header)))
		b.WriteByte(byte(len(header) >> 8))
	} else {
		b.Write([]byte{byte(len(header)), byte(len(header) >> 8), 0, 0})
	}
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func TestReadNPY(t *testing.T) {
	i4 := []byte{1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	a, err := ReadNPY(bytes.NewReader(npyBytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n", i4)), "a.npy")
	if err != nil || !reflect.DeepEqual(a.Shape, []int64{2, 3}) || !reflect.DeepEqual(a.I, []int64{1, -2, 0, 7, 0, 0}) {
		t.Fatalf("i4: %+v %v", a, err)
	}
	c, err := a.COO("a.npy", ReadOptions{})
	if err != nil || c.Field != FieldInteger || !reflect.DeepEqual(sortedEntries(c), []string{"0 0 = 1", "0 1 = -2", "1 0 = 7"}) {
		t.Errorf("i4 COO: %v %v", c, err)
	}
	f4 := []byte{0, 0, 0xc0, 0x3f} // 1.5
	a, err = ReadNPY(bytes.NewReader(npyBytes(2, `{"descr":"<f4","shape":(1,),"fortran_order":False}`, f4)), "a.npy")
	if err != nil || !reflect.DeepEqual(a.F, []float64{1.5}) || a.Elem != ir.Real {
		t.Errorf("f4 v2: %+v %v", a, err)
	}
	if _, err := a.Flat("a.npy", ir.Int); err == nil || !strings.Contains(err.Error(), "a.npy: holds reals") {
		t.Errorf("real npy into int array: %v", err)
	}
	a, err = ReadNPY(bytes.NewReader(npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f})), "a.npy")
	if err != nil || len(a.Shape) != 0 || !reflect.DeepEqual(a.F, []float64{1}) {
		t.Errorf("f8 scalar: %+v %v", a, err)
	}
	h := func(descr, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	cases := []struct {
		data []byte
		want string
	}{
		{[]byte("NUMPY"), "a.npy: not a .npy file"},
		{[]byte("\x93NUM"), "a.npy: truncated .npy header"},
		{[]byte("PK\x03\x04xxxxxxxx"), "a.npy: not a .npy file"},
		{npyBytes(4, h("<f8", "(1,)"), nil), "a.npy: unsupported .npy format version 4.0"},
		{npyBytes(1, h("<f8", "(1,)"), nil)[:20], "a.npy: truncated .npy header"},
		{npyBytes(1, h(">f8", "(1,)"), make([]byte, 8)), `a.npy: unsupported .npy dtype ">f8"`},
		{npyBytes(1, h("<c16", "(1,)"), make([]byte, 16)), `a.npy: unsupported .npy dtype "<c16"`},
		{npyBytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (1,), }", make([]byte, 8)), "a.npy: Fortran-order"},
		{npyBytes(1, h("<f8", "(2, 2)"), make([]byte, 24)), "a.npy: truncated .npy data: 0 of 4 elements"},
		{npyBytes(1, h("<f8", "(1,)"), make([]byte, 9)), "a.npy: extra bytes after the 1 elements"},
		{npyBytes(1, "{'descr': '<f8', 'shape': (1,), }", make([]byte, 8)), `a.npy: bad .npy header: missing key "fortran_order"`},
		{npyBytes(1, h("<f8", "(1, x)"), make([]byte, 8)), "a.npy: bad .npy header: want a non-negative integer"},
		{npyBytes(1, h("<f8", "(4294967296, 4294967296)"), nil), "a.npy: array of shape [4294967296 4294967296] is too large"},
		{npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", nil), `a.npy: bad .npy header: unknown key "x"`},
	}
	for _, tc := range cases {
		_, err := ReadNPY(bytes.NewReader(tc.data), "a.npy")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.data, err, tc.want)
		}
	}
}

func writeFile(t *testing.T, dir, name string, data []byte, gz bool) string {
	t.Helper()
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
		data = b.Bytes()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTensorFile(t *testing.T) {
	dir := t.TempDir()
	mtx := []byte("%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 5\n2 1 -1\n")
	for _, gz := range []bool{false, true} {
		name := "a.mtx"
		if gz {
			name += ".gz"
		}
		p := writeFile(t, dir, name, mtx, gz)
		c, err := ReadTensorFile(p, ReadOptions{})
		if err != nil || c.Field != FieldInteger || !reflect.DeepEqual(sortedEntries(c), []string{"0 2 = 5", "1 0 = -1"}) {
			t.Errorf("%s: %v %v", name, c, err)
		}
	}
	p := writeFile(t, dir, "b.tns.gz", []byte("1 1 1 2\n"), true)
	if c, err := ReadTensorFile(p, ReadOptions{}); err != nil || c.Order() != 3 {
		t.Errorf("tns.gz: %v %v", c, err)
	}
	p = writeFile(t, dir, "bad.tns", []byte("1 1 2\n1 1\n"), false)
	if _, err := ReadTensorFile(p, ReadOptions{}); err == nil || !strings.HasPrefix(err.Error(), p+":2: ") {
		t.Errorf("error names the path: %v", err)
	}
	p = writeFile(t, dir, "bad.mtx.gz", []byte("not gzip"), false)
	if _, err := ReadTensorFile(p, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("bad gzip: %v", err)
	}
	if _, err := ReadTensorFile(filepath.Join(dir, "a.csv"), ReadOptions{}); err == nil || !strings.Contains(err.Error(), "unknown tensor file type") {
		t.Errorf("csv: %v", err)
	}
	if _, err := ReadTensorFile(filepath.Join(dir, "missing.mtx"), ReadOptions{}); err == nil {
		t.Errorf("missing file accepted")
	}
	// A truncated gzip stream is an error, not a short matrix.
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(mtx)
	w.Close()
	p = writeFile(t, dir, "trunc.mtx.gz", b.Bytes()[:b.Len()-12], false)
	if _, err := ReadTensorFile(p, ReadOptions{}); err == nil {
		t.Errorf("truncated gzip accepted")
	}
}

func TestProgress(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	defer func(old int64) { progressMinBytes = old }(progressMinBytes)
	progressMinBytes = 1 << 20
	sb.WriteString("%%MatrixMarket matrix coordinate real general\n1000 1000 200000\n")
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&sb, "%d %d 1.25\n", i%1000+1, i/1000+1)
	}
	p := writeFile(t, dir, "big.mtx", []byte(sb.String()), false)
	var out bytes.Buffer
	c, err := ReadTensorFile(p, ReadOptions{Progress: &out})
	if err != nil || c.Len() != 200000 {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(out.String(), "\rloading big.mtx: ") || !strings.Contains(out.String(), "%") {
		t.Errorf("no progress line: %q", out.String())
	}
	out.Reset()
	p = writeFile(t, dir, "small.mtx", []byte("%%MatrixMarket matrix coordinate real general\n1 1 0\n"), false)
	if _, err := ReadTensorFile(p, ReadOptions{Progress: &out}); err != nil || out.Len() != 0 {
		t.Errorf("small file printed progress %q (%v)", out.String(), err)
	}
}

// trickleReader returns at most 7 bytes a call, then err.
type trickleReader struct {
	data []byte
	err  error
}

func (r *trickleReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := min(len(p), 7, len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func TestReadAhead(t *testing.T) {
	data := make([]byte, 3*readAheadChunk+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, srcErr := range []error{io.EOF, io.ErrUnexpectedEOF} {
		ra := newReadAhead(&trickleReader{data: data[:len(data):len(data)], err: srcErr})
		got, err := io.ReadAll(ra)
		ra.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("read %d bytes, want %d", len(got), len(data))
		}
		if srcErr == io.EOF && err != nil || srcErr != io.EOF && err != srcErr {
			t.Errorf("source error %v: ReadAll error %v", srcErr, err)
		}
	}
	// Closing before the end stops the goroutine.
	ra := newReadAhead(&trickleReader{data: data, err: io.EOF})
	var b [10]byte
	ra.Read(b[:])
	ra.Close()
}
