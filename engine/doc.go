// Package engine owns the execution of SDQLite plans: it compiles a typed
// ir.Expr (closed except for physical objects, ir.OpGlobal) into a Kernel,
// a tree of Go closures over a frame of typed slots, and runs the kernel on
// a storage.Store.
//
// Any plan runs, naive or physical: logical singletons, lets that bind
// whole tensors, lookups into constructed dictionaries, @dense and @hash
// singletons, merge, subarray iteration. The result equals the reference
// interpreter's (package eval) up to the floating-point reassociation
// documented on Compile.
//
// What makes kernels fast: int64, float64 and bool values live in typed
// slots, never boxed; sums over ranges, arrays and subarrays of physical
// arrays are plain for loops, with the hottest body shapes (products of
// array reads, accumulation of a singleton into a dense or hash result)
// fused into the loop itself; merge is a two-pointer intersection; a sum of
// singletons accumulates in place into the enclosing result (out[i][k] +=
// e) instead of adding up freshly built dictionaries; @dense results live
// in flat growable slices and @hash (and unannotated) results in Go maps.
// With Options.Threads > 1 the outermost sum of the plan is split across
// workers with private accumulators.
package engine
