// Package sdql owns the SDQLite front end: the scanner, the parser and its
// syntax tree, the desugaring of the paper's Table 1 into the core calculus
// of package ir, name resolution, the type checker, and error messages that
// point at file:line:col with the source line and a caret.
//
// A compilation unit is one or more sources read in order (storage mappings
// first, the program last), made of statements separated by ';' (optional
// before CREATE and at the end):
//
//	CREATE [int|real] SCALAR a, b;          element type real when omitted
//	CREATE [int|real] ARRAY A(n), B(m);
//	CREATE [int|real] HASHMAP H(n1, ..., nd);
//	CREATE [int|real] TRIE T(n1)(n2)...(nd);
//	CREATE TENSOR T AS e;
//	e                                       optional final bare expression: the result
//
// Expressions, loosest first: the prefix forms sum(...) e, merge(...) e,
// let ... in e and if c then e [else e], whose bodies extend as far right as
// possible (also when the form is an operand: x * sum(...) e + 1 is
// x * (sum(...) (e + 1))); || or; && and; comparisons == != <> < <= > >=
// (they do not chain); the range a:b; + -; * / %; unary - ! not; postfix
// application e(i, j) and subarray e(a:b); literals, names, ( e ),
// dictionary literals { [@unique|@dense|@hash] k -> v, ... }, {} and the
// built-in functions exp log abs sqrt even_bits odd_bits min max.
//
// Desugaring follows Table 1: e(a, b) is e(a)(b); { (a, b) -> v } is
// { a -> { b -> v } } and { () -> v } is v; a tuple pattern
// sum(<(i, j), v> in e) uncurries with a fresh intermediate variable; lets
// and generators nest left to right; a variable bound a second time in one
// sum head gets a fresh name and an equality test right after the sum that
// binds it again; _ is a fresh unused name; a literal with several entries
// is the sum of its singletons. Names resolve to local variables, then to
// tensors defined earlier (ir.OpVar, bound by ir.Program.Compose), then to
// declared objects (ir.OpGlobal). Fresh names avoid every identifier of the
// unit, so ir.Format of a result reads back to the same program.
//
// Compile turns a unit into a typed *ir.Program; CompileExpr compiles one
// expression over globals of given types; ParseFile and ParseExpr give the
// syntax tree, which Format prints back. Every failure is an ErrorList.
package sdql
