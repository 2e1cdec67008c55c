// Package shard cuts a program's work into parts that run on their own and
// combines their results: a sum over a disjoint union is the sum of the
// sums, so the outermost sum over an input, split by that input's mode-0
// coordinate, gives parts whose results add up key-wise to the answer
// (and are simply concatenated when that coordinate is an output key).
// A part is the same program over a slice of the input, stored as its own
// storage mapping (rows r0..r1 of a CSR: the mapping adds r0 to its row
// keys), so each part is optimized like any layout. storel shard writes
// the parts; storel combine adds their results.
package shard
