// Package ir owns the core calculus that every stage after parsing shares:
// expression nodes, their types, the SDQLite printer, free variables,
// capture-avoiding substitution and fresh names.
//
// The front end (package sdql) desugars surface syntax into this calculus
// (paper Table 1); the interpreter (package eval), the optimizer (package opt)
// and the engine (package engine) all consume it. A single node struct with an
// operator tag (rather than one Go type per construct) keeps generic
// traversals — rewriting, hashing into an e-graph, printing — short and
// uniform.
package ir
