//go:build !amd64 || purego

package engine

import "unsafe"

// prefetchWrite does nothing here (prefetch_amd64.go).
func prefetchWrite(unsafe.Pointer, int64) {}
