package storage

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestReadKeep: a reader with ReadOptions.Keep stores exactly the entries
// Keep keeps and shows Keep every entry a plain read stores (a symmetric
// matrix's mirrored ones too).
func TestReadKeep(t *testing.T) {
	files := map[string]string{
		"sym.mtx":  "%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n1 1 2\n3 1 -1.5\n4 2 7\n4 4 1\n",
		"skew.mtx": "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 -4\n",
		"arr.mtx":  "%%MatrixMarket matrix array real symmetric\n3 3\n1\n0\n2\n3\n0\n4\n",
		"t.tns":    "1 2 3 1.5\n2 1 1 -2\n3 3 3 4\n1 1 2 8\n",
	}
	for name, text := range files {
		read := func(opt ReadOptions) *COO {
			var c *COO
			var err error
			if strings.HasSuffix(name, ".tns") {
				c, err = ReadTNS(strings.NewReader(text), name, opt)
			} else {
				c, err = ReadMatrixMarket(strings.NewReader(text), name, opt)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return c
		}
		full := read(ReadOptions{})
		var seen []string
		odd := read(ReadOptions{Keep: func(coords []int64, v float64) bool {
			e := &COO{Dims: full.Dims, Coords: make([][]int64, len(coords)), Vals: []float64{v}}
			for m, x := range coords {
				e.Coords[m] = []int64{x}
			}
			seen = append(seen, sortedEntries(e)...)
			return coords[0]%2 == 1
		}})
		sort.Strings(seen)
		if !reflect.DeepEqual(seen, sortedEntries(full)) {
			t.Errorf("%s: Keep saw %v, a plain read stores %v", name, seen, sortedEntries(full))
		}
		var want []string
		for _, e := range sortedEntries(full) {
			if e[0] == '1' || e[0] == '3' {
				want = append(want, e)
			}
		}
		if got := sortedEntries(odd); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(odd.Dims, full.Dims) || odd.Field != full.Field {
			t.Errorf("%s: kept %v (dims %v), want %v (dims %v)", name, got, odd.Dims, want, full.Dims)
		}
	}
	// .npy: the same through DenseArray.COO.
	var buf bytes.Buffer
	if err := WriteNPY(&buf, []int64{3, 2}, []int64{1, 0, 0, 2, 3, 4}, nil); err != nil {
		t.Fatal(err)
	}
	a, err := ReadNPY(&buf, "a.npy")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.COO("a.npy", ReadOptions{Keep: func(coords []int64, _ float64) bool { return coords[0] != 1 }})
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedEntries(c); !reflect.DeepEqual(got, []string{"0 0 = 1", "2 0 = 3", "2 1 = 4"}) {
		t.Errorf(".npy kept %v", got)
	}
}
