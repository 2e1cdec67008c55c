package egraph

import (
	"fmt"
	"strings"
)

// SyntaxError reports a malformed s-expression (pattern or expression) with
// the line and column, counted from 1 within the parsed text. Callers that
// read the text from a file add the file name and line offset.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// sexpr is a parsed s-expression: an atom, or a list whose first element is
// an atom (the head). Positions point at the atom or the opening paren.
type sexpr struct {
	atom      string
	list      []*sexpr // nil for atoms
	isList    bool
	line, col int
}

type sexprReader struct {
	src       string
	pos       int
	line, col int
}

// parseSexpr reads exactly one s-expression from src. ';' starts a comment
// that runs to the end of the line.
func parseSexpr(src string) (*sexpr, error) {
	r := &sexprReader{src: src, line: 1, col: 1}
	r.skipSpace()
	if r.pos >= len(src) {
		return nil, r.errorf("empty expression")
	}
	e, err := r.read()
	if err != nil {
		return nil, err
	}
	r.skipSpace()
	if r.pos < len(src) {
		return nil, r.errorf("unexpected %q after the expression", src[r.pos])
	}
	return e, nil
}

func (r *sexprReader) errorf(format string, args ...any) error {
	return &SyntaxError{Line: r.line, Col: r.col, Msg: fmt.Sprintf(format, args...)}
}

func (r *sexprReader) advance() {
	if r.src[r.pos] == '\n' {
		r.line++
		r.col = 1
	} else {
		r.col++
	}
	r.pos++
}

func (r *sexprReader) skipSpace() {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.advance()
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.advance()
		default:
			return
		}
	}
}

func isDelimiter(c byte) bool {
	return strings.IndexByte(" \t\n\r();", c) >= 0
}

func (r *sexprReader) read() (*sexpr, error) {
	line, col := r.line, r.col
	switch r.src[r.pos] {
	case ')':
		return nil, r.errorf("unexpected ')'")
	case '(':
		r.advance()
		e := &sexpr{isList: true, line: line, col: col}
		for {
			r.skipSpace()
			if r.pos >= len(r.src) {
				return nil, &SyntaxError{Line: line, Col: col, Msg: "unclosed '('"}
			}
			if r.src[r.pos] == ')' {
				r.advance()
				break
			}
			item, err := r.read()
			if err != nil {
				return nil, err
			}
			e.list = append(e.list, item)
		}
		if len(e.list) == 0 {
			return nil, &SyntaxError{Line: line, Col: col, Msg: "empty list has no operator"}
		}
		if e.list[0].isList {
			return nil, &SyntaxError{Line: e.list[0].line, Col: e.list[0].col, Msg: "a list must start with an operator, not a list"}
		}
		return e, nil
	}
	start := r.pos
	for r.pos < len(r.src) && !isDelimiter(r.src[r.pos]) {
		r.advance()
	}
	return &sexpr{atom: r.src[start:r.pos], line: line, col: col}, nil
}

// head returns the operator atom of e, its arguments, and the atom's
// position (where errors about the operator point).
func (e *sexpr) head() (string, []*sexpr, *SyntaxError) {
	if e.isList {
		h := e.list[0]
		return h.atom, e.list[1:], &SyntaxError{Line: h.line, Col: h.col}
	}
	return e.atom, nil, &SyntaxError{Line: e.line, Col: e.col}
}

// at returns a copy of the positioned error with msg.
func (e *SyntaxError) at(msg string) *SyntaxError {
	return &SyntaxError{Line: e.Line, Col: e.Col, Msg: msg}
}
