package sdql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/storel/storel/ir"
)

// Error is one problem in the user's SDQLite text.
type Error struct {
	Pos  ir.Pos
	Msg  string
	Line string // the source line at Pos, shown with a caret under the column
}

// Error returns "file:line:col: msg".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Caret returns the error followed by its source line and a caret under the
// column (tabs in the line are copied so the caret lines up). A very long
// line is cut to a window around the column.
func (e *Error) Caret() string {
	var sb strings.Builder
	sb.WriteString(e.Error())
	if _, builtin := e.Pos.Builtin(); builtin || e.Line == "" || e.Pos.Col < 1 {
		return sb.String()
	}
	line := []rune(e.Line)
	col := e.Pos.Col - 1 // 0-based index into line
	prefix, suffix := "", ""
	if len(line) > maxCaretLine {
		start := max(0, min(col-maxCaretLine/2, len(line)-maxCaretLine))
		end := start + maxCaretLine
		if start > 0 {
			prefix = "..."
		}
		if end < len(line) {
			suffix = "..."
		}
		line, col = line[start:end], col-start
	}
	sb.WriteString("\n")
	sb.WriteString(prefix + string(line) + suffix)
	sb.WriteString("\n")
	sb.WriteString(strings.Repeat(" ", len(prefix)))
	for i, r := range line {
		if i >= col {
			break
		}
		if r == '\t' {
			sb.WriteByte('\t')
		} else {
			sb.WriteByte(' ')
		}
	}
	sb.WriteString("^")
	return sb.String()
}

// maxCaretLine is the widest source excerpt shown under an error.
const maxCaretLine = 120

// ErrorList holds every error of a compilation, in source order.
type ErrorList []*Error

// Error renders every error, each with its source line and a caret.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Caret()
	}
	return strings.Join(parts, "\n")
}

// maxErrors bounds how many errors one compilation reports: past that
// point the later ones are usually consequences of the earlier ones.
const maxErrors = 30

// sourceFile is a source text split into lines for error carets.
type sourceFile struct {
	name  string
	index int // order within the compilation unit
	text  []byte
	lines []string
}

func newSourceFile(name string, index int, text []byte) *sourceFile {
	return &sourceFile{name: name, index: index, text: text}
}

// line returns source line n (1-based), without its newline.
func (f *sourceFile) line(n int) string {
	if f.lines == nil {
		f.lines = strings.Split(string(f.text), "\n")
	}
	if n < 1 || n > len(f.lines) {
		return ""
	}
	return strings.TrimRight(f.lines[n-1], "\r")
}

// errorSink collects errors for a compilation unit.
type errorSink struct {
	files    map[string]*sourceFile
	errs     ErrorList
	seen     map[string]bool // suppresses exact duplicates
	tooMany  bool
	overflow ir.Pos
}

func newErrorSink() *errorSink {
	return &errorSink{files: map[string]*sourceFile{}, seen: map[string]bool{}}
}

func (s *errorSink) addFile(f *sourceFile) { s.files[f.name] = f }

func (s *errorSink) errorf(pos ir.Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := pos.String() + msg
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	if len(s.errs) >= maxErrors {
		if !s.tooMany {
			s.tooMany, s.overflow = true, pos
		}
		return
	}
	e := &Error{Pos: pos, Msg: msg}
	if f := s.files[pos.File]; f != nil && pos.IsValid() {
		e.Line = f.line(pos.Line)
	}
	s.errs = append(s.errs, e)
}

func (s *errorSink) count() int { return len(s.errs) }

// result returns the collected errors in source order, or nil.
func (s *errorSink) result() error {
	if len(s.errs) == 0 {
		return nil
	}
	order := func(p ir.Pos) int {
		if f := s.files[p.File]; f != nil {
			return f.index
		}
		return 1 << 30
	}
	list := append(ErrorList(nil), s.errs...)
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].Pos, list[j].Pos
		if oa, ob := order(a), order(b); oa != ob {
			return oa < ob
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	if s.tooMany {
		list = append(list, &Error{Pos: s.overflow, Msg: "too many errors"})
	}
	return list
}
