package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// maxOrder is the largest answer order the checker handles (TTM's 3).
const maxOrder = 4

// Entry is one non-zero of an answer: 0-based coordinates and a value.
type Entry struct {
	Key [maxOrder]int64
	Val float64
}

// Answer is a system's result as a sorted list of entries; a scalar is one
// entry with no coordinates.
type Answer struct {
	Order   int
	Entries []Entry
}

// ReadTNSAnswer reads storel's --output .tns: 1-based coordinates and a
// value per line, or a single value for a scalar.
func ReadTNSAnswer(path string) (*Answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &Answer{Order: -1}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fields := bytes.Fields(sc.Bytes())
		if len(fields) == 0 || fields[0][0] == '#' || fields[0][0] == '%' {
			continue
		}
		order := len(fields) - 1
		if a.Order == -1 {
			a.Order = order
		}
		if order != a.Order || order > maxOrder {
			return nil, fmt.Errorf("%s:%d: %d coordinates, want %d", path, line, order, a.Order)
		}
		var e Entry
		for m := 0; m < order; m++ {
			k, err := strconv.ParseInt(string(fields[m]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			e.Key[m] = k - 1
		}
		v, err := strconv.ParseFloat(string(fields[order]), 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		e.Val = v
		a.Entries = append(a.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if a.Order == -1 {
		a.Order = 0 // an empty file: no non-zeros (of whatever order)
	}
	a.sort()
	return a, nil
}

// ReadNPYAnswer reads a peer's answer: PREFIX.idx.npy (n x order, 0-based)
// and PREFIX.val.npy (n values); without the .idx file the answer is a
// scalar.
func ReadNPYAnswer(prefix string) (*Answer, error) {
	vals, err := readNPYFile(prefix + ".val.npy")
	if err != nil {
		return nil, err
	}
	a := &Answer{}
	fv := vals.F
	if vals.Elem == ir.Int {
		for _, v := range vals.I {
			fv = append(fv, float64(v))
		}
	}
	if _, err := os.Stat(prefix + ".idx.npy"); err != nil {
		if len(fv) != 1 {
			return nil, fmt.Errorf("%s.val.npy: a scalar answer holds one value, not %d", prefix, len(fv))
		}
		a.Entries = []Entry{{Val: fv[0]}}
		return a, nil
	}
	idx, err := readNPYFile(prefix + ".idx.npy")
	if err != nil {
		return nil, err
	}
	if len(idx.Shape) != 2 || idx.Shape[0] != int64(len(fv)) || idx.Shape[1] > maxOrder || idx.Elem != ir.Int {
		return nil, fmt.Errorf("%s.idx.npy: shape %v of %v, want %d x order (int)", prefix, idx.Shape, idx.Elem, len(fv))
	}
	a.Order = int(idx.Shape[1])
	a.Entries = make([]Entry, len(fv))
	for p := range fv {
		for m := 0; m < a.Order; m++ {
			a.Entries[p].Key[m] = idx.I[p*a.Order+m]
		}
		a.Entries[p].Val = fv[p]
	}
	a.sort()
	return a, nil
}

func readNPYFile(path string) (*storage.DenseArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return storage.ReadNPY(f, path)
}

func (a *Answer) sort() {
	less := func(x, y *Entry) bool {
		for m := 0; m < maxOrder; m++ {
			if x.Key[m] != y.Key[m] {
				return x.Key[m] < y.Key[m]
			}
		}
		return false
	}
	if sort.SliceIsSorted(a.Entries, func(i, j int) bool { return less(&a.Entries[i], &a.Entries[j]) }) {
		return
	}
	sort.Slice(a.Entries, func(i, j int) bool { return less(&a.Entries[i], &a.Entries[j]) })
}

// Tolerance bounds the difference Compare accepts between two values x, y:
// |x-y| <= Rel*max(|x|,|y|) + Abs*scale, where scale is the largest
// magnitude in the reference answer (sums taken in another order differ in
// their last bits; an entry that cancels to almost zero in one system may
// be missing in another).
type Tolerance struct{ Rel, Abs float64 }

// DefaultTolerance is what the harness uses.
var DefaultTolerance = Tolerance{Rel: 1e-7, Abs: 1e-10}

// Compare checks got against want. Missing entries count as zero. It
// returns nil when they agree, else an error naming the first differences
// and how many entries differ.
func Compare(want, got *Answer, tol Tolerance) error {
	if want.Order != got.Order && len(want.Entries) > 0 && len(got.Entries) > 0 {
		return fmt.Errorf("answer has order %d, want %d", got.Order, want.Order)
	}
	scale := 0.0
	for _, e := range want.Entries {
		scale = math.Max(scale, math.Abs(e.Val))
	}
	bad, first := 0, ""
	report := func(k [maxOrder]int64, w, g float64) {
		if math.Abs(w-g) <= tol.Rel*math.Max(math.Abs(w), math.Abs(g))+tol.Abs*scale {
			return
		}
		bad++
		if bad <= 3 {
			first += fmt.Sprintf(" at %v: got %g, want %g;", k[:want.Order], g, w)
		}
	}
	i, j := 0, 0
	for i < len(want.Entries) || j < len(got.Entries) {
		switch {
		case j == len(got.Entries) || (i < len(want.Entries) && keyLess(want.Entries[i].Key, got.Entries[j].Key)):
			report(want.Entries[i].Key, want.Entries[i].Val, 0)
			i++
		case i == len(want.Entries) || keyLess(got.Entries[j].Key, want.Entries[i].Key):
			report(got.Entries[j].Key, 0, got.Entries[j].Val)
			j++
		default:
			report(want.Entries[i].Key, want.Entries[i].Val, got.Entries[j].Val)
			i++
			j++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d entries differ (of %d expected non-zeros):%s", bad, len(want.Entries), first)
	}
	return nil
}

func keyLess(a, b [maxOrder]int64) bool {
	for m := 0; m < maxOrder; m++ {
		if a[m] != b[m] {
			return a[m] < b[m]
		}
	}
	return false
}

// Duplicate returns the first coordinate the answer lists more than once
// ("" if none): a well-formed answer has one entry per coordinate.
func (a *Answer) Duplicate() string {
	for i := 1; i < len(a.Entries); i++ {
		if a.Entries[i].Key == a.Entries[i-1].Key {
			return fmt.Sprint(a.Entries[i].Key[:a.Order])
		}
	}
	return ""
}
