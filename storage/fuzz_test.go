package storage

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
)

// The fuzz targets assert that the readers never panic and that every
// failure is a *DataError; what they accept must be a consistent COO.
// Run one with: go test ./storage -run XXX -fuzz FuzzMatrixMarket -fuzztime 2m

func checkReadResult(t *testing.T, c *COO, err error) {
	if err != nil {
		var de *DataError
		if !errors.As(err, &de) {
			t.Fatalf("error is not a *DataError: %v", err)
		}
		return
	}
	if cerr := c.Check(); cerr != nil {
		t.Fatalf("reader returned an inconsistent tensor: %v", cerr)
	}
	// Whatever was read must also build (sparse formats need no memory
	// beyond the entries).
	if _, berr := Build("F", c, Format{Name: "csf", family: 's'}); berr != nil {
		t.Fatalf("Build after a successful read: %v", berr)
	}
}

func FuzzMatrixMarket(f *testing.F) {
	for _, s := range []string{
		"%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 6\n3 4 -.5\n",
		"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n",
		"%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n2 1 4\n",
		"%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n",
		"%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n",
		"%%matrixmarket MATRIX coordinate real general\r\n% c\r\n\r\n1 1 1\r\n1 1 1e3",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadMatrixMarket(bytes.NewReader(data), "f.mtx", ReadOptions{})
		checkReadResult(t, c, err)
	})
}

func FuzzTNS(f *testing.F) {
	for _, s := range []string{"1 2 3 1.5\n2 1 1 -2\n", "# c\n\n7 2\n", "1 1 1 1 1 1 1 0.5\n", "3 4 nan\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadTNS(bytes.NewReader(data), "f.tns", ReadOptions{})
		checkReadResult(t, c, err)
	})
}

func FuzzNPY(f *testing.F) {
	var b bytes.Buffer
	WriteNPY(&b, []int64{2, 3}, []int64{1, 2, 3, 4, 5, 6}, nil)
	f.Add(b.Bytes())
	b.Reset()
	WriteNPY(&b, []int64{}, nil, []float64{2.5})
	f.Add(b.Bytes())
	f.Add(npyBytes(2, `{"descr":"<f4","shape":(1,),"fortran_order":False}`, []byte{0, 0, 0xc0, 0x3f}))
	f.Add(npyBytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadNPY(bytes.NewReader(data), "f.npy")
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DataError: %v", err)
			}
			return
		}
		n := int64(1)
		for _, d := range a.Shape {
			n *= d
		}
		if int64(a.Len()) != n {
			t.Fatalf("shape %v with %d elements", a.Shape, a.Len())
		}
		if len(a.Shape) > 0 {
			c, err := a.COO("f.npy", ReadOptions{})
			checkReadResult(t, c, err)
		}
	})
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"1\n2\n3\n", "# c\n1.5\n\n-2e3 # x\n", "1 2\n", "\xff\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, elem := range []ir.Base{ir.Int, ir.Real} {
			a, err := ReadText(bytes.NewReader(data), "f.txt", elem)
			if err != nil {
				var de *DataError
				if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), "f.txt:") {
					t.Fatalf("bad error: %v", err)
				}
				continue
			}
			if a.Elem != elem {
				t.Fatalf("array of %s, want %s", a.Elem, elem)
			}
		}
	})
}
