package harness

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/storage"
)

// RandomSparse returns a rows x cols matrix whose entries are non-zero with
// probability density, the same for the same seed. Values are multiples of
// 1/1024 in [1/1024, 2], exact in binary and short in text, and positive so
// that sums cannot cancel to values that compare badly.
func RandomSparse(rows, cols int64, density float64, seed uint64) *storage.COO {
	rng := rand.New(rand.NewPCG(seed, 0x5709e1))
	c := &storage.COO{Dims: []int64{rows, cols}, Coords: [][]int64{nil, nil}, Field: storage.FieldReal}
	total := float64(rows) * float64(cols)
	want := int64(math.Round(density * total))
	if density >= 1 {
		want = rows * cols
	}
	if want <= 0 {
		return c
	}
	value := func() float64 { return float64(1+rng.IntN(2048)) / 1024 }
	if float64(want) > total/4 {
		// Dense enough: one Bernoulli draw per position.
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if density >= 1 || rng.Float64() < density {
					c.Coords[0] = append(c.Coords[0], i)
					c.Coords[1] = append(c.Coords[1], j)
					c.Vals = append(c.Vals, value())
				}
			}
		}
		return c
	}
	// Sparse: draw distinct positions, then sort them row-major.
	seen := make(map[int64]struct{}, want)
	pos := make([]int64, 0, want)
	for int64(len(pos)) < want {
		p := rng.Int64N(rows * cols)
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		pos = append(pos, p)
	}
	sort.Slice(pos, func(a, b int) bool { return pos[a] < pos[b] })
	for _, p := range pos {
		c.Coords[0] = append(c.Coords[0], p/cols)
		c.Coords[1] = append(c.Coords[1], p%cols)
		c.Vals = append(c.Vals, value())
	}
	return c
}

// RandomVector returns n values as RandomSparse makes them (all non-zero).
func RandomVector(n int64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7ec7))
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(1+rng.IntN(2048)) / 1024
	}
	return v
}

// Slice keeps the entries of c whose coordinates are all below limits
// (a limit of 0 keeps the whole mode) and shrinks the dimensions to match:
// a real tensor's leading block, for small runs on real data.
func Slice(c *storage.COO, limits []int64) *storage.COO {
	out := &storage.COO{Dims: append([]int64(nil), c.Dims...), Coords: make([][]int64, len(c.Dims)), Field: c.Field}
	for m, l := range limits {
		if m < len(out.Dims) && l > 0 && l < out.Dims[m] {
			out.Dims[m] = l
		}
	}
next:
	for p := range c.Vals {
		for m := range c.Dims {
			if c.Coords[m][p] >= out.Dims[m] {
				continue next
			}
		}
		for m := range c.Dims {
			out.Coords[m] = append(out.Coords[m], c.Coords[m][p])
		}
		out.Vals = append(out.Vals, c.Vals[p])
	}
	return out
}

// WriteMTX writes a matrix as a general real Matrix Market file.
func WriteMTX(path string, c *storage.COO) error {
	if len(c.Dims) != 2 {
		return fmt.Errorf("%s: a Matrix Market file holds a matrix, not an order-%d tensor", path, len(c.Dims))
	}
	return writeText(path, func(w *bufio.Writer) {
		fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", c.Dims[0], c.Dims[1], len(c.Vals))
		writeEntries(w, c)
	})
}

// WriteTTX writes a tensor of any order as a Matrix Market "tensor"
// coordinate file (TACO's .ttx): the header states every dimension, which
// a .tns file cannot.
func WriteTTX(path string, c *storage.COO) error {
	return writeText(path, func(w *bufio.Writer) {
		fmt.Fprintf(w, "%%%%MatrixMarket tensor coordinate real general\n%s %d\n", dimsLine(c.Dims), len(c.Vals))
		writeEntries(w, c)
	})
}

func dimsLine(d []int64) string {
	var b []byte
	for i, v := range d {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// WriteTNS writes a tensor as a FROSTT .tns file (1-based, value last).
// The dimensions are not recorded: pass them with --dims.
func WriteTNS(path string, c *storage.COO) error {
	return writeText(path, func(w *bufio.Writer) { writeEntries(w, c) })
}

func writeEntries(w *bufio.Writer, c *storage.COO) {
	var buf []byte
	for p, v := range c.Vals {
		buf = buf[:0]
		for m := range c.Dims {
			buf = strconv.AppendInt(buf, c.Coords[m][p]+1, 10)
			buf = append(buf, ' ')
		}
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		buf = append(buf, '\n')
		w.Write(buf)
	}
}

func writeText(path string, body func(*bufio.Writer)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		body(bw)
		return bw.Flush()
	})
}

// WriteVectorNPY writes v as a 1-d float64 .npy file.
func WriteVectorNPY(path string, v []float64) error { return writeNPY(path, nil, v) }

// writeNPY writes ints, or reals when not nil, as a 1-d .npy file.
func writeNPY(path string, ints []int64, reals []float64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	n := len(ints)
	if reals != nil {
		n = len(reals)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		return storage.WriteNPY(w, []int64{int64(n)}, ints, reals)
	})
}

// cached runs make unless path exists: generated inputs are deterministic,
// so a file made by an earlier run is the same file.
func cached(path string, make func() error) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return make()
}
