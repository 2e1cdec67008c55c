package storage

import (
	"math/bits"
	"slices"
)

// sortEntries returns the entries of c ordered lexicographically by their
// coordinates taken in the given mode order (a stable sort, so repeated
// coordinates keep their file order). When the coordinates pack into 64
// bits it radix-sorts the packed keys (and skips sorting already sorted
// input, which files often are); otherwise it compares tuples.
func sortEntries(c *COO, modes []int) []int32 {
	n := len(c.Vals)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	widths := make([]int, len(modes))
	total := 0
	for l, m := range modes {
		if c.Dims[m] > 1 {
			widths[l] = bits.Len64(uint64(c.Dims[m] - 1))
		}
		total += widths[l]
	}
	if total > 64 {
		slices.SortStableFunc(perm, func(a, b int32) int {
			for _, m := range modes {
				x, y := c.Coords[m][a], c.Coords[m][b]
				if x != y {
					if x < y {
						return -1
					}
					return 1
				}
			}
			return 0
		})
		return perm
	}
	keys := make([]uint64, n)
	for l, m := range modes {
		col := c.Coords[m]
		w := widths[l]
		for i := range keys {
			keys[i] = keys[i]<<w | uint64(col[i])
		}
	}
	if slices.IsSorted(keys) {
		return perm
	}
	radixSort(keys, perm, total)
	return perm
}

// radixSort sorts keys (whose values fit in width bits) together with
// idx, stably, by least-significant-digit passes of at most 16 bits.
func radixSort(keys []uint64, idx []int32, width int) {
	if width == 0 || len(keys) < 2 {
		return
	}
	passes := (width + 15) / 16
	digit := (width + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	count := make([]int, 1<<digit)
	k2 := make([]uint64, len(keys))
	i2 := make([]int32, len(idx))
	src, dst := keys, k2
	isrc, idst := idx, i2
	for p := 0; p < passes; p++ {
		shift := uint(p * digit)
		clear(count)
		for _, k := range src {
			count[(k>>shift)&mask]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i, k := range src {
			d := (k >> shift) & mask
			j := count[d]
			count[d]++
			dst[j] = k
			idst[j] = isrc[i]
		}
		src, dst = dst, src
		isrc, idst = idst, isrc
	}
	if passes%2 == 1 {
		copy(keys, src)
		copy(idx, isrc)
	}
}
