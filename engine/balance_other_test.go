//go:build !linux

package engine

// threadCPU reports that no per-thread CPU time is known here.
func threadCPU() (int64, bool) { return 0, false }

// processCPU reports no CPU time here.
func processCPU() int64 { return 0 }
