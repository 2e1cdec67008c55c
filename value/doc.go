// Package value owns the logical values of SDQLite as the reference
// interpreter sees them: int64, float64 and bool scalars and nested
// dictionaries with int64 keys, together with the dictionary-semiring
// operations (key-wise +, key-wise *, scalar scaling, zero elimination),
// comparison up to a floating-point tolerance, and flattening to
// coordinate lists for output.
//
// A Value is one of int64, float64, bool or *Dict. Dictionaries built by
// + or by a singleton drop zero entries; dictionaries that view an array,
// a range or a subarray keep every position, because iteration over those
// visits every position whatever its value (docs/design.md §2). Equality never
// distinguishes an explicit zero from a missing key.
package value
