// Package engine owns the execution of SDQLite plans: it compiles a typed
// ir.Expr (closed except for physical objects, ir.OpGlobal) into a Kernel,
// a tree of Go closures over a frame of typed slots, and runs the kernel on
// a storage.Store. No Go toolchain is needed at run time.
//
// Any plan runs, naive or physical: logical singletons, lets that bind
// whole tensors, joins through repeated variables (a sum filtered on its
// key is a lookup, as in the interpreter), lookups into built
// dictionaries, @dense and @hash singletons, merge, subarray iteration.
// The result equals the reference interpreter's (package eval), including
// which entries a dictionary lists (views of physical data keep explicit
// zeros, built dictionaries drop them), up to the floating-point
// reassociation documented on Compile.
//
// What makes kernels fast:
//   - int64, float64 and bool values live in typed frame slots, never
//     boxed; every binder has its own slot;
//   - a sum over a range, a physical array or a segment of one, A(P(i):P(i+1)),
//     is a plain for loop; bodies of the common shapes (a product of array
//     reads at the loop's key or value times loop-invariant factors, added
//     to a scalar or to a singleton of a dense, hash or list result) are
//     fused into the loop, segment bounds are read in place, bounds checks
//     are hoisted where Go allows, and two levels of a sparse product (MMM,
//     TTM) run as one function, reading each segment's bounds one position
//     ahead, with the guards and lets between them (if 0 <= k < B_len1,
//     let t = A_val(p)) decided once per row from the key array's range
//     and read in place (windowPrelude), and a row of MMM into a narrow
//     workspace runs as one loop without calls (rowProduct); the rows of
//     a dense vector of segment dot products (SpMV) run as one loop, and
//     so do rows that bind a let to a row's dot product and scatter a row
//     scaled by it (BATAX, rowlet.go); a scalar merge of two segments
//     reads their bounds in place;
//   - the fused loops are generic in the element type of the arrays they
//     read (typed.go): int arrays (the values of pattern and integer
//     matrices) are converted in a register as they are read, as the
//     interpreter converts an int factor of a real product; int sums of
//     int array reads are typed loops too;
//   - an index array whose values all lie inside what it indexes (the
//     range storage.Array.IntRange remembers, scanned once when a tensor
//     is built) is read without a check per entry (fit.go): Go's bounds
//     check on x[idx[p]] made the textbook SpMV loop 1.15-1.3x the time
//     of the same loop in C. CSR-shaped rows of SpMV and BATAX, on amd64,
//     run in SSE2 assembly (fit_amd64.s) in the same order as the Go
//     loops that run elsewhere (build tag purego forces them), so both
//     give the same bits. There they read the column indices from a
//     32-bit copy (storage.Array.Narrow; made for the arrays these row
//     loops read, by Kernel.Prepare or the first run): 12 bytes per
//     non-zero, as SciPy's loop, instead of 16. BATAX's rows of a
//     pattern matrix (a gather, then the let's value at every key) run
//     in Go. Before a scatter, the dense result grows to every key its
//     index array holds (builder.holdKeysOf), past the usual growth
//     limit when that costs at most 4x the array: otherwise a matrix
//     with more than 65536 columns kept BATAX in its checked loop;
//   - a sum of singletons accumulates in place into the enclosing result
//     (out[i][k] += e), never adding up freshly built dictionaries;
//   - results are built per level as the plan's annotations say: @hash in
//     Go maps, unannotated and @unique levels in a sorted list while keys
//     arrive in increasing order (as they do when a storage mapping is
//     walked), turning into a Go map otherwise, and @dense in a flat
//     growable slice for the outermost level. A @dense level below it
//     costs its entries, not its key range (workspace.go): its rows share
//     one dense workspace per dictionary, written by key while a row is
//     open, with the keys it touches listed; the row is compacted when
//     another opens, to a dense slice if that takes fewer bytes than a
//     sorted list (it fills at least half of its keys from 0; a quarter
//     for levels of children), else to a sorted list; both are carved
//     from blocks per level. With AVX-512, a narrow row (MMM's 250
//     columns) is not tracked at all: the scatter loops only add, and
//     the whole slice is compacted eight keys at a time by compress
//     instructions (sweep.go, sweep_amd64.s). After two dense rows in a
//     row the next ones skip the workspace for dense slices of their own
//     (a streak, ended by the first row that turns out sparse; empty rows
//     count for nothing); rows reopened too often get slices of their
//     own. Keys far beyond a dense slice (or negative) go to a side map.
//     A dictionary of rows whose keys arrive in increasing order, each
//     row once (the first level of a CSF tensor), is built in sequential
//     mode (seqrows.go): one reused row builder, closed rows left where
//     the workspace carved them and recorded by key and end, no builder
//     or pointer per row, empty rows costing nothing (an empty open row
//     stays open as the next one, not even released); so is a dictionary
//     of such dictionaries (TTM's {i -> {j -> {k -> v}}}, seqouter.go),
//     its rows (i, j) in one sequence; the first key out of order (or any
//     other access) turns it into the general form;
//   - merge is a two-pointer intersection when both segments are sorted,
//     checked in O(1) from per-array descent counts made when a run starts;
//     otherwise it runs the nested loops of its definition. A pointer that
//     falls behind gallops (seek: an exponential, then a binary search with
//     no branch on the keys; into 512 keys or more, from an interpolated
//     first probe), segment bounds are read in place, a merge
//     with an empty segment returns at once, and a body that is a product
//     of two real arrays runs in the merge's own loop; a real merge of two
//     segments that is a factor of a fused loop's product is read in place
//     (atMerge, also behind a guard: if g then merge), without the
//     closures around it; a dense loop whose product is an array read
//     times such a merge with one segment fixed (MTTKRP's C_val(q) *
//     merge of B's fiber with D's row j) runs as one loop, the fixed
//     segment checked once, the guards once per window (mergeRow), and
//     so does the loop over B's keys around it (mergeRowsRun); its merges
//     seek in D's long rows through a bucket table the run builds first,
//     which says where each search starts (seekIndex, seekindex.go); a loop
//     whose body is a merge adding its pairs into the builder (MTTKRP on
//     orghs: C's row around the merge of B's fiber with D's row j) reads
//     the fixed segment once per run and calls the body only at a pair
//     (mergeLoop, mergeloop.go), and with the loop over B's keys around
//     it the three levels run in one function, their bounds read in place
//     with no frame slot between (mergeLoopRowsRun);
//   - a read of a physical array at m*x + o, x a fused loop's index and m,
//     o sums and products of constants, variables and scalars (a dense
//     layout's D_val(D_len2 * j + l)), maybe behind a guard, is a factor
//     read in place (atAff, affine.go), not five closures; the dense loops
//     of MTTKRP with D dense run without a call per entry: a dot of a row
//     against it (affDot), a scatter (affScatter), the loop over B's fiber
//     around C's row (affRowsRun, written out in affRowsDirect when the key
//     ranges keep every read inside D) and C's row around a dot over the
//     fiber (affDotRows);
//   - a fused loop whose prelude only tests its key against constants and
//     reads lets at its position skips those steps for a window whose keys
//     all pass (fusedBody.windowOf, the same decision as nestedRun's), and
//     so does a loop whose body nestedRun does not fuse (preludeRun); a
//     guard inside a singleton keyed by a loop variable, {k -> if g then
//     x}, joins the prelude (a zero added into a built dictionary is
//     dropped); a loop over a segment whose body is not fused runs in one
//     call, its bounds read in place (segmentLoop);
//   - SpMV over the sell format (storage's sliced ELLPACK, two 32-bit
//     columns per int word) runs eight rows at a time (sell.go): the
//     optimizer's fused plan is recognized up to the order of + and *,
//     and on amd64 with AVX2 each step of a chunk is one load of eight
//     columns, two masked gathers of x and two vector adds
//     (sell_amd64.s), elsewhere the same loop in Go; every lane adds in
//     the order of the plan, so the bits are CSR's. Chunks whose arrays
//     contradict each other run on the general path, which reports them;
//   - a let computes its value once where it is bound;
//   - with Options.Threads > 1 the outermost sum of the plan (at the top,
//     under lets, or as a top let's value) is split across workers with
//     private accumulators merged in order; rows keyed by a range variable
//     are written in place by all workers.
//
// Runtime errors (an array read past its end, an integer division by zero,
// a segment whose bounds are out of order) are *Error values with the
// position of the expression; the engine records the first one and stops
// the loops, it never panics on bad data.
package engine
