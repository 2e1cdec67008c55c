package harness

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/storage"
)

// dataset is a real matrix or tensor of shared/data.
type dataset struct {
	Name string
	File string  // file name in the data directory
	Dims []int64 // sizes of its modes (from shared/data/README.md)
	NNZ  int64   // non-zeros with both triangles of symmetric files
	// QuickLimits: the leading block used by --quick.
	QuickLimits []int64
}

// errNoData marks a real input missing from the data directory (a fresh
// clone without shared/data): its cases are left out with a note rather
// than failing the whole run.
var errNoData = errors.New("real input not found")

func missingData(d *dataset, err error) error {
	return fmt.Errorf("%w: %s (%v)", errNoData, d.Name, err)
}

// skipMissing reports whether err is a missing real input, noting for
// the report which experiment left it out.
func (h *Harness) skipMissing(experiment string, d *dataset, err error) bool {
	if !errors.Is(err, errNoData) {
		return false
	}
	h.note(experiment, fmt.Sprintf("%s is left out: %s is not in the data directory %s (give --data-dir)", d.Name, d.File, h.cfg.DataDir))
	if !slices.Contains(h.Missing, d.Name) {
		h.Missing = append(h.Missing, d.Name)
	}
	return true
}

// realData lists shared/data; the sizes are those its README gives and
// checks (WordNet's third mode is 117,659 although its largest index is
// 117,626, hence explicit dimensions).
var realData = []dataset{
	{"landmark", "landmark.mtx.gz", []int64{71952, 2704}, 1146848, nil},
	{"Andrews", "Andrews.mtx.gz", []int64{60000, 60000}, 760154, nil},
	{"cnr-2000", "cnr-2000.mtx.gz", []int64{325557, 325557}, 3216152, nil},
	{"copter2", "copter2.mtx.gz", []int64{55476, 55476}, 704476, nil},
	{"bcsstk16", "bcsstk16.mtx.gz", []int64{4884, 4884}, 290378, []int64{240, 240}},
	{"wiki-Vote", "wiki-Vote.mtx.gz", []int64{8297, 8297}, 103689, []int64{600, 600}},
	{"wordnet", "wordnet30_synset_ptr_synset.tns.gz", []int64{117659, 26, 117659}, 364552, []int64{4000, 26, 4000}},
	{"orghs", "orghs_gene_go_evidence_direct.tns.gz", []int64{20728, 18933, 20}, 348116, []int64{400, 1500, 20}},
}

func (d *dataset) order() int { return len(d.Dims) }

// file returns the path of the dataset's input for this run: the real file,
// or with --quick its leading block written under TmpDir.
func (h *Harness) datasetFile(d *dataset) (path string, dims []int64, nnz int64, err error) {
	if !h.cfg.Quick {
		return h.blockFile(d, nil)
	}
	return h.blockFile(d, d.QuickLimits)
}

// blockFile returns the path of the dataset's leading block within limits
// (written under TmpDir once), or of the real file when limits is nil.
func (h *Harness) blockFile(d *dataset, limits []int64) (path string, dims []int64, nnz int64, err error) {
	full := filepath.Join(h.cfg.DataDir, d.File)
	_, statErr := os.Stat(full)
	if limits == nil {
		if statErr != nil {
			return "", nil, 0, missingData(d, statErr)
		}
		return full, d.Dims, d.NNZ, nil
	}
	ext := ".mtx"
	if d.order() > 2 {
		ext = ".tns"
	}
	var lim []string
	for _, l := range limits {
		lim = append(lim, strconv.FormatInt(l, 10))
	}
	path = filepath.Join(h.cfg.TmpDir, "real", d.Name+"-"+strings.Join(lim, "x")+ext)
	meta := path + ".nnz"
	if _, err := os.Stat(meta); err != nil && statErr != nil {
		return "", nil, 0, missingData(d, statErr)
	}
	err = cached(meta, func() error {
		c, err := readTensor(full, d.Dims)
		if err != nil {
			return err
		}
		s := Slice(c, limits)
		if ext == ".mtx" {
			err = WriteMTX(path, s)
		} else {
			err = WriteTNS(path, s)
		}
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(meta, []byte(strconv.Itoa(len(s.Vals))))
	})
	if err != nil {
		return "", nil, 0, err
	}
	b, err := os.ReadFile(meta)
	if err != nil {
		return "", nil, 0, err
	}
	nnz, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	dims = append([]int64(nil), d.Dims...)
	for m, l := range limits {
		if l > 0 && l < dims[m] {
			dims[m] = l
		}
	}
	return path, dims, nnz, nil
}

// mtxIsPattern says whether a Matrix Market file (maybe .gz) declares the
// field "pattern" in its header: a matrix of ones, stored without values.
func mtxIsPattern(path string) (bool, error) {
	field, err := mtxField(path)
	return field == storage.FieldPattern, err
}

// mtxField returns the field a Matrix Market file (maybe .gz) declares in
// its header, in lower case: real, integer, pattern or complex.
func mtxField(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return "", fmt.Errorf("%s: %v", path, err)
		}
		defer z.Close()
		r = z
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("%s: reading the header: %v", path, err)
	}
	h := strings.Fields(strings.ToLower(line))
	if len(h) < 4 || h[0] != "%%matrixmarket" {
		return "", fmt.Errorf("%s:1: not a Matrix Market header: %q", path, strings.TrimSpace(line))
	}
	return h[3], nil
}

func readTensor(path string, dims []int64) (*storage.COO, error) {
	return storage.ReadTensorFile(path, storage.ReadOptions{Dims: dims})
}

func vectorCOO(v []float64) *storage.COO {
	c := &storage.COO{Dims: []int64{int64(len(v))}, Coords: [][]int64{nil}, Field: storage.FieldReal}
	for i, x := range v {
		if x != 0 {
			c.Coords[0] = append(c.Coords[0], int64(i))
			c.Vals = append(c.Vals, x)
		}
	}
	return c
}

// genMatrix writes (once) a random matrix under TmpDir/gen and returns its path.
func (h *Harness) genMatrix(rows, cols int64, density float64, seed uint64) (string, error) {
	path := filepath.Join(h.cfg.TmpDir, "gen", fmt.Sprintf("rand-%dx%d-d%g-s%d.mtx", rows, cols, density, seed))
	return path, cached(path, func() error { return WriteMTX(path, RandomSparse(rows, cols, density, seed)) })
}

// genVector writes (once) a random dense vector and returns its path.
func (h *Harness) genVector(n int64, seed uint64) (string, error) {
	path := filepath.Join(h.cfg.TmpDir, "gen", fmt.Sprintf("vec-%d-s%d.npy", n, seed))
	return path, cached(path, func() error { return WriteVectorNPY(path, RandomVector(n, seed)) })
}

// bataxBeta is the scalar of every BATAX run.
const bataxBeta = "1.5"

// kernelInputs builds a kernel's inputs around its main tensor (A, or B for
// MTTKRP) as the paper's §6.1 does: the other factors are random with
// FactorDensity, 250 columns for the matrix products and rank 25 for TTM
// and MTTKRP; BATAX's and SpMV's x is a random dense vector of A's column
// count.
func (h *Harness) kernelInputs(kernel, label, mainPath string, dims []int64, nnz int64) (*Inputs, error) {
	in := &Inputs{Label: label, Tensors: map[string]string{}, Dims: map[string][]int64{}, Shapes: map[string][]int64{}, NNZ: nnz}
	fd := h.cfg.FactorDensity
	add := func(name, path string, shape []int64) {
		in.Tensors[name] = path
		in.Shapes[name] = shape
		if len(shape) > 2 || !strings.Contains(path, ".mtx") {
			in.Dims[name] = shape
		}
	}
	var err error
	var p string
	switch kernel {
	case "mmm", "summmm":
		add("A", mainPath, dims)
		if p, err = h.genMatrix(dims[1], 250, fd, 11); err == nil {
			add("B", p, []int64{dims[1], 250})
		}
	case "batax":
		add("A", mainPath, dims)
		in.Beta = bataxBeta
		in.X, err = h.genVector(dims[1], 12)
	case "spmv":
		// The same vector as BATAX's (one file per column count).
		add("A", mainPath, dims)
		in.X, err = h.genVector(dims[1], 12)
	case "ttm":
		add("A", mainPath, dims)
		if p, err = h.genMatrix(25, dims[2], fd, 13); err == nil {
			add("B", p, []int64{25, dims[2]})
		}
	case "mttkrp":
		add("B", mainPath, dims)
		if p, err = h.genMatrix(dims[1], 25, fd, 14); err == nil {
			add("C", p, []int64{dims[1], 25})
			// D is indexed (j,l) in examples/mttkrp.sdql: rank x third mode.
			if p, err = h.genMatrix(25, dims[2], fd, 15); err == nil {
				add("D", p, []int64{25, dims[2]})
			}
		}
	default:
		return nil, fmt.Errorf("unknown kernel %s", kernel)
	}
	return in, err
}
