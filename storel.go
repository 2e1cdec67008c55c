// Package storel is the Go API for programs that embed storel: collect
// physical data and storage mappings in a Workspace, compile an SDQLite
// program against them, run it, and read the result.
//
// The pipeline (docs/design.md §1) is parse → desugar → type check → compose
// (paper §5.1) → optimize → compile → run. Each stage lives in its own
// package (sdql, ir, opt, engine); this package wires them together for
// callers and for the storel command.
package storel
