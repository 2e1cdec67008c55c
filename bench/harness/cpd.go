package harness

import (
	"fmt"
	"strings"
)

// The cpd experiment is MTTKRP as a CP decomposition runs it: A(i,j) =
// Σ_{k,l} B(i,k,l)·C(k,j)·D(j,l) with B a real 3-tensor and C, D dense
// factor matrices of a small rank (examples/mttkrp.sdql: D is indexed
// (j,l), rank × third mode). storel runs B as CSF and the factors dense on
// one thread; TACO the same formats (B `sss`, C and D `dd`); NumPy the
// vectorized form a Python user writes (gather the factor rows of every
// non-zero, multiply, and sum them per row of B with a sparse product);
// PyTorch the same with index_add_.

// cpdRanks are the factor ranks measured.
var cpdRanks = []int64{16, 32}

// cpdKernel names the case's kernel in results, pypeer and tacoKernels.
const cpdKernel = "mttkrp-dense"

// cpdFormats are storel's formats for the cpd case.
var cpdFormats = map[string]string{"B": "csf", "C": "dense", "D": "dense"}

// runCPD runs every real 3-tensor at every rank in cpdRanks.
func (h *Harness) runCPD() error {
	for i := range realData {
		d := &realData[i]
		if d.order() != 3 || (h.cfg.Quick && d.QuickLimits == nil) || !h.selected("mttkrp", d.Name) {
			continue
		}
		path, dims, nnz, err := h.datasetFile(d)
		if h.skipMissing("cpd", d, err) {
			continue
		}
		if err != nil {
			return err
		}
		for _, rank := range cpdRanks {
			in, err := h.cpdInputs(d.Name, path, dims, nnz, rank)
			if err != nil {
				return err
			}
			k := caseKey{"cpd", cpdKernel, d.Name, float64(rank)}
			jobs := []job{h.storelJob(k, "storel", StorelRun{h.program("mttkrp"), cpdFormats, "optimized", 1}, in, true)}
			if o, ok := h.oracleJob(k, h.program("mttkrp"), cpdFormats, in); ok {
				jobs = append(jobs, o)
			}
			jobs = append(jobs, h.peerJobs(k, in, []string{"taco", "numpy", "torch"})...)
			h.runJobs(k, jobs)
		}
	}
	return nil
}

// cpdInputs are B and dense random C (B's second mode × rank) and D (rank
// × B's third mode).
func (h *Harness) cpdInputs(label, path string, dims []int64, nnz, rank int64) (*Inputs, error) {
	in := &Inputs{Label: label, Tensors: map[string]string{"B": path}, Dims: map[string][]int64{"B": dims},
		Shapes: map[string][]int64{"B": dims}, NNZ: nnz}
	c, err := h.genMatrix(dims[1], rank, 1, 61)
	if err != nil {
		return nil, err
	}
	d, err := h.genMatrix(rank, dims[2], 1, 62)
	if err != nil {
		return nil, err
	}
	in.Tensors["C"], in.Shapes["C"] = c, []int64{dims[1], rank}
	in.Tensors["D"], in.Shapes["D"] = d, []int64{rank, dims[2]}
	return in, nil
}

// writeCPD is the cpd section: per tensor and rank, each system's time
// and storel's ratio to each peer.
func writeCPD(w *mdWriter, ms []*Measurement) {
	w.p("## MTTKRP with dense factors (CP decomposition)")
	w.p("")
	w.p("A(i,j) = Σ B(i,k,l)·C(k,j)·D(j,l) (examples/mttkrp.sdql) with C and D dense random factor matrices of rank R, " +
		"as a CP decomposition's inner step computes it. storel: B CSF, C and D `dense`, one thread; TACO: B `sss`, C and D `dd`, " +
		"the same expression; NumPy: the vectorized form (gather C(k,:) and D(:,l) for every non-zero, multiply by its value, " +
		"sum per row i with a SciPy sparse product); PyTorch: the same gathers, summed with index_add_, one thread. " +
		"**storel / peer** is storel's time over the peer's (below 1: storel is faster).")
	w.p("")
	systems := []string{"storel", "taco", "numpy", "torch"}
	header := []string{"tensor", "R"}
	header = append(header, systems...)
	header = append(header, "storel / TACO", "storel / NumPy", "storel / PyTorch")
	byCase := groupBy(ms, func(m *Measurement) string { return fmt.Sprintf("%s\x00%g", m.Input, m.X) })
	var rows [][]string
	var notes []string
	for _, key := range byCase.keys {
		cms := byCase.by[key]
		input, rank, _ := strings.Cut(key, "\x00")
		row := []string{input, rank}
		st, stOK := execOK(find(cms, "storel"))
		for _, s := range systems {
			m := find(cms, s)
			if m == nil {
				row = append(row, "")
				continue
			}
			row = append(row, cell(m))
			if m.Note != "" && m.Status != StatusOK {
				notes = append(notes, fmt.Sprintf("%s on %s, R %s: %s", s, input, rank, m.Note))
			}
		}
		for _, s := range systems[1:] {
			if v, ok := execOK(find(cms, s)); ok && stOK && v > 0 {
				row = append(row, fmt.Sprintf("%.2f", st/v))
			} else {
				row = append(row, "")
			}
		}
		rows = append(rows, row)
	}
	w.table(header, rows)
	writePhases(w, ms)
	writeNotes(w, notes)
}
