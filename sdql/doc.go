// Package sdql owns the SDQLite front end: the scanner, the parser and its
// syntax tree, the desugaring of the paper's Table 1 into the core calculus
// of package ir, name resolution, the type checker, and error messages that
// point at file:line:col with the source line and a caret.
//
// A compilation unit is one or more sources read in order (storage mappings
// first, the program last), made of statements separated by ';':
//
//	CREATE [int|real] SCALAR a, b;          element type real when omitted
//	CREATE [int|real] ARRAY A(n), B(m);
//	CREATE [int|real] HASHMAP H(n1, ..., nd);
//	CREATE [int|real] TRIE T(n1)(n2)...(nd);
//	CREATE TENSOR T AS e;
//	e                                       optional final bare expression
//
// Expressions, loosest first: sum(...) e, merge(...) e, let ... in e and
// if c then e [else e], whose bodies extend as far right as possible;
// || or; && and; comparisons (not chained); the range a:b; + -; * / %;
// unary - ! not; application e(i, j) and subarray e(a:b); literals,
// names, ( e ), dictionary literals { [@unique|@dense|@hash] k -> v, ... },
// {} and the built-ins exp log abs sqrt even_bits odd_bits min max.
// docs/language.md is the full reference, with the desugaring table.
//
// Names resolve to local variables, then to tensors defined earlier
// (ir.OpVar, bound by ir.Program.Compose), then to declared objects
// (ir.OpGlobal). Fresh names avoid every identifier of the unit, so
// ir.Format of a result reads back to the same program.
//
// Compile turns a unit into a typed *ir.Program; CompileExpr compiles one
// expression over globals of given types; ParseFile and ParseExpr give the
// syntax tree, which Format prints back. Every failure is an ErrorList.
package sdql
