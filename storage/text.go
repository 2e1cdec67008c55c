package storage

import (
	"io"

	"github.com/storel/storel/ir"
)

// ReadText reads a plain-text array from r: one number a line; blank
// lines and # comments are skipped. elem says whether the numbers are ints
// (a real is then an error naming its line) or reals. name is used in error
// messages.
func ReadText(r io.Reader, name string, elem ir.Base) (*Array, error) {
	lr := newLineReader(r, name, nil)
	a := &Array{Elem: elem}
	if elem != ir.Int && elem != ir.Real {
		return nil, dataErr(name, 0, "arrays hold int or real, not %s", elem)
	}
	for {
		line, err := nextDataLine(lr, '#')
		if err == io.EOF {
			return a, nil
		}
		if err != nil {
			return nil, err
		}
		tok, i := nextField(line, 0)
		if len(tok) > 0 && tok[0] == '#' {
			continue
		}
		if rest, _ := nextField(line, i); len(rest) > 0 && rest[0] != '#' {
			return nil, lr.errorf("one number a line, found %s after %s", quote(rest), quote(tok))
		}
		if elem == ir.Int {
			v, ok := parseInt(tok)
			if !ok {
				if _, isReal := parseFloat(tok); isReal {
					return nil, lr.errorf("real value %s cannot fill an int array (declare the array real)", quote(tok))
				}
				return nil, lr.errorf("bad integer %s", quote(tok))
			}
			a.I = append(a.I, v)
			continue
		}
		v, ok := parseFloat(tok)
		if !ok {
			return nil, lr.errorf("bad number %s", quote(tok))
		}
		a.F = append(a.F, v)
	}
}
