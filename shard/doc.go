// Package shard cuts a program's work into parts that run on their own and
// combines their results: a sum over a disjoint union is the sum of the
// sums, so the outermost sum over an input, split by that input's mode-0
// coordinate, gives parts whose results add up key-wise to the answer
// (and are simply concatenated when that coordinate is an output key).
//
// Analyze decides the split (or says why a program cannot be split), Cuts
// balances the parts by entries, and Part stores one part: the same
// tensor holding only its slice, as a storage mapping of its own (rows
// r0..r1 of a CSR: the mapping adds r0 to its row keys), so each part is
// optimized like any layout. Manifest is what storel run --manifest reads
// from a part's directory, Plan what storel combine reads, and Combine
// streams the parts' results into their sum.
package shard
