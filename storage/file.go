package storage

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/storel/storel/ir"
)

// ReadOptions control how tensor files are read.
type ReadOptions struct {
	// Progress, when not nil, receives a progress line updated in place
	// ("\rloading x.mtx.gz: 45%") while a large file loads. TerminalProgress
	// gives os.Stderr when it is a terminal.
	Progress io.Writer
	// Dims, when not nil, gives the size of every mode instead of the
	// file's header (.mtx) or the largest index seen (.tns); indices must
	// fit in them.
	Dims []int64
	// Keep, when not nil, is shown every entry once read and checked
	// (coordinates from 0, a symmetric matrix's mirrored entries too; the
	// slice is reused): only the entries it keeps are stored. storel shard
	// counts a file's entries with it and sends them to the parts' files
	// without holding them all.
	Keep func(coords []int64, v float64) bool
}

// progressMinBytes is the on-disk size from which loading reports progress:
// a compressed megabyte already holds about half a million entries.
var progressMinBytes int64 = 1 << 20

// TerminalProgress returns os.Stderr if it is a terminal, else nil: the
// usual value of ReadOptions.Progress for a command-line tool.
func TerminalProgress() io.Writer {
	fi, err := os.Stderr.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return os.Stderr
}

// progress reports how much of a file has been consumed.
type progress struct {
	w     io.Writer
	label string
	total int64
	read  *countingReader
	shown int // last percentage printed, -1 before the first
}

func (p *progress) update() {
	pct := int(100 * p.read.n.Load() / p.total)
	if pct > 100 {
		pct = 100
	}
	if pct != p.shown {
		p.shown = pct
		fmt.Fprintf(p.w, "\rloading %s: %d%%", p.label, pct)
	}
}

// done erases the progress line.
func (p *progress) done() {
	if p.shown >= 0 {
		n := len("loading : 100%") + len(p.label)
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", n))
	}
}

// countingReader counts the bytes read through it; the count may be read
// from another goroutine than the reading one (see readAhead).
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// openedFile is a data file opened for reading, decompressed when its name
// ends in .gz.
type openedFile struct {
	r    io.Reader
	f    *os.File
	gz   *gzip.Reader
	ra   *readAhead
	prog *progress
}

func openData(path string, opt ReadOptions) (*openedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o := &openedFile{f: f}
	cr := &countingReader{r: f}
	o.r = cr
	if fi, err := f.Stat(); err == nil && opt.Progress != nil && fi.Size() >= progressMinBytes {
		o.prog = &progress{w: opt.Progress, label: filepath.Base(path), total: fi.Size(), read: cr, shown: -1}
	}
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		gz, err := gzip.NewReader(cr)
		if err != nil {
			f.Close()
			return nil, &DataError{File: path, Msg: fmt.Sprintf("not a gzip file: %v", err)}
		}
		o.gz = gz
		o.ra = newReadAhead(gz)
		o.r = o.ra
	}
	return o, nil
}

func (o *openedFile) Close() {
	if o.prog != nil {
		o.prog.done()
	}
	if o.ra != nil {
		o.ra.Close()
	}
	if o.gz != nil {
		o.gz.Close()
	}
	o.f.Close()
}

// dataExt returns the extension that says how to parse path, ignoring a
// trailing .gz: ".mtx", ".tns", ".npy", ".txt"...
func dataExt(path string) string {
	p := strings.ToLower(path)
	p = strings.TrimSuffix(p, ".gz")
	return filepath.Ext(p)
}

// ReadTensorFile reads a Matrix Market (.mtx), FROSTT (.tns) or NumPy
// (.npy, non-zero elements only) file, optionally gzip-compressed (.gz),
// into coordinate form.
func ReadTensorFile(path string, opt ReadOptions) (*COO, error) {
	ext := dataExt(path)
	switch ext {
	case ".mtx", ".tns", ".npy":
	default:
		return nil, fmt.Errorf("%s: unknown tensor file type %q (want .mtx, .tns or .npy, optionally .gz)", path, ext)
	}
	o, err := openData(path, opt)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	switch ext {
	case ".mtx":
		return readMatrixMarket(newLineReader(o.r, path, o.prog), opt)
	case ".tns":
		return readTNS(newLineReader(o.r, path, o.prog), opt)
	}
	a, err := ReadNPY(o.r, path)
	if err != nil {
		return nil, err
	}
	return a.COO(path, opt)
}

// ReadArrayFile reads a NumPy (.npy) or plain-text (.txt, one number a
// line) file, optionally gzip-compressed, into a flat array of element
// type elem (ir.Int or ir.Real); multi-dimensional .npy data is flattened
// in C order.
func ReadArrayFile(path string, elem ir.Base) (*Array, error) {
	ext := dataExt(path)
	if ext != ".npy" && ext != ".txt" {
		return nil, fmt.Errorf("%s: unknown array file type %q (want .npy or .txt, optionally .gz)", path, ext)
	}
	o, err := openData(path, ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer o.Close()
	if ext == ".txt" {
		return ReadText(o.r, path, elem)
	}
	a, err := ReadNPY(o.r, path)
	if err != nil {
		return nil, err
	}
	return a.Flat(path, elem)
}
