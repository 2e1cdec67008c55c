package shard

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// Input is a tensor given as coordinates (a --tensor): a candidate for the
// split, or data every part gets a copy of.
type Input struct {
	Name   string
	COO    *storage.COO
	Format storage.Format
}

// Split says how a program's work is cut.
type Split struct {
	Tensor string // the input whose outermost sum is cut by its mode-0 coordinate
	// Disjoint: every key of the result's outermost level is the split
	// coordinate, so parts' results share no key and combining them
	// concatenates them; otherwise it adds them key-wise.
	Disjoint bool
	Type     ir.Type // the result's type
}

// Analyze decides how to split the query of prog ("" as in ir.Compose):
// its definition must be a sum over one of inputs, named by no other part
// of the program, so that the sum over a partition of that tensor's
// entries by their mode-0 coordinate is the sum of the parts' sums.
// Every other input is copied into every part; sizes gives the number of
// entries of each (inputs', the split one's included, and others such as
// --data arrays; an input's COO may hold only its header), and an input
// at least as large as the split one is refused, since each part would
// then hold more than a share of the work's data, unless copyOK names it.
// The error says why a program cannot be split.
func Analyze(prog *ir.Program, query string, inputs []Input, sizes map[string]int, copyOK map[string]bool) (*Split, error) {
	def, at, what := queryDef(prog, query)
	if def == nil {
		return nil, fmt.Errorf("the program has no %s to compute", what)
	}
	if def.Type.Base == ir.Bool {
		return nil, fmt.Errorf("%s is a bool (%s): parts' results are combined by adding, which bools do not", what, def.Type)
	}
	isInput := map[string]*Input{}
	for i := range inputs {
		isInput[inputs[i].Name] = &inputs[i]
	}
	if def.Op != ir.OpSum || def.Args[0].Op != ir.OpVar || isInput[def.Args[0].Name] == nil {
		return nil, fmt.Errorf("%s at %s is %s, not a sum over a --tensor: storel shard splits the outermost sum over an input, and parts of anything else could not be combined by adding", what, def.Pos, describe(def))
	}
	s := def.Args[0].Name
	in := isInput[s]
	if defs := tensorDefs(prog, s); defs != 1 {
		return nil, fmt.Errorf("%s is defined %d times (a --tensor and by the program): the sum at %s may not range over the loaded tensor", s, defs, def.Pos)
	}
	if ir.Occurs(s, def.Args[1]) {
		return nil, fmt.Errorf("%s at %s reads %s again inside its outermost sum over %s: every part would need all of %s, so splitting it would move data between parts", what, def.Pos, s, s, s)
	}
	// Tensors the query reads, transitively, other than through the sum.
	seen := map[string]bool{}
	var reach func(e *ir.Expr, before int) error
	reach = func(e *ir.Expr, before int) error {
		for name := range ir.FreeVars(e) {
			if name == s {
				return fmt.Errorf("%s reads %s through another tensor: every part would need all of %s, so splitting it would move data between parts", what, s, s)
			}
			i := lastDef(prog, name, before)
			if i < 0 || seen[name] {
				continue
			}
			seen[name] = true
			if err := reach(prog.Tensors[i].Def, i); err != nil {
				return err
			}
		}
		return nil
	}
	if err := reach(def.Args[1], at); err != nil {
		return nil, err
	}
	if err := physicalReads(prog, def, s, in.COO.Order()); err != nil {
		return nil, err
	}
	if in.Format.Kind != storage.FormatLevels {
		return nil, fmt.Errorf("%s is stored as %s: storel shard cuts level formats (dense, csr, csc, dcsr, dcsc, coo, csf or a level string)", s, in.Format.Name)
	}
	for name, n := range sizes {
		if name != s && n >= sizes[s] && n > 0 && !copyOK[name] {
			return nil, fmt.Errorf("%s (%d entries) is at least as large as %s (%d entries), which the outermost sum splits: every part would hold all of %s, so sharding would not divide the data (splitting both would move data between parts, as in a product of two large matrices); give --copy %s to copy it to every part anyway", name, n, s, sizes[s], name, name)
		}
	}
	return &Split{Tensor: s, Disjoint: keyedBy(def.Args[1], def.Vars[0]), Type: def.Type}, nil
}

// queryDef returns the expression the query computes, the number of
// tensor definitions it may read, and what to call it in messages.
func queryDef(prog *ir.Program, query string) (*ir.Expr, int, string) {
	switch {
	case query == "" && prog.Result != nil:
		return prog.Result, len(prog.Tensors), "the final expression"
	case query == "" && len(prog.Tensors) > 0:
		t := prog.Tensors[len(prog.Tensors)-1]
		return t.Def, len(prog.Tensors) - 1, "tensor " + t.Name
	}
	for i := len(prog.Tensors) - 1; i >= 0; i-- {
		if t := prog.Tensors[i]; t.Name == query {
			return t.Def, i, "tensor " + t.Name
		}
	}
	return nil, 0, "tensor " + query
}

func tensorDefs(prog *ir.Program, name string) int {
	n := 0
	for _, t := range prog.Tensors {
		if t.Name == name {
			n++
		}
	}
	return n
}

// lastDef returns the index of the definition of name visible before
// index before, or -1.
func lastDef(prog *ir.Program, name string, before int) int {
	for i := before - 1; i >= 0; i-- {
		if prog.Tensors[i].Name == name {
			return i
		}
	}
	return -1
}

// physicalReads refuses programs that read the split tensor's physical
// objects (other than its dimensions, which parts keep): in a part they
// hold only a slice.
func physicalReads(prog *ir.Program, def *ir.Expr, s string, order int) error {
	dims := map[string]bool{}
	for k := 1; k <= order; k++ {
		dims[storage.DimName(s, k)] = true
	}
	check := func(e *ir.Expr, where string) error {
		var bad string
		ir.Walk(e, func(x *ir.Expr) bool {
			if x.Op == ir.OpGlobal && strings.HasPrefix(x.Name, s+"_") && !dims[x.Name] && bad == "" {
				bad = x.Name
			}
			return true
		})
		if bad != "" {
			return fmt.Errorf("%s reads %s, a physical object of %s: a part holds only a slice of it", where, bad, s)
		}
		return nil
	}
	for _, t := range prog.Tensors {
		if t.Name == s {
			continue
		}
		if err := check(t.Def, "tensor "+t.Name+" at "+t.Pos.String()); err != nil {
			return err
		}
	}
	if err := check(def, "the query"); err != nil {
		return err
	}
	for _, d := range prog.Decls {
		if strings.HasPrefix(d.Name, s+"_") {
			continue
		}
		for _, e := range d.Dims {
			if err := check(e, "the size of "+d.Name+" at "+d.Pos.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyedBy reports whether every key of the dictionary e's outermost level
// is the variable k (not rebound on the way): then the results of sums
// over different k share no key.
func keyedBy(e *ir.Expr, k string) bool {
	if e.Type.Depth == 0 {
		return false
	}
	switch e.Op {
	case ir.OpSingleton:
		return e.Args[0].Op == ir.OpVar && e.Args[0].Name == k
	case ir.OpSum:
		return !slices.Contains(e.Vars, k) && keyedBy(e.Args[1], k)
	case ir.OpLet:
		return e.Vars[0] != k && keyedBy(e.Args[1], k)
	case ir.OpIf:
		return keyedBy(e.Args[1], k) && (len(e.Args) < 3 || keyedBy(e.Args[2], k))
	case ir.OpAdd:
		return keyedBy(e.Args[0], k) && keyedBy(e.Args[1], k)
	case ir.OpMul:
		// scalar * dict scales the dictionary's values, keeping its keys.
		return e.Args[0].Type.Depth == 0 && keyedBy(e.Args[1], k) ||
			e.Args[1].Type.Depth == 0 && keyedBy(e.Args[0], k)
	case ir.OpConst:
		return true // the empty dictionary
	}
	return false
}

func describe(e *ir.Expr) string {
	switch e.Op {
	case ir.OpSum:
		return "a sum over " + strings.SplitN(ir.Format(e.Args[0]), "\n", 2)[0]
	case ir.OpVar:
		return "the tensor " + e.Name
	}
	return "an expression of the form " + e.Op.String()
}

// Cuts returns n+1 increasing bounds 0 = b[0] <= ... <= b[n] = dims[0] on
// c's mode-0 coordinates: part p holds the entries whose coordinate lies
// in [b[p], b[p+1]), about len/n entries each (entries sharing a
// coordinate stay together, so some parts may be empty).
func Cuts(c *storage.COO, n int) []int64 {
	counts := make([]int64, c.Dims[0])
	for _, x := range c.Coords[0] {
		counts[x]++
	}
	return CutsOf(counts, c.Dims[0], n)
}

// CutsOf is Cuts given the number of entries at each mode-0 coordinate
// (counts may stop after the last non-empty one) and the mode's size.
func CutsOf(counts []int64, dim0 int64, n int) []int64 {
	var total int64
	for _, k := range counts {
		total += k
	}
	b := make([]int64, n+1)
	b[n] = dim0
	x, below := int64(0), int64(0) // below: entries at coordinates < x
	for p := 1; p < n; p++ {
		// The first coordinate holding entry number ceil(p*total/n)
		// (counting from 0) in coordinate order.
		q := (int64(p)*total + int64(n) - 1) / int64(n)
		for x < int64(len(counts)) && below+counts[x] <= q {
			below += counts[x]
			x++
		}
		b[p] = x
		if q >= total {
			b[p] = dim0
		}
	}
	return b
}

// BaseName is the scalar a part's mapping adds to mode 0's dense key.
func BaseName(t string) string { return t + "_base1" }

// Part stores the entries of in whose mode-0 coordinate lies in [lo, hi)
// in in's format and returns their physical objects and storage mapping:
// the same tensor, with the same dimensions, holding only those entries.
// A dense level holding mode 0 stores only hi-lo positions, and the
// mapping adds BaseName = lo to their keys (storage.OffsetMapping), except
// where keepsRows keeps all rows; formats that store mode 0's coordinates
// need no offset and use the standard mapping.
func Part(in Input, lo, hi int64) (storage.Store, string, error) {
	c := in.COO
	keep := make([]int32, 0, len(c.Vals)/2)
	for p, x := range c.Coords[0] {
		if lo <= x && x < hi {
			keep = append(keep, int32(p))
		}
	}
	part := &storage.COO{Dims: slices.Clone(c.Dims), Coords: make([][]int64, c.Order()), Field: c.Field, Vals: make([]float64, len(keep))}
	for m := range part.Coords {
		part.Coords[m] = make([]int64, len(keep))
	}
	for e, p := range keep {
		for m := range part.Coords {
			part.Coords[m][e] = c.Coords[m][p]
		}
		part.Vals[e] = c.Vals[p]
	}
	f, err := in.Format.ForOrder(c.Order())
	if err != nil {
		return nil, "", fmt.Errorf("tensor %s: %v", in.Name, err)
	}
	rebase := f.Kind == storage.FormatLevels && f.DenseMode0() && !keepsRows(f, c.Dims[0], len(keep))
	if rebase {
		part.Dims[0] = hi - lo
		for e := range part.Coords[0] {
			part.Coords[0][e] -= lo
		}
	}
	st, err := storage.Build(in.Name, part, f)
	if err != nil {
		return nil, "", err
	}
	st[storage.DimName(in.Name, 1)] = storage.IntScalar(c.Dims[0])
	if !rebase {
		return st, storage.Mapping(in.Name, f, c.Order(), c.Elem()), nil
	}
	st[BaseName(in.Name)] = storage.IntScalar(lo)
	return st, storage.OffsetMapping(in.Name, f, c.Order(), c.Elem(), BaseName(in.Name)), nil
}

// keepsRows reports whether a part of a tensor of rows rows stored in f keeps the
// whole row range as positions (empty outside its slice) rather than
// rebasing it: when f's first level is dense over mode 0 with a sparse
// level under it (CSR-like), and the rows cost no more than the part's
// entries (8 bytes a row against at least 16 an entry). Its mapping is
// then the standard one, which the engine's CSR row loops recognize; a
// mapping that adds an offset to the row key they do not (measured: SpMV
// on cnr-2000 executes 2.7x slower through the offset).
func keepsRows(f storage.Format, rows int64, entries int) bool {
	return len(f.Levels) >= 2 && f.Levels[0] == storage.LevelDense && f.ModeOrder[0] == 0 &&
		f.Levels[1] != storage.LevelDense && rows <= int64(entries)
}

// sortedNames returns the store's object names in order, for files written
// in a stable order.
func sortedNames(st storage.Store) []string {
	names := make([]string, 0, len(st))
	for k := range st {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
