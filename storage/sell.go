package storage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/storel/storel/ir"
)

// SELL is sliced ELLPACK with sorting (SELL-C-σ, Kreutzer et al. 2014)
// with C = SellHeight rows per chunk and σ = SellWindow: the rows of a
// matrix, sorted by decreasing length within each window of SellWindow
// consecutive rows, are cut into chunks of SellHeight rows; a chunk
// stores the k-th entry of its rows side by side, for k up to its longest
// row, so a kernel can walk eight rows at once with one loop and no
// per-row exit. Column indices are packed two to an int word (a 32-bit
// column in each half), so a chunk's step of eight columns is 32 bytes,
// what a CSR loop with 32-bit indices reads: flexible storage describes
// narrow indices in the mapping itself (the halves are w % 2^32 and
// w / 2^32) rather than in a new array type.
const (
	SellHeight = 8
	SellWindow = 4096
	// PackedHalf is 2^32: a packed word w holds w % PackedHalf and
	// w / PackedHalf (the optimizer bounds both, opt.ArrayStats).
	PackedHalf = 1 << 32
)

// Physical object names of a SELL tensor T.
func sellChunksName(t string) string { return t + "_chunks" }
func sellPermName(t string) string   { return t + "_perm" }
func sellRlenName(t string) string   { return t + "_rlen" }
func sellCposName(t string) string   { return t + "_cpos" }
func sellColsName(t string) string   { return t + "_cols" }

// buildSell fills st with the SELL arrays of the matrix c: T_chunks, the
// number of chunks; T_perm(8c+r) and T_rlen(8c+r), the row held by lane
// r of chunk c and its length (lanes past the last row: row 0, length 0,
// never read: the mapping walks lanes 0:T_dim1, and row keys within
// 0:T_dim1 let the optimizer build a result densely); T_cpos(c), the
// first word of chunk c in T_cols, 4 words per step k up to the chunk's
// longest row; T_cols, the packed columns
// (lane 2h in the low half of word 4k+h of its chunk, lane 2h+1 in the
// high half; padding is column 0); T_val, without +pattern, the value of
// each slot, 2 per word, in the same order (padding 0).
func buildSell(st Store, name string, c *COO, f Format) error {
	if c.Dims[1] > math.MaxInt32 {
		return fmt.Errorf("sell packs columns in 32 bits: %d columns are too many", c.Dims[1])
	}
	// CSR first: rows, sorted columns, repeats summed.
	csr := Store{}
	if err := buildLevels(csr, name, c, Format{Name: "csr", Levels: []LevelKind{LevelDense, LevelCompressed}, ModeOrder: []int{0, 1}, Pattern: f.Pattern}); err != nil {
		return err
	}
	pos, idx := csr[PosName(name, 2)].(*Array).I, csr[IdxName(name, 2)].(*Array).I
	val, _ := csr[ValName(name)].(*Array)
	n := c.Dims[0]
	rows := make([]int64, n)
	for i := range rows {
		rows[i] = int64(i)
	}
	length := func(i int64) int64 { return pos[i+1] - pos[i] }
	for w := int64(0); w < n; w += SellWindow {
		win := rows[w:min(w+SellWindow, n)]
		slices.SortStableFunc(win, func(a, b int64) int { return cmp.Compare(length(b), length(a)) })
	}
	chunks := (n + SellHeight - 1) / SellHeight
	perm := make([]int64, chunks*SellHeight)
	rlen := make([]int64, chunks*SellHeight)
	clen := make([]int64, chunks) // the longest row of each chunk
	cpos := make([]int64, chunks+1)
	for q := range perm {
		if q < len(rows) {
			perm[q], rlen[q] = rows[q], length(rows[q])
		}
		clen[q/SellHeight] = max(clen[q/SellHeight], rlen[q])
	}
	for k, l := range clen {
		cpos[k+1] = cpos[k] + l*SellHeight/2
	}
	cols := make([]int64, cpos[chunks])
	var ints []int64
	var reals []float64
	if val != nil {
		if val.Elem == ir.Int {
			ints = make([]int64, 2*len(cols))
		} else {
			reals = make([]float64, 2*len(cols))
		}
	}
	for q, i := range perm {
		ch, lane := int64(q/SellHeight), int64(q%SellHeight)
		for k := range rlen[q] {
			word := cpos[ch] + k*SellHeight/2 + lane/2
			p := pos[i] + k
			if lane%2 == 0 {
				cols[word] += idx[p]
			} else {
				cols[word] += idx[p] * PackedHalf
			}
			slot := 2*word + lane%2
			if ints != nil {
				ints[slot] = val.I[p]
			} else if reals != nil {
				reals[slot] = val.F[p]
			}
		}
	}
	st[sellChunksName(name)] = IntScalar(chunks)
	st[sellPermName(name)] = IntArray(perm)
	st[sellRlenName(name)] = IntArray(rlen)
	st[sellCposName(name)] = IntArray(cpos)
	st[sellColsName(name)] = IntArray(cols)
	switch {
	case ints != nil:
		st[ValName(name)] = IntArray(ints)
	case reals != nil:
		st[ValName(name)] = RealArray(reals)
	}
	return nil
}

// sellMapping is the storage mapping of a SELL matrix name (see
// buildSell). Lane q (row T_perm(q)) lies in chunk q / 8; its k-th entry
// is in word T_cpos(q / 8) + 4k + q % 8 / 2 of T_cols, in the low half
// for an even lane (the word modulo 2^32) and in the high half for an odd
// one (the word divided by 2^32): written so, the optimizer bounds both
// by the halves' ranges it records for the array and proves x(column)
// in bounds, which fusing SpMV needs. Its value, without +pattern, is slot
// 2 T_cpos(q / 8) + 8k + q % 8 of T_val. Lanes are rows, so each row is
// one singleton, as in CSR: a kernel may walk a chunk's eight rows side
// by side, because they are independent sums.
func sellMapping(name string, elem ir.Base, pattern bool) string {
	val := "1"
	decl := ""
	if !pattern {
		val = "T_val(2 * T_cpos(q / 8) + 8 * k + q % 8)"
		decl = "CREATE ELEM ARRAY T_val(2 * T_cpos(T_chunks));\n"
	}
	text := `CREATE int SCALAR T_dim1;
CREATE int SCALAR T_dim2;
CREATE int SCALAR T_chunks;
CREATE int ARRAY T_perm(8 * T_chunks);
CREATE int ARRAY T_rlen(8 * T_chunks);
CREATE int ARRAY T_cpos(T_chunks + 1);
CREATE int ARRAY T_cols(T_cpos(T_chunks));
` + decl + `CREATE TENSOR T AS
  sum(<q, _> in 0:T_dim1)
    { @unique T_perm(q) -> sum(<k, _> in 0:T_rlen(q))
      { @unique if (q % 2 == 0) then T_cols(T_cpos(q / 8) + 4 * k + q % 8 / 2) % 4294967296
                else T_cols(T_cpos(q / 8) + 4 * k + q % 8 / 2) / 4294967296 -> VAL } };
`
	text = strings.ReplaceAll(text, "VAL", val)
	return strings.NewReplacer("T_", name+"_", "TENSOR T ", "TENSOR "+name+" ", "ELEM", elem.String()).Replace(text)
}
