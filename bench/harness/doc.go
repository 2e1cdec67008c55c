// Package harness runs the paper's experiments (§6) against real peers
// (SciPy, NumPy, PyTorch, DuckDB and, when present, TACO), checks every
// answer against storel's, and writes REPORT.md with tables and plots.
//
// It owns: data generation (deterministic random factors and sweep
// matrices, leading blocks of real data for --quick), running each system
// as a process with a time limit, reading their "timing:" lines, reading
// and comparing answers, the reference-interpreter oracle, and the report.
// The peers themselves live beside it: bench/peers/pypeer.py and the
// DuckDB module bench/duckdb.
package harness
