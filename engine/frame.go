package engine

// frame holds the variables of one running kernel (or of one worker of a
// parallel sum) in typed slots: ints and bools in i, reals in f,
// dictionaries in d. The compiler assigns every binder its own slot.
type frame struct {
	i []int64
	f []float64
	d []dict
	// err is the first runtime error. Operations that fail record it and
	// return a zero; loops stop at the end of the iteration that set it.
	err *Error
	// vst: working memory of vectorized loops (nestvec.go), per frame so
	// that workers do not share it.
	vst []*vstate
	fst []*flatState
	lst []*liftState  // lifted ranges' memory (nestlift.go)
	mst []*mergeState // itMerge loops' batches (nestmerge.go)
	// win is runChecked's window, in positions: the chunks of a split
	// run that go in turn on one frame continue its growth instead of
	// starting again from firstWindow. parallelSum zeroes it per run.
	win int64
	// copies: what the run's frames share (a worker's is its parent's).
	copies *runCopies
}

func newFrame(ni, nf, nd int) *frame {
	return &frame{i: make([]int64, ni), f: make([]float64, nf), d: make([]dict, nd), copies: &runCopies{}}
}

// clone copies the slots for a worker.
func (fr *frame) clone() *frame {
	c := &frame{i: append([]int64(nil), fr.i...), f: append([]float64(nil), fr.f...), d: append([]dict(nil), fr.d...), copies: fr.copies}
	return c
}

func (fr *frame) fail(e *Error) {
	if fr.err == nil {
		fr.err = e
	}
}

// Compiled closures, one kind per result type.
type (
	intFn  func(*frame) int64
	realFn func(*frame) float64
	boolFn func(*frame) bool
	dictFn func(*frame) dict
	// accFn adds the value of a dictionary expression into a builder.
	accFn func(*frame, *builder)
)
