//go:build !amd64 || purego

package engine

func nonZeros(s []float64) int { return nonZerosGo(s) }

func nonZeroInts(s []int64) int { return nonZeroIntsGo(s) }
