package storage

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const sharedData = "/work/shared/data"

// readmeTable parses the table of /work/shared/data/README.md: file name,
// dimensions ("71,952 x 2,704" or "60,000^2") and full entry count.
func readmeTable(t *testing.T) map[string]struct {
	dims []int64
	nnz  int
} {
	text, err := os.ReadFile(filepath.Join(sharedData, "README.md"))
	if err != nil {
		t.Skipf("no data README: %v", err)
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("README: bad number %q", s)
		}
		return v
	}
	square := regexp.MustCompile(`^([0-9,]+)\^2$`)
	out := map[string]struct {
		dims []int64
		nnz  int
	}{}
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], ".gz") {
			continue
		}
		file := strings.TrimSpace(cells[1])
		var dims []int64
		d := strings.TrimSpace(cells[2])
		if m := square.FindStringSubmatch(d); m != nil {
			dims = []int64{num(m[1]), num(m[1])}
		} else {
			for _, part := range strings.Split(d, " x ") {
				dims = append(dims, num(part))
			}
		}
		out[file] = struct {
			dims []int64
			nnz  int
		}{dims, int(num(cells[3]))}
	}
	if len(out) == 0 {
		t.Fatal("README table not found")
	}
	return out
}

// TestSharedData loads every file of the shared data directory and checks
// its dimensions and entry count against the README, then builds CSR or
// CSF from it.
func TestSharedData(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	table := readmeTable(t)
	for file, want := range table {
		path := filepath.Join(sharedData, file)
		if _, err := os.Stat(path); err != nil {
			t.Logf("skipping %s: %v", file, err)
			continue
		}
		start := time.Now()
		c, err := ReadTensorFile(path, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if !reflect.DeepEqual(c.Dims, want.dims) {
			// The README notes WordNet's third mode: the largest index
			// is smaller than the dimension. Given dims must fix it.
			if c2, err := ReadTensorFile(path, ReadOptions{Dims: want.dims}); err != nil || !reflect.DeepEqual(c2.Dims, want.dims) {
				t.Errorf("%s: dims %v (inferred %v), want %v: %v", file, c2, c.Dims, want.dims, err)
			} else {
				t.Logf("%s: inferred dims %v, README %v", file, c.Dims, want.dims)
			}
		}
		if c.Len() != want.nnz {
			t.Errorf("%s: %d entries, README says %d", file, c.Len(), want.nnz)
		}
		format := mustFormat(t, "csr")
		if c.Order() != 2 {
			format = mustFormat(t, "csf")
		}
		st, err := Build("T", c, format)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if n := st[ValName("T")].(*Array).Len(); n != want.nnz {
			t.Errorf("%s: built %d values, want %d (the README promises no duplicates)", file, n, want.nnz)
		}
		t.Logf("%s: %v, %d entries, read and built in %v", file, c.Dims, c.Len(), time.Since(start))
	}
}

// BenchmarkReadMTX reads a generated 1M-entry real Matrix Market file.
func BenchmarkReadMTX(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewSource(4))
	var sb strings.Builder
	fmt.Fprintf(&sb, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", 100000, 50000, n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%d %d %g\n", rng.Intn(100000)+1, rng.Intn(50000)+1, rng.NormFloat64())
	}
	path := filepath.Join(b.TempDir(), "bench.mtx")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := ReadTensorFile(path, ReadOptions{})
		if err != nil || c.Len() != n {
			b.Fatal(err)
		}
	}
}
