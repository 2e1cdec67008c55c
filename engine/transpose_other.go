//go:build !amd64 || purego

package engine

// No assembly here: the lane-major copy runs in Go.
var useTranspose4 = false

func (c *sharedCopy) copyBlocks(r0, groups, b0, b1 int64) int64 { return b0 }
