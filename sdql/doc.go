// Package sdql owns the SDQLite front end: the scanner, the parser and its
// syntax tree, the desugaring of the paper's Table 1 into the core calculus
// of package ir, name resolution and the type checker, and error messages
// that point at file:line:col with the source line and a caret.
//
// A compilation unit is one or more sources read in order (storage mappings
// first, the program last) made of statements separated by ';':
//
//	CREATE [int|real] SCALAR a, b;
//	CREATE [int|real] ARRAY A(n);
//	CREATE [int|real] HASHMAP H(n1, ..., nd);
//	CREATE [int|real] TRIE T(n1)(n2)...(nd);
//	CREATE TENSOR T AS e;
//	e            // optional final bare expression: the program's result
//
// Compile turns a unit into a typed *ir.Program; CompileExpr compiles one
// expression over globals of given types. Fresh names made by desugaring
// avoid every identifier of the unit, so ir.Format of the result reads back
// to the same program.
package sdql
