package sdql

import (
	"unicode/utf8"

	"github.com/storel/storel/ir"
)

// scanner splits SDQLite text into tokens. It never fails: problems are
// reported to the error sink and scanning continues.
type scanner struct {
	file *sourceFile
	errs *errorSink
	src  []byte
	off  int // byte offset of the next character
	line int // line of src[off]
	col  int // column (in characters) of src[off]
}

func newScanner(f *sourceFile, errs *errorSink) *scanner {
	s := &scanner{file: f, errs: errs, src: f.text, line: 1, col: 1}
	if len(s.src) >= 3 && s.src[0] == 0xEF && s.src[1] == 0xBB && s.src[2] == 0xBF {
		s.off = 3 // a UTF-8 byte order mark is not part of the text
	}
	return s
}

func (s *scanner) pos() ir.Pos { return ir.Pos{File: s.file.name, Line: s.line, Col: s.col} }

// peekByte returns the byte at offset off+n, or 0 past the end.
func (s *scanner) peekByte(n int) byte {
	if s.off+n < len(s.src) {
		return s.src[s.off+n]
	}
	return 0
}

// advance consumes one character.
func (s *scanner) advance() {
	if s.off >= len(s.src) {
		return
	}
	if s.src[s.off] == '\n' {
		s.off++
		s.line++
		s.col = 1
		return
	}
	_, w := utf8.DecodeRune(s.src[s.off:])
	s.off += w
	s.col++
}

// skipSpaceAndComments skips white space, // line comments and /* block
// comments */.
func (s *scanner) skipSpaceAndComments() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			s.advance()
		case c == '/' && s.peekByte(1) == '/':
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.advance()
			}
		case c == '/' && s.peekByte(1) == '*':
			start := s.pos()
			s.advance()
			s.advance()
			closed := false
			for s.off < len(s.src) {
				if s.src[s.off] == '*' && s.peekByte(1) == '/' {
					s.advance()
					s.advance()
					closed = true
					break
				}
				s.advance()
			}
			if !closed {
				s.errs.errorf(start, "comment not terminated: /* needs a matching */")
			}
		default:
			return
		}
	}
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// next returns the next token.
func (s *scanner) next() token {
	s.skipSpaceAndComments()
	pos := s.pos()
	if s.off >= len(s.src) {
		return token{kind: tokEOF, pos: pos}
	}
	c := s.src[s.off]
	switch {
	case isLetter(c):
		start := s.off
		for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
			s.advance()
		}
		word := string(s.src[start:s.off])
		if word == "_" {
			return token{kind: tokWildcard, text: word, pos: pos}
		}
		return token{kind: lookupKeyword(word), text: word, pos: pos}
	case isDigit(c) || c == '.' && isDigit(s.peekByte(1)):
		return s.number(pos)
	case c == '@':
		s.advance()
		start := s.off
		for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
			s.advance()
		}
		word := string(s.src[start:s.off])
		if word == "" {
			s.errs.errorf(pos, "@ must be followed by unique, dense or hash")
		}
		return token{kind: tokAnnot, text: word, pos: pos}
	}
	two := func(second byte, yes, no tokenKind) token {
		s.advance()
		if s.off < len(s.src) && s.src[s.off] == second {
			s.advance()
			return token{kind: yes, pos: pos}
		}
		return token{kind: no, pos: pos}
	}
	switch c {
	case '+':
		s.advance()
		return token{kind: tokPlus, pos: pos}
	case '-':
		return two('>', tokArrow, tokMinus)
	case '*':
		s.advance()
		return token{kind: tokStar, pos: pos}
	case '/':
		s.advance()
		return token{kind: tokSlash, pos: pos}
	case '%':
		s.advance()
		return token{kind: tokPercent, pos: pos}
	case '=':
		return two('=', tokEq, tokAssign)
	case '!':
		return two('=', tokNe, tokBang)
	case '<':
		s.advance()
		switch s.peekByte(0) {
		case '=':
			s.advance()
			return token{kind: tokLe, pos: pos}
		case '>':
			s.advance()
			return token{kind: tokNe, pos: pos}
		}
		return token{kind: tokLt, pos: pos}
	case '>':
		return two('=', tokGe, tokGt)
	case '&':
		s.advance()
		if s.peekByte(0) == '&' {
			s.advance()
			return token{kind: tokAndAnd, pos: pos}
		}
		s.errs.errorf(pos, "unexpected &: write && (or and) for logical and")
		return token{kind: tokAndAnd, pos: pos}
	case '|':
		s.advance()
		if s.peekByte(0) == '|' {
			s.advance()
			return token{kind: tokOrOr, pos: pos}
		}
		s.errs.errorf(pos, "unexpected |: write || (or or) for logical or")
		return token{kind: tokOrOr, pos: pos}
	case ':':
		s.advance()
		return token{kind: tokColon, pos: pos}
	case ',':
		s.advance()
		return token{kind: tokComma, pos: pos}
	case '(':
		s.advance()
		return token{kind: tokLParen, pos: pos}
	case ')':
		s.advance()
		return token{kind: tokRParen, pos: pos}
	case '{':
		s.advance()
		return token{kind: tokLBrace, pos: pos}
	case '}':
		s.advance()
		return token{kind: tokRBrace, pos: pos}
	case ';':
		s.advance()
		return token{kind: tokSemi, pos: pos}
	}
	r, _ := utf8.DecodeRune(s.src[s.off:])
	s.advance()
	if r == utf8.RuneError {
		s.errs.errorf(pos, "invalid character (the text is not UTF-8)")
	} else {
		s.errs.errorf(pos, "unexpected character %q", r)
	}
	return token{kind: tokIllegal, text: string(r), pos: pos}
}

// number scans an int or real literal: 42, 1.5, .5, 2., 1e-3, 2.5E+10.
func (s *scanner) number(pos ir.Pos) token {
	start := s.off
	digits := func() int {
		n := 0
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.advance()
			n++
		}
		return n
	}
	kind := tokInt
	bad := false
	digits()
	if s.peekByte(0) == '.' {
		kind = tokReal
		s.advance()
		digits()
	}
	if c := s.peekByte(0); c == 'e' || c == 'E' {
		// "2e" without digits is a malformed number, not 2 followed by e.
		kind = tokReal
		s.advance()
		if c := s.peekByte(0); c == '+' || c == '-' {
			s.advance()
		}
		if digits() == 0 {
			bad = true
		}
	}
	if s.off < len(s.src) && (isLetter(s.src[s.off]) || s.src[s.off] == '.') {
		for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off]) || s.src[s.off] == '.') {
			s.advance()
		}
		bad = true
	}
	text := string(s.src[start:s.off])
	if bad {
		// The parser skips illegal tokens silently: the error is reported here.
		s.errs.errorf(pos, "malformed number %s", text)
		return token{kind: tokIllegal, text: text, pos: pos}
	}
	return token{kind: kind, text: text, pos: pos}
}
