package harness

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storel/storel/storage"
)

// handLoops describes the plain Go loop each kernel of the variants
// experiment is compared with: one loop per kernel over the layout a
// programmer would pick for it, built before the timed runs.
var handLoops = map[string]string{
	"spmv":   "CSR A, dense x: per row, y(i) = Σ A_val(p)·x(A_idx(p))",
	"batax":  "CSR A, dense x: per row i, t = Σ_k A(i,k)·x(k), then Q(j) += β·A(i,j)·t",
	"summmm": "CSR A and B: rowsum(B) once, then Σ A(i,k)·rowsum(B)(k)",
	"mmm":    "CSR A × CSR B, row by row into a dense output row (B has 250 columns)",
	"sddmm":  "CSR S, dense row-major U and V: per entry s·⟨U(i,:), V(j,:)⟩",
	"ttv":    "CSF T, dense v: per fiber (i,j), Σ_k T(i,j,k)·v(k)",
	"ttm":    "CSF A, dense B stored l-major: per fiber (i,j), a dense row of k accumulated over l",
	"mttkrp": "CSF B, dense C (k-major) and D stored l-major: per (i,k), t = Σ_l b·D(:,l), then A(i,:) += C(k,:)∘t",
}

// layoutLoop is a hand-written Go loop over the stored layout of some of a
// kernel's forms, where that layout makes more work than the kernel's loop
// (handLoops) does whatever the plan: padding slots, a dense factor's
// zeros, columns where the product wants rows. A form's time over it
// measures the plan; over the kernel's loop, the plan and the layout.
type layoutLoop struct {
	name string // the loop's system is "Go loop (NAME)"
	what string // the loop, shown under the table
	// data lists the --data objects the loop reads besides the kernel's,
	// as NAME=KEY of the case's data.
	data []string
}

// layoutLoops are the layout loops per kernel, by the key a form names
// (variantForm.loop) and handloop's --layout takes.
var layoutLoops = map[string]map[string]layoutLoop{
	"spmv": {
		"ell": {"user ELL", "the ELL arrays of ell.sdql (int64 columns), dense x: per row, y(i) = Σ over all A_width slots A_val·x(A_col), padding slots included (column 0, value 0)",
			[]string{"A_col=ell.A_col", "A_val=ell.A_val", "A_width=ell.A_width"}},
		"ell_if": {"user ELL with if", "the ELL arrays of ell_if.sdql (int64 columns), dense x: per row, y(i) = Σ over the A_width slots whose A_col ≥ 0 of A_val·x(A_col) (padding: column -1)",
			[]string{"A_col=ell_if.A_col", "A_val=ell_if.A_val", "A_width=ell_if.A_width"}},
	},
	"summmm": {
		"bdense": {"B dense", "CSR A, dense row-major B: rowsum(B) over all of B's values once, then Σ A(i,k)·rowsum(B)(k)", nil},
	},
	"mmm": {
		"bdense": {"B dense", "CSR A, dense row-major B: B's non-zeros gathered into CSR rows in every run (a scan of all its values), then the kernel's loop; multiplying all 250 columns per non-zero of A is 6-8x slower at B's density 1/32", nil},
		"bcsc":   {"B csc", "CSR A, CSC B: B transposed to CSR in every run (counting sort), then the kernel's loop; faster than merging A's row with B's column per output entry", nil},
		"bdcsc":  {"B dcsc", "CSR A, DCSC B (the non-empty columns listed): B transposed to CSR in every run (counting sort), then the kernel's loop", nil},
		"bcoo":   {"B coo", "CSR A, COO B (row, column, value per entry, in row order): B's row starts counted in every run, then the kernel's loop", nil},
	},
	"ttv": {
		"tcoo": {"T coo", "COO T (i, j, k, value per entry, in order), dense v: Σ_k T(i,j,k)·v(k) per fiber, a fiber ending where (i,j) changes", nil},
	},
	"ttm": {
		"acoo": {"A coo", "COO A (i, j, l, value per entry, in order), dense B stored l-major: per entry, B's row l scaled into its fiber's dense row of k, a fiber starting where (i,j) changes", nil},
	},
	"mttkrp": {
		"bcoo": {"B coo", "COO B (i, k, l, value per entry, in order), dense C (k-major) and D stored l-major: per entry t += b·D(:,l), and where (i,k) changes A(i,:) += C(k,:)∘t", nil},
	},
}

// HandLoop runs a kernel's hand-written Go loop (handLoops, or with
// --layout one of layoutLoops) as a system of its own: it reads the same
// files storel reads (--tensor NAME=FILE, --dims, --data
// NAME=FILE.npy|VALUE), builds its layout (reported as "build"), runs the
// loop --repeat times and reports the median as "execute", then writes the
// answer as .tns (--output).
func HandLoop(args []string) error {
	fs := flag.NewFlagSet("handloop", flag.ContinueOnError)
	kernel := fs.String("kernel", "", "spmv, batax, summmm, mmm, sddmm, ttv, ttm or mttkrp")
	layout := fs.String("layout", "", "a layout loop of the kernel (layoutLoops); empty for the kernel's loop")
	var tensors, dims, data multi
	fs.Var(&tensors, "tensor", "NAME=FILE")
	fs.Var(&dims, "dims", "NAME=D1,D2,...")
	fs.Var(&data, "data", "NAME=FILE.npy|VALUE")
	repeat := fs.Int("repeat", 1, "runs of the loop; the median is reported")
	output := fs.String("output", "", "answer file (.tns)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, ok := handLoops[*kernel]; !ok || *output == "" {
		return errors.New("usage: handloop --kernel K [--layout L] --tensor NAME=FILE ... [--data NAME=FILE|VALUE] --repeat N --output FILE.tns")
	}
	if _, ok := layoutLoops[*kernel][*layout]; *layout != "" && !ok {
		return fmt.Errorf("%s has no layout loop %q", *kernel, *layout)
	}
	start := time.Now()
	dimsOf, err := dims.parseDims()
	if err != nil {
		return err
	}
	t := map[string]*storage.COO{}
	for _, s := range tensors {
		name, path, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--tensor %s: want NAME=FILE", s)
		}
		c, err := readTensor(path, dimsOf[name])
		if err != nil {
			return err
		}
		t[name] = c
	}
	vec := map[string][]float64{}
	ivec := map[string][]int64{}
	scalar := map[string]float64{}
	for _, d := range data {
		name, spec, _ := strings.Cut(d, "=")
		if strings.HasSuffix(spec, ".npy") {
			a, err := readNPYFile(spec)
			if err != nil {
				return err
			}
			vec[name], ivec[name] = a.F, a.I
			continue
		}
		v, err := strconv.ParseFloat(spec, 64)
		if err != nil {
			return fmt.Errorf("--data %s: %v", d, err)
		}
		scalar[name] = v
	}
	need := func(names ...string) error {
		for _, n := range names {
			if t[n] == nil {
				return fmt.Errorf("%s needs --tensor %s", *kernel, n)
			}
		}
		return nil
	}
	fmt.Fprintf(os.Stderr, "timing: load %.3f ms\n", msSince(start))
	start = time.Now()
	// loop runs the kernel into its natural output; answer lists that
	// output's entries (outside the timed runs).
	var loop func() any
	var answer func(any) *Answer
	// The loops write their output where the last run's was, as storel's
	// repeated runs reuse a released result's storage.
	var buf outBuf
	switch *kernel {
	case "spmv", "batax":
		if err = need("A"); err == nil {
			a, x := csrOf(t["A"]), vec["x"]
			if len(x) != int(a.cols) {
				return fmt.Errorf("x has %d values, A %d columns", len(x), a.cols)
			}
			beta := scalar["beta"]
			loop = func() any { return spmvLoop(&buf, a, x) }
			if *kernel == "batax" {
				loop = func() any { return bataxLoop(&buf, a, x, beta) }
			}
			answer = func(o any) *Answer { return vectorAnswer(o.([]float64)) }
		}
	case "summmm":
		if err = need("A", "B"); err == nil {
			a, b := csrOf(t["A"]), csrOf(t["B"])
			loop = func() any { return summmmLoop(&buf, a, b) }
			answer = func(o any) *Answer { return &Answer{Entries: []Entry{{Val: o.(float64)}}} }
		}
	case "mmm":
		if err = need("A", "B"); err == nil {
			a, b := csrOf(t["A"]), csrOf(t["B"])
			loop = func() any { return mmmLoop(&buf, a, b) }
			answer = func(o any) *Answer { return denseAnswer(o.([]float64), int(b.cols)) }
		}
	case "sddmm":
		if err = need("S", "U", "V"); err == nil {
			s, u, v := csrOf(t["S"]), denseOf(t["U"], false), denseOf(t["V"], false)
			loop = func() any { return sddmmLoop(&buf, s, u, v) }
			answer = func(o any) *Answer {
				return csrAnswer(&csr{rows: s.rows, cols: s.cols, pos: s.pos, idx: s.idx, val: o.([]float64)})
			}
		}
	case "ttv":
		if err = need("T"); err == nil {
			f, v := csfOf(t["T"]), vec["v"]
			if int64(len(v)) != t["T"].Dims[2] {
				return fmt.Errorf("v has %d values, T's third mode %d", len(v), t["T"].Dims[2])
			}
			loop = func() any { return ttvLoop(&buf, f, v) }
			answer = func(o any) *Answer { return fiberAnswer(f, o.([]float64), 1) }
		}
	case "ttm":
		if err = need("A", "B"); err == nil {
			f, b := csfOf(t["A"]), denseOf(t["B"], true)
			loop = func() any { return ttmLoop(&buf, f, b) }
			answer = func(o any) *Answer { return fiberAnswer(f, o.([]float64), b.cols) }
		}
	case "mttkrp":
		if err = need("B", "C", "D"); err == nil {
			f, c, d := csfOf(t["B"]), denseOf(t["C"], false), denseOf(t["D"], true)
			loop = func() any { return mttkrpLoop(&buf, f, c, d) }
			answer = func(o any) *Answer { return denseAnswer(o.([]float64), min(c.cols, d.cols)) }
		}
	}
	if err == nil && *layout != "" {
		loop, err = layoutLoopOf(*kernel, *layout, &buf, t, vec, ivec, scalar)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "timing: build %.3f ms\n", msSince(start))
	var out any
	var times []float64
	for r := 0; r < max(*repeat, 1); r++ {
		start = time.Now()
		out = loop()
		times = append(times, msSince(start))
	}
	fmt.Fprintf(os.Stderr, "timing: execute %.3f ms\n", median(times))
	ans := answer(out)
	ans.sort()
	return writeTNSAnswer(*output, ans)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// csr is a matrix in compressed sparse rows, columns increasing in a row,
// with 32-bit column indices (as SciPy's), which halve the index bytes a
// loop reads.
type csr struct {
	rows, cols int64
	pos        []int
	idx        []int32
	val        []float64
}

// order returns the permutation of c's entries sorted by their
// coordinates, mode 0 first.
func order(c *storage.COO) []int {
	p := make([]int, len(c.Vals))
	for i := range p {
		p[i] = i
	}
	sort.Slice(p, func(a, b int) bool {
		for m := range c.Coords {
			if x, y := c.Coords[m][p[a]], c.Coords[m][p[b]]; x != y {
				return x < y
			}
		}
		return false
	})
	return p
}

// row returns row i's column indices and values, of equal lengths (so a
// loop over them needs no bounds checks).
func (m *csr) row(i int64) ([]int32, []float64) {
	lo, hi := m.pos[i], m.pos[i+1]
	seg := m.idx[lo:hi]
	return seg, m.val[lo:hi][:len(seg)]
}

func csrOf(c *storage.COO) *csr {
	m := &csr{rows: c.Dims[0], cols: c.Dims[1], pos: make([]int, c.Dims[0]+1)}
	for _, p := range order(c) {
		m.pos[c.Coords[0][p]+1]++
		m.idx = append(m.idx, int32(c.Coords[1][p]))
		m.val = append(m.val, c.Vals[p])
	}
	for i := int64(0); i < m.rows; i++ {
		m.pos[i+1] += m.pos[i]
	}
	return m
}

// dense is a row-major matrix; transposed ones hold c's columns as rows.
type dense struct {
	rows, cols int
	val        []float64
}

func denseOf(c *storage.COO, transpose bool) *dense {
	r, k := 0, 1
	if transpose {
		r, k = 1, 0
	}
	d := &dense{rows: int(c.Dims[r]), cols: int(c.Dims[k])}
	d.val = make([]float64, d.rows*d.cols)
	for p, v := range c.Vals {
		d.val[int(c.Coords[r][p])*d.cols+int(c.Coords[k][p])] += v
	}
	return d
}

// csf is an order-3 tensor as compressed fibers: the distinct i, then per
// i the distinct j (fiber segments), then per fiber the k and values;
// 32-bit indices below the first level.
type csf struct {
	dims []int64
	i    []int
	jpos []int
	j    []int32
	kpos []int
	k    []int32
	val  []float64
}

// fiber returns fiber b's last-level indices and values, of equal lengths.
func (f *csf) fiber(b int) ([]int32, []float64) {
	lo, hi := f.kpos[b], f.kpos[b+1]
	seg := f.k[lo:hi]
	return seg, f.val[lo:hi][:len(seg)]
}

func csfOf(c *storage.COO) *csf {
	f := &csf{dims: c.Dims, jpos: []int{0}, kpos: []int{0}}
	for _, p := range order(c) {
		i, j := int(c.Coords[0][p]), int32(c.Coords[1][p])
		newI := len(f.i) == 0 || f.i[len(f.i)-1] != i
		if newI {
			if len(f.i) > 0 {
				f.jpos = append(f.jpos, len(f.j))
			}
			f.i = append(f.i, i)
		}
		if newI || f.j[len(f.j)-1] != j {
			if len(f.j) > 0 {
				f.kpos = append(f.kpos, len(f.k))
			}
			f.j = append(f.j, j)
		}
		f.k = append(f.k, int32(c.Coords[2][p]))
		f.val = append(f.val, c.Vals[p])
	}
	if len(f.i) > 0 {
		f.jpos = append(f.jpos, len(f.j))
		f.kpos = append(f.kpos, len(f.k))
	}
	return f
}

// outBuf is a loop's output kept from one run to the next.
type outBuf []float64

// take returns n values of the kept output, zeroed where the loop adds
// into them.
func (b *outBuf) take(n int, zero bool) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
		return *b
	}
	*b = (*b)[:n]
	if zero {
		clear(*b)
	}
	return *b
}

func spmvLoop(buf *outBuf, a *csr, x []float64) []float64 {
	y := buf.take(int(a.rows), false)
	for i := range y {
		seg, v := a.row(int64(i))
		s := 0.0
		for p, j := range seg {
			s += v[p] * x[j]
		}
		y[i] = s
	}
	return y
}

func bataxLoop(buf *outBuf, a *csr, x []float64, beta float64) []float64 {
	q := buf.take(int(a.cols), true)
	for i := int64(0); i < a.rows; i++ {
		seg, v := a.row(i)
		t := 0.0
		for p, k := range seg {
			t += v[p] * x[k]
		}
		t *= beta
		for p, j := range seg {
			q[j] += v[p] * t
		}
	}
	return q
}

func summmmLoop(buf *outBuf, a, b *csr) float64 {
	rowsum := buf.take(int(b.rows), true)
	for k := range rowsum {
		_, v := b.row(int64(k))
		for _, x := range v {
			rowsum[k] += x
		}
	}
	s := 0.0
	for p, k := range a.idx {
		if int(k) < len(rowsum) {
			s += a.val[p] * rowsum[k]
		}
	}
	return s
}

// mmmLoop returns A·B as a dense row-major matrix, accumulated row by row
// (B has few columns: 250 in the harness).
func mmmLoop(buf *outBuf, a, b *csr) []float64 {
	cols := int(b.cols)
	out := buf.take(int(a.rows)*cols, true)
	for i := int64(0); i < a.rows; i++ {
		acc := out[int(i)*cols : int(i+1)*cols]
		for p := a.pos[i]; p < a.pos[i+1]; p++ {
			k, av := a.idx[p], a.val[p]
			if int64(k) >= b.rows {
				continue
			}
			seg, v := b.row(int64(k))
			for r, j := range seg {
				acc[j] += av * v[r]
			}
		}
	}
	return out
}

// sddmmLoop returns the values of the result in S's pattern.
func sddmmLoop(buf *outBuf, s *csr, u, v *dense) []float64 {
	out := buf.take(len(s.val), false)
	r := min(u.cols, v.cols)
	for i := int64(0); i < s.rows; i++ {
		ui := u.val[int(i)*u.cols : int(i)*u.cols+r]
		for p := s.pos[i]; p < s.pos[i+1]; p++ {
			j := int(s.idx[p])
			vj := v.val[j*v.cols : j*v.cols+r][:len(ui)]
			dot := 0.0
			for k, x := range ui {
				dot += x * vj[k]
			}
			out[p] = s.val[p] * dot
		}
	}
	return out
}

// ttvLoop returns one value per (i,j) fiber of f.
func ttvLoop(buf *outBuf, f *csf, v []float64) []float64 {
	out := buf.take(len(f.j), false)
	for b := range f.j {
		seg, vals := f.fiber(b)
		s := 0.0
		for p, k := range seg {
			s += vals[p] * v[k]
		}
		out[b] = s
	}
	return out
}

// ttmLoop returns a dense row of K values per (i,j) fiber of f; bt is
// B(k,l) stored l-major (bt.rows = L, bt.cols = K).
func ttmLoop(buf *outBuf, f *csf, bt *dense) []float64 {
	out := buf.take(len(f.j)*bt.cols, true)
	for b := range f.j {
		acc := out[b*bt.cols : (b+1)*bt.cols]
		seg, vals := f.fiber(b)
		for p, l := range seg {
			axpy(acc, vals[p], bt.val[int(l)*bt.cols:int(l+1)*bt.cols])
		}
	}
	return out
}

// mttkrpLoop returns the dense I x R result; c is C(k,j) row-major, dt is
// D(j,l) stored l-major.
func mttkrpLoop(buf *outBuf, f *csf, c, dt *dense) []float64 {
	r := min(c.cols, dt.cols)
	out := buf.take(int(f.dims[0])*r, true)
	t := make([]float64, r)
	for a, i := range f.i {
		acc := out[i*r : (i+1)*r]
		for b := f.jpos[a]; b < f.jpos[a+1]; b++ {
			k := int(f.j[b])
			if k >= c.rows {
				continue
			}
			clear(t)
			seg, vals := f.fiber(b)
			for p, l := range seg {
				axpy(t, vals[p], dt.val[int(l)*dt.cols:int(l)*dt.cols+r])
			}
			addMul(acc, c.val[k*c.cols:k*c.cols+r], t)
		}
	}
	return out
}

// axpy adds a·x to y, x no longer than y.
func axpy(y []float64, a float64, x []float64) {
	y = y[:len(x)]
	for k, v := range x {
		y[k] += a * v
	}
}

// addMul adds x∘t to y, x and y no shorter than t.
func addMul(y, x, t []float64) {
	y, x = y[:len(t)], x[:len(t)]
	for j, v := range t {
		y[j] += x[j] * v
	}
}

// csrAnswer lists the entries of a CSR matrix.
func csrAnswer(m *csr) *Answer {
	a := &Answer{Order: 2, Entries: make([]Entry, 0, len(m.val))}
	for i := int64(0); i < m.rows; i++ {
		for p := m.pos[i]; p < m.pos[i+1]; p++ {
			a.Entries = append(a.Entries, Entry{Key: [maxOrder]int64{i, int64(m.idx[p])}, Val: m.val[p]})
		}
	}
	return a
}

// fiberAnswer lists per-fiber values of f: width values per (i,j) fiber
// (a dense last mode when width > 1).
func fiberAnswer(f *csf, vals []float64, width int) *Answer {
	a := &Answer{Order: 2}
	if width > 1 {
		a.Order = 3
	}
	for x, i := range f.i {
		for b := f.jpos[x]; b < f.jpos[x+1]; b++ {
			for k := 0; k < width; k++ {
				// With width 1, k is 0: an order-2 key.
				a.Entries = append(a.Entries, Entry{Key: [maxOrder]int64{int64(i), int64(f.j[b]), int64(k)}, Val: vals[b*width+k]})
			}
		}
	}
	return a
}

// denseAnswer lists a row-major rows x cols matrix's non-zeros.
func denseAnswer(v []float64, cols int) *Answer {
	a := &Answer{Order: 2}
	for p, x := range v {
		if x != 0 {
			a.Entries = append(a.Entries, Entry{Key: [maxOrder]int64{int64(p / cols), int64(p % cols)}, Val: x})
		}
	}
	return a
}

func vectorAnswer(y []float64) *Answer {
	a := &Answer{Order: 1}
	for i, v := range y {
		if v != 0 {
			a.Entries = append(a.Entries, Entry{Key: [maxOrder]int64{int64(i)}, Val: v})
		}
	}
	return a
}

// writeTNSAnswer writes a as .tns (1-based coordinates, value last), the
// form ReadTNSAnswer reads.
func writeTNSAnswer(path string, a *Answer) error {
	return writeText(path, func(w *bufio.Writer) {
		var buf []byte
		for _, e := range a.Entries {
			buf = buf[:0]
			for m := 0; m < a.Order; m++ {
				buf = strconv.AppendInt(buf, e.Key[m]+1, 10)
				buf = append(buf, ' ')
			}
			buf = strconv.AppendFloat(buf, e.Val, 'g', -1, 64)
			buf = append(buf, '\n')
			w.Write(buf)
		}
	})
}

// layoutLoopOf builds the layout loop key of kernel (layoutLoops) from the
// loaded tensors and data; its output is the kernel loop's, so the
// kernel's answer lists it.
func layoutLoopOf(kernel, key string, buf *outBuf, t map[string]*storage.COO, vec map[string][]float64, ivec map[string][]int64, scalar map[string]float64) (func() any, error) {
	switch kernel + "/" + key {
	case "spmv/ell", "spmv/ell_if":
		e := &ell{rows: int(t["A"].Dims[0]), width: int(scalar["A_width"]), col: ivec["A_col"], val: vec["A_val"]}
		if len(e.col) != e.rows*e.width || len(e.val) != len(e.col) {
			return nil, fmt.Errorf("ELL arrays of %d columns and %d values for %d rows of width %d", len(e.col), len(e.val), e.rows, e.width)
		}
		x := vec["x"]
		if key == "ell_if" {
			return func() any { return ellIfLoop(buf, e, x) }, nil
		}
		return func() any { return ellLoop(buf, e, x) }, nil
	case "summmm/bdense":
		a, b := csrOf(t["A"]), denseOf(t["B"], false)
		return func() any { return summmmDenseLoop(buf, a, b) }, nil
	case "mmm/bdense":
		a, b := csrOf(t["A"]), denseOf(t["B"], false)
		var rows csr
		return func() any { return mmmLoop(buf, a, b.compressInto(&rows)) }, nil
	case "mmm/bcsc", "mmm/bdcsc":
		a, b := csrOf(t["A"]), cscOf(t["B"], key == "bdcsc")
		var bt csr
		return func() any { return mmmLoop(buf, a, b.transposeInto(&bt)) }, nil
	case "ttv/tcoo":
		m, v := coo3Of(t["T"]), vec["v"]
		return func() any { return ttvCooLoop(buf, m, v) }, nil
	case "ttm/acoo":
		m, b := coo3Of(t["A"]), denseOf(t["B"], true)
		return func() any { return ttmCooLoop(buf, m, b) }, nil
	case "mttkrp/bcoo":
		m, c, d := coo3Of(t["B"]), denseOf(t["C"], false), denseOf(t["D"], true)
		return func() any { return mttkrpCooLoop(buf, m, c, d) }, nil
	case "mmm/bcoo":
		a, b := csrOf(t["A"]), cooOf(t["B"])
		var rows csr
		return func() any { return mmmLoop(buf, a, b.rowsInto(&rows)) }, nil
	}
	return nil, fmt.Errorf("no layout loop %s/%s", kernel, key)
}

// ell is a user's ELLPACK matrix as its mapping stores it: width slots
// per row, column indices as int64 (padding: column 0 or -1).
type ell struct {
	rows, width int
	col         []int64
	val         []float64
}

// slots returns row i's slots, of equal lengths.
func (e *ell) slots(i int) ([]int64, []float64) {
	col := e.col[i*e.width : (i+1)*e.width]
	return col, e.val[i*e.width : (i+1)*e.width][:len(col)]
}

// ellLoop walks every slot: padding adds A_val 0 times x(0).
func ellLoop(buf *outBuf, e *ell, x []float64) []float64 {
	y := buf.take(e.rows, false)
	for i := range y {
		col, v := e.slots(i)
		s := 0.0
		for p, j := range col {
			s += v[p] * x[j]
		}
		y[i] = s
	}
	return y
}

// ellIfLoop tests every slot for padding (column -1).
func ellIfLoop(buf *outBuf, e *ell, x []float64) []float64 {
	y := buf.take(e.rows, false)
	for i := range y {
		col, v := e.slots(i)
		s := 0.0
		for p, j := range col {
			if j >= 0 {
				s += v[p] * x[j]
			}
		}
		y[i] = s
	}
	return y
}

// summmmDenseLoop sums every value of the dense B, zeros included.
func summmmDenseLoop(buf *outBuf, a *csr, b *dense) float64 {
	rowsum := buf.take(b.rows, false)
	for k := range rowsum {
		s := 0.0
		for _, x := range b.val[k*b.cols : (k+1)*b.cols] {
			s += x
		}
		rowsum[k] = s
	}
	s := 0.0
	for p, k := range a.idx {
		if int(k) < len(rowsum) {
			s += a.val[p] * rowsum[k]
		}
	}
	return s
}

// compressInto returns d's non-zeros as CSR rows in t (its arrays
// reused), read in one pass over all of d's values.
func (d *dense) compressInto(t *csr) *csr {
	t.rows, t.cols = int64(d.rows), int64(d.cols)
	if cap(t.pos) < d.rows+1 {
		t.pos = make([]int, d.rows+1)
	}
	t.pos, t.idx, t.val = t.pos[:d.rows+1], t.idx[:0], t.val[:0]
	t.pos[0] = 0
	for k := 0; k < d.rows; k++ {
		for j, x := range d.val[k*d.cols : (k+1)*d.cols] {
			if x != 0 {
				t.idx, t.val = append(t.idx, int32(j)), append(t.val, x)
			}
		}
		t.pos[k+1] = len(t.idx)
	}
	return t
}

// csc is a matrix in compressed sparse columns, rows increasing in a
// column; as DCSC, it lists only the non-empty columns (ids).
type csc struct {
	rows, cols int64
	ids        []int32 // the column of each compressed column; nil: column q is q
	pos        []int
	idx        []int32
	val        []float64
}

// cscOf builds c's columns (the csr of its transpose), with the empty
// ones dropped when doubly compressed.
func cscOf(c *storage.COO, doubly bool) *csc {
	t := &storage.COO{Dims: []int64{c.Dims[1], c.Dims[0]}, Coords: [][]int64{c.Coords[1], c.Coords[0]}, Vals: c.Vals}
	m := csrOf(t)
	out := &csc{rows: c.Dims[0], cols: c.Dims[1], pos: m.pos, idx: m.idx, val: m.val}
	if doubly {
		out.pos = []int{0}
		for j := int64(0); j < m.rows; j++ {
			if m.pos[j+1] > m.pos[j] {
				out.ids = append(out.ids, int32(j))
				out.pos = append(out.pos, m.pos[j+1])
			}
		}
	}
	return out
}

// transposeInto writes m's rows as CSR into t (reusing its arrays) by a
// counting sort over row indices: rows come out with columns increasing.
func (m *csc) transposeInto(t *csr) *csr {
	n := len(m.idx)
	t.rows, t.cols = m.rows, m.cols
	if cap(t.idx) < n {
		t.idx, t.val = make([]int32, n), make([]float64, n)
	}
	t.pos, t.idx, t.val = startsInto(t.pos, m.rows, m.idx), t.idx[:n], t.val[:n]
	next := t.pos[:m.rows] // next[i]: where row i's next entry goes
	for q := 0; q+1 < len(m.pos); q++ {
		j := int32(q)
		if m.ids != nil {
			j = m.ids[q]
		}
		for p := m.pos[q]; p < m.pos[q+1]; p++ {
			i := m.idx[p]
			t.idx[next[i]], t.val[next[i]] = j, m.val[p]
			next[i]++
		}
	}
	// next has moved each row's start to its end: shift back.
	copy(t.pos[1:], t.pos[:m.rows])
	t.pos[0] = 0
	return t
}

// coo is a matrix as its entries' rows, columns and values, in row order
// (columns increasing in a row), without row starts.
type coo struct {
	rows, cols int64
	row, col   []int32
	val        []float64
}

func cooOf(c *storage.COO) *coo {
	m := csrOf(c)
	out := &coo{rows: m.rows, cols: m.cols, row: make([]int32, len(m.idx)), col: m.idx, val: m.val}
	for i := int64(0); i < m.rows; i++ {
		for p := m.pos[i]; p < m.pos[i+1]; p++ {
			out.row[p] = int32(i)
		}
	}
	return out
}

// rowsInto makes t the CSR view of m: its columns and values, and row
// starts counted from its rows (t's pos reused).
func (m *coo) rowsInto(t *csr) *csr {
	t.rows, t.cols, t.idx, t.val = m.rows, m.cols, m.col, m.val
	t.pos = startsInto(t.pos, m.rows, m.row)
	return t
}

// startsInto returns, in pos (reused), the starts of rows rows of a CSR
// matrix counted from row, the row of each entry.
func startsInto(pos []int, rows int64, row []int32) []int {
	if cap(pos) < int(rows)+1 {
		pos = make([]int, rows+1)
	}
	pos = pos[:rows+1]
	clear(pos)
	for _, i := range row {
		pos[i+1]++
	}
	for i := int64(0); i < rows; i++ {
		pos[i+1] += pos[i]
	}
	return pos
}

// coo3 is an order-3 tensor as its entries' coordinates and values, in
// coordinate order, without fiber starts.
type coo3 struct {
	dims    []int64
	i, j, k []int32
	val     []float64
}

func coo3Of(c *storage.COO) *coo3 {
	p := order(c)
	m := &coo3{dims: c.Dims, i: make([]int32, len(p)), j: make([]int32, len(p)), k: make([]int32, len(p)), val: make([]float64, len(p))}
	for q, e := range p {
		m.i[q], m.j[q], m.k[q], m.val[q] = int32(c.Coords[0][e]), int32(c.Coords[1][e]), int32(c.Coords[2][e]), c.Vals[e]
	}
	return m
}

// newFiber says whether entry p > 0 begins another (i,j) fiber.
func (m *coo3) newFiber(p int) bool {
	return m.j[p] != m.j[p-1] || m.i[p] != m.i[p-1]
}

// ttvCooLoop returns one value per (i,j) fiber of m, in order.
func ttvCooLoop(buf *outBuf, m *coo3, v []float64) []float64 {
	out := (*buf)[:0]
	val := m.val[:len(m.k)]
	s := 0.0
	for p, k := range m.k {
		if p > 0 && m.newFiber(p) {
			out = append(out, s)
			s = 0
		}
		s += val[p] * v[k]
	}
	if len(m.k) > 0 {
		out = append(out, s)
	}
	*buf = out
	return out
}

// ttmCooLoop returns a dense row of K values per (i,j) fiber of m, in
// order; bt is B(k,l) stored l-major.
func ttmCooLoop(buf *outBuf, m *coo3, bt *dense) []float64 {
	out, zeros := (*buf)[:0], make([]float64, bt.cols)
	val := m.val[:len(m.k)]
	var acc []float64
	for p, l := range m.k {
		if p == 0 || m.newFiber(p) {
			n := len(out)
			out = append(out, zeros...)
			acc = out[n:]
		}
		axpy(acc, val[p], bt.val[int(l)*bt.cols:int(l+1)*bt.cols])
	}
	*buf = out
	return out
}

// mttkrpCooLoop returns the dense I x R result; c is C(k,j) row-major, dt
// is D(j,l) stored l-major.
func mttkrpCooLoop(buf *outBuf, m *coo3, c, dt *dense) []float64 {
	r := min(c.cols, dt.cols)
	out := buf.take(int(m.dims[0])*r, true)
	t := make([]float64, r)
	// flush adds the fiber of entry p, now summed in t, to A(i,:).
	flush := func(p int) {
		if i, k := int(m.i[p]), int(m.j[p]); k < c.rows {
			addMul(out[i*r:(i+1)*r], c.val[k*c.cols:k*c.cols+r], t)
		}
		clear(t)
	}
	val := m.val[:len(m.k)]
	for p, l := range m.k {
		if p > 0 && m.newFiber(p) {
			flush(p - 1)
		}
		axpy(t, val[p], dt.val[int(l)*dt.cols:int(l)*dt.cols+r])
	}
	if len(m.k) > 0 {
		flush(len(m.k) - 1)
	}
	return out
}
