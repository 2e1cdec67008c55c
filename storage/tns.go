package storage

import (
	"io"
)

// maxTNSOrder bounds the number of modes of a .tns file.
const maxTNSOrder = 32

// ReadTNS reads a FROSTT tensor from r: one entry a line, 1-based
// coordinates then the value, no header; blank lines and lines starting
// with # are skipped. The order comes from the first entry. Dimensions are
// the largest index of each mode unless opt.Dims gives them. Values are
// read as reals. name is used in error messages.
func ReadTNS(r io.Reader, name string, opt ReadOptions) (*COO, error) {
	return readTNS(newLineReader(r, name, nil), opt)
}

func readTNS(lr *lineReader, opt ReadOptions) (*COO, error) {
	var c *COO
	order := -1
	tok := make([][]byte, maxTNSOrder+2)
	for {
		line, err := nextDataLine(lr, '#')
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n := splitFields(line, tok)
		if order < 0 {
			if n < 2 {
				return nil, lr.errorf("entry needs at least one coordinate and a value, found %d field", n)
			}
			if n-1 > maxTNSOrder {
				return nil, lr.errorf("entry has %d coordinates; at most %d are supported", n-1, maxTNSOrder)
			}
			order = n - 1
			if opt.Dims != nil && len(opt.Dims) != order {
				return nil, lr.errorf("entry has %d coordinates but %d dimensions were given", order, len(opt.Dims))
			}
			c = newCOO(order, 1<<16)
			c.Field = FieldReal
			if opt.Dims != nil {
				copy(c.Dims, opt.Dims)
			}
		}
		if n != order+1 {
			return nil, lr.errorf("entry has %d fields, earlier entries have %d (%d coordinates and a value)", n, order+1, order)
		}
		var key [maxTNSOrder]int64
		for m := 0; m < order; m++ {
			x, ok := parseInt(tok[m])
			if !ok {
				return nil, lr.errorf("bad index %s in mode %d", quote(tok[m]), m+1)
			}
			if x < 1 {
				return nil, lr.errorf("index %d in mode %d: indices start at 1", x, m+1)
			}
			if opt.Dims != nil {
				if x > c.Dims[m] {
					return nil, lr.errorf("index %d in mode %d out of range 1..%d", x, m+1, c.Dims[m])
				}
			} else if x > c.Dims[m] {
				c.Dims[m] = x
			}
			key[m] = x - 1
		}
		v, ok := parseFloat(tok[order])
		if !ok {
			return nil, lr.errorf("bad value %s", quote(tok[order]))
		}
		if opt.Keep != nil && !opt.Keep(key[:order], v) {
			continue
		}
		for m := 0; m < order; m++ {
			c.Coords[m] = append(c.Coords[m], key[m])
		}
		c.Vals = append(c.Vals, v)
	}
	if c == nil {
		if opt.Dims == nil {
			return nil, dataErr(lr.file, lr.line, "no entries, so the order is unknown; give the dimensions")
		}
		c = newCOO(len(opt.Dims), 0)
		copy(c.Dims, opt.Dims)
		c.Field = FieldReal
	}
	return c, nil
}
