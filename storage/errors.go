package storage

import "fmt"

// DataError is a problem in a data file, reported as file:line: message
// (or file: message when no line applies, e.g. in binary .npy files).
type DataError struct {
	File string
	Line int // 1-based; 0 when the problem has no line
	Msg  string
}

func (e *DataError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func dataErr(file string, line int, format string, args ...any) *DataError {
	return &DataError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
