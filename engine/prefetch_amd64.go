//go:build !purego

package engine

import "unsafe"

// prefetchWrite asks for the cache lines of the n 8-byte words at p to
// be fetched for writing (prefetch_amd64.s), so that a row about to be
// zeroed and written finds them in the cache. It neither reads nor
// writes them, and never faults.
//
//go:noescape
func prefetchWrite(p unsafe.Pointer, n int64)
