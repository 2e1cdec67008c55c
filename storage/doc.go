// Package storage owns physical data: the objects a storage mapping reads
// (scalars, int/real arrays, tuple-keyed hash maps, tries), readers for
// Matrix Market, FROSTT .tns, NumPy .npy and plain-text files, builders
// that turn coordinates into every standard format (dense, COO, CSR, CSC,
// DCSR, DCSC, CSF, hash, trie, and any TACO-style level string), writers
// for results (.tns, .mtx, .npy), and the standard storage mappings
// themselves, generated as SDQLite from the format (Mapping) and shipped,
// hand-written with comments, in mappings/ (embedded; a test keeps the two
// identical). Physical object names follow docs/design.md §3: T_dimK, T_lenK,
// T_posK, T_idxK, T_val (and T_hash, T_trie), with levels numbered from 1
// in storage order.
//
// Problems in data files are *DataError values that print as file:line:
// message; readers never panic on bad input (each has a fuzz target).
package storage
