package engine

import (
	"fmt"

	"github.com/storel/storel/ir"
)

// Error is a compile or runtime error of a plan: an array read past its
// end, an integer division by zero, an expression the engine cannot run.
// Pos is the position of the offending expression when the plan carries
// one; Msg names the expression (and the array, for array errors).
type Error struct {
	Pos ir.Pos
	Msg string
	// Limit names the limit a run stopped at ("memory", "time"; see
	// Limits), or is empty.
	Limit string
}

func (e *Error) Error() string {
	switch {
	case e.Pos.IsValid():
		return e.Pos.String() + ": " + e.Msg
	case e.Pos.File != "":
		return e.Pos.File + ": " + e.Msg
	}
	return e.Msg
}

func errAt(e *ir.Expr, format string, args ...any) *Error {
	var p ir.Pos
	if e != nil {
		p = e.Pos
	}
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// describe names an expression briefly in a message.
func describe(e *ir.Expr) string {
	s := e.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// planText is " in <e>" for a message about an expression that has no
// source position, and nothing for one that has: the position names the
// user's text, which the plan's (rewritten by the optimizer) may not
// resemble.
func planText(e *ir.Expr) string {
	if e.Pos.IsValid() {
		return ""
	}
	return " in " + describe(e)
}

func elements(n int64) string {
	if n == 1 {
		return "1 element"
	}
	return fmt.Sprintf("%d elements", n)
}
