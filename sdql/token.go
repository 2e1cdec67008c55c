package sdql

import (
	"fmt"
	"strings"

	"github.com/storel/storel/ir"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokIllegal
	tokIdent    // name
	tokWildcard // _
	tokInt      // 42
	tokReal     // 1.5 .5 2. 1e-3
	tokAnnot    // @unique @dense @hash (the text holds the word after @)

	// Operators and punctuation.
	tokPlus    // +
	tokMinus   // -
	tokStar    // *
	tokSlash   // /
	tokPercent // %
	tokEq      // ==
	tokNe      // != or <>
	tokLt      // <
	tokLe      // <=
	tokGt      // >
	tokGe      // >=
	tokAndAnd  // &&
	tokOrOr    // ||
	tokBang    // !
	tokArrow   // ->
	tokAssign  // =
	tokColon   // :
	tokComma   // ,
	tokLParen  // (
	tokRParen  // )
	tokLBrace  // {
	tokRBrace  // }
	tokSemi    // ;

	// Keywords of expressions (lower case only).
	tokSum
	tokMerge
	tokLet
	tokIn
	tokIf
	tokThen
	tokElse
	tokNot
	tokAnd
	tokOr
	tokTrue
	tokFalse

	// SQL-ish keywords of statements (any case).
	tokCreate
	tokScalar
	tokArray
	tokHashmap
	tokTrie
	tokTensor
	tokAs
	tokIntKw
	tokRealKw
)

var tokenText = [...]string{
	tokEOF: "end of input", tokIllegal: "illegal token", tokIdent: "name",
	tokWildcard: "_", tokInt: "integer", tokReal: "real number", tokAnnot: "annotation",
	tokPlus: "+", tokMinus: "-", tokStar: "*", tokSlash: "/", tokPercent: "%",
	tokEq: "==", tokNe: "!=", tokLt: "<", tokLe: "<=", tokGt: ">", tokGe: ">=",
	tokAndAnd: "&&", tokOrOr: "||", tokBang: "!", tokArrow: "->", tokAssign: "=",
	tokColon: ":", tokComma: ",", tokLParen: "(", tokRParen: ")", tokLBrace: "{",
	tokRBrace: "}", tokSemi: ";",
	tokSum: "sum", tokMerge: "merge", tokLet: "let", tokIn: "in", tokIf: "if",
	tokThen: "then", tokElse: "else", tokNot: "not", tokAnd: "and", tokOr: "or",
	tokTrue: "true", tokFalse: "false",
	tokCreate: "CREATE", tokScalar: "SCALAR", tokArray: "ARRAY", tokHashmap: "HASHMAP",
	tokTrie: "TRIE", tokTensor: "TENSOR", tokAs: "AS", tokIntKw: "int", tokRealKw: "real",
}

func (k tokenKind) String() string {
	if int(k) < len(tokenText) && tokenText[k] != "" {
		return tokenText[k]
	}
	return fmt.Sprintf("token(%d)", int(k))
}

// isKeyword reports whether k is a reserved word.
func (k tokenKind) isKeyword() bool { return k >= tokSum }

// exprKeywords are matched exactly: SDQLite is case-sensitive.
var exprKeywords = map[string]tokenKind{
	"sum": tokSum, "merge": tokMerge, "let": tokLet, "in": tokIn, "if": tokIf,
	"then": tokThen, "else": tokElse, "not": tokNot, "and": tokAnd, "or": tokOr,
	"true": tokTrue, "false": tokFalse,
}

// statementKeywords are matched in any case, as in SQL (CREATE, create, Create).
var statementKeywords = map[string]tokenKind{
	"create": tokCreate, "scalar": tokScalar, "array": tokArray, "hashmap": tokHashmap,
	"trie": tokTrie, "tensor": tokTensor, "as": tokAs, "int": tokIntKw, "real": tokRealKw,
}

// lookupKeyword returns the keyword kind of an identifier-shaped word, or
// tokIdent.
func lookupKeyword(word string) tokenKind {
	if k, ok := exprKeywords[word]; ok {
		return k
	}
	if len(word) <= 7 {
		if k, ok := statementKeywords[strings.ToLower(word)]; ok {
			return k
		}
	}
	return tokIdent
}

// builtinArity gives the number of arguments of each built-in scalar
// function. Their names are reserved: they cannot name variables or
// objects, so printed plans read back unambiguously.
var builtinArity = map[string]int{
	"exp": 1, "log": 1, "abs": 1, "sqrt": 1, "even_bits": 1, "odd_bits": 1,
	"min": 2, "max": 2, "runs": 1, "runend": 3,
}

// token is one lexical token with its position and source text.
type token struct {
	kind tokenKind
	text string // identifier, number or annotation text
	pos  ir.Pos
}

func (t token) String() string {
	switch t.kind {
	case tokIdent, tokInt, tokReal:
		return t.text
	case tokAnnot:
		return "@" + t.text
	case tokEOF:
		return "end of input"
	}
	if t.kind.isKeyword() {
		return t.text
	}
	return t.kind.String()
}
