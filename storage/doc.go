// Package storage owns physical data: the objects a storage mapping reads
// (scalars, int/real arrays, tuple-keyed hash maps, tries), readers for
// Matrix Market, FROSTT .tns, NumPy .npy and plain-text files, builders
// that turn coordinates into every standard format (dense, COO, CSR, CSC,
// DCSR, DCSC, CSF, hash, trie, and any TACO-style level string), and the
// standard storage mappings themselves, written in SDQLite and embedded in
// the binary. Physical array names follow DESIGN.md §3: T_dimK, T_lenK,
// T_posK, T_idxK, T_val, with levels numbered from 1 in storage order.
package storage
