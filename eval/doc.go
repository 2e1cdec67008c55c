// Package eval owns the reference interpreter of the core calculus: the
// oracle that every optimization and every engine in storel is tested
// against. It evaluates a typed ir.Expr over the physical objects of a
// storage.Store and returns a logical value.Value.
//
// The interpreter follows the semantics of paper §3.2 and docs/design.md §2
// literally: a sum adds its bodies in increasing key order, iterating a
// physical array, a range or a subarray visits every position whatever its
// value, a missing key reads as zero, and a dictionary holding only zeros
// equals the empty one. Speed comes second, but it avoids quadratic work
// wherever a simple data structure gives the same answer bit for bit: sums
// accumulate key-wise in place instead of re-adding growing dictionaries,
// arrays are indexed in place instead of being copied, merge indexes its
// second operand by value, and a sum whose body only keeps the entry at one
// key looks that key up (see shortcut.go).
package eval
