//go:build !amd64 || purego

package engine

func mergeReals(dst, src []float64) { mergeRealsGo(dst, src) }
