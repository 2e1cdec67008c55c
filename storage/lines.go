package storage

import (
	"bufio"
	"errors"
	"io"
	"strconv"
)

// lineReader hands out the lines of a text file without copying them: a
// returned line is valid until the next call. Lines are numbered from 1 for
// error messages.
type lineReader struct {
	r    *bufio.Reader
	file string
	line int    // number of the line last returned
	long []byte // holds a line longer than the buffer
	prog *progress
}

const readBufferSize = 1 << 20

func newLineReader(r io.Reader, file string, prog *progress) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, readBufferSize), file: file, prog: prog}
}

// next returns the next line without its line terminator, or io.EOF after
// the last line. Other errors are *DataError.
func (lr *lineReader) next() ([]byte, error) {
	s, err := lr.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], s...)
		for errors.Is(err, bufio.ErrBufferFull) {
			s, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, s...)
		}
		s = lr.long
	}
	if err != nil && err != io.EOF {
		return nil, dataErr(lr.file, lr.line+1, "read error: %v", err)
	}
	if len(s) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	lr.line++
	if lr.prog != nil && lr.line&0xffff == 0 {
		lr.prog.update()
	}
	n := len(s)
	if n > 0 && s[n-1] == '\n' {
		n--
	}
	if n > 0 && s[n-1] == '\r' {
		n--
	}
	return s[:n], nil
}

// errorf reports a problem on the line last returned.
func (lr *lineReader) errorf(format string, args ...any) *DataError {
	return dataErr(lr.file, lr.line, format, args...)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// nextField returns the whitespace-separated token of s that starts at or
// after i, and the index just past it; tok is empty at the end of s.
func nextField(s []byte, i int) (tok []byte, next int) {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return s[i:j], j
}

// isBlank reports whether s holds only whitespace.
func isBlank(s []byte) bool {
	for _, c := range s {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// splitFields splits s into at most len(dst) tokens and reports how many
// tokens s holds in all (which may exceed len(dst)).
func splitFields(s []byte, dst [][]byte) int {
	n := 0
	i := 0
	for {
		var tok []byte
		tok, i = nextField(s, i)
		if len(tok) == 0 {
			return n
		}
		if n < len(dst) {
			dst[n] = tok
		}
		n++
	}
}

// parseInt parses a decimal integer with an optional sign.
func parseInt(s []byte) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
		if v > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(v), true
	}
	if v == 1<<63 {
		return 0, false
	}
	return int64(v), true
}

// parseFloat parses a real number as strconv.ParseFloat does, rejecting
// values that overflow float64.
func parseFloat(s []byte) (float64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return f, err == nil
}

// quote shortens a token for an error message.
func quote(s []byte) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(string(s[:max])) + "..."
	}
	return strconv.Quote(string(s))
}
