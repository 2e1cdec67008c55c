// Package engine owns the execution of SDQLite plans: Compile turns a
// typed ir.Expr (closed except for physical objects, ir.OpGlobal) into a
// Kernel, loop nests of the loop-nest IR over a frame of typed slots
// (Go closures per node where the IR declines), and Kernel.Exec runs it on a
// storage.Store. No Go toolchain is needed at run time.
//
// Any plan runs, naive or physical, and gives the reference
// interpreter's result (package eval), including which entries a
// dictionary lists, up to the floating-point reassociation documented on
// Compile. The main types:
//
//	Kernel    a compiled plan; Prepare makes the 32-bit index copies its
//	          row loops read, Exec and ExecSampled run it
//	Options   threads, Limits (memory, time: the top sum runs in
//	          windows checked between them, limits.go), and the
//	          switches tests use
//	Result    the result dictionary or scalar, with Stats of the run
//	Error     a run-time error (array read past its end, integer
//	          division by zero, segment out of order) with the position
//	          of the expression, or a limit passed; the kernel stops at
//	          the first one
//
// How plans are lowered (docs/design.md §6 has the whole picture):
//
//	nest*.go, lane.go      tried first for every sum: the loop-nest IR,
//	                       guards discharged by interval facts, bodies
//	                       run over batches of positions, calls of a few
//	                       positions lane by lane (nest.go: what it
//	                       declines; the bake-off behind batches and
//	                       lanes); inner ranges whose bounds change from
//	                       row to row in position space (nestflat.go),
//	                       rows whose reads interleave eight to a chunk
//	                       as SIMD lanes, their sums added at their keys
//	                       or their dots scattered back over the rows
//	                       (nestinter.go, interkernel*)
//	rangedot.go            a sum over a range inside a batch (SDDMM's rank
//	                       dot, a dense matrix's row): a straight loop
//	                       per lane, reads and guards checked at the
//	                       range's ends, or for the batch by interval
//	                       facts
//	nestlift.go            a dense range above compressed levels (or a
//	                       short range leaf) run as lanes: the inner
//	                       loops once for many keys, values of the key
//	                       as vectors
//	nestliftrows.go        a loop whose iterations each open a row that
//	                       a lifted range fills (TTM's fibers): the lanes
//	                       written where the row stays, the row recorded
//	                       closed, no builder call per row; and the
//	                       loop around it (TTM's i) running it directly
//	nestswap.go            a dense range inside a sparse loop that adds
//	                       its runs into one row (TTM's fiber) swapped
//	                       outward, to lift: the row summed in lanes
//	                       over the loop and added once
//	linform.go             the linear normal form of int indices that
//	                       lanes and interleaved rows prove strides from
//	nesttemp.go            dictionaries the plan builds (temporaries) read
//	                       and iterated inside loop nests
//	hashlevels.go, hashwalk.go
//	                       a physical hash map (or a trie's entries)
//	                       laid out by levels (keys, children's bounds,
//	                       values as arrays): its walks
//	                       rewritten into segment loops over them, its
//	                       rows otherwise iterated and probed in the nest
//	collect.go             a dictionary of rows filled out of row order
//	                       (a transposed copy): its entries collected,
//	                       laid out by counting as compressed rows
//	runwalk.go, runs.go    walks of runs of sorted coordinates (a COO):
//	                       rewritten into segment loops over a run layout
//	                       found in one pass by Prepare (or the first
//	                       run); otherwise a loop over runs found while
//	                       walking (runend kept per run)
//	nestrows.go            rows of a nested result scattered by
//	                       index-array keys (MMM, TTM: Gustavson): each
//	                       segment one scatter into the row's workspace,
//	                       the loop above over batches of its positions
//	compile.go, loops.go   closures per node, for any plan the IR
//	                       declines (the reference fallback)
//	segment.go             segments of index arrays whose bounds are
//	                       read in place; the merge-dot primitive
//	fit.go, fit_amd64.s    index loops read without per-entry checks
//	                       when the index array's range fits
//	builder.go, workspace.go, seqrows.go, seqouter.go, appendrow.go
//	                       results built in place per level: @dense in
//	                       slices and workspaces (rows whose keys arrive
//	                       in order appended where they stay), @hash in
//	                       Go maps
//	nestmerge.go           the IR's merge iterator: two sorted segments'
//	                       intersection, or a segment against a range
//	                       (a seek), behind a guard or not, into a real
//	                       scalar, a dense row's entry or a dictionary at
//	                       each pair's key, the body over batches of
//	                       matched pairs (or the merge-dot primitive);
//	                       rows of merges (SDDMM, MTTKRP with csr factors)
//	nestmergerows.go       a merge whose pairs scatter segments into a
//	                       dense row (MMM with B dcsr or coo), a batch
//	                       of pairs' segments at once
//	merge.go, seekindex.go the closure path's merge, for the merges the
//	                       IR declines and its fallback on unsorted or
//	                       out-of-range input; galloping seeks; seek
//	                       tables over long rows
//	parallel.go, split.go  the outermost sum split across workers: chunks
//	                       of equal work (iterations plus the positions
//	                       of the segments below, read from the position
//	                       arrays), taken in turn by the workers where the
//	                       result is shared or a scalar; private results
//	                       (one chunk per worker) merged by workers over
//	                       ranges of keys, their rows kept for the next run
//
// Assembly loops (amd64) add in the same order as their Go twins, which
// the build tag purego selects, so both give the same bits.
package engine
