package harness

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// roundWallBudget bounds the runs worth repeating in further rounds: a
// system whose first run took longer is measured once (its own --repeat
// still applies).
const roundWallBudget = 20 * time.Second

// roundsWithin: only systems whose first execute time is within this
// factor of the case's fastest take part in further rounds. The rounds are
// for comparisons that are close; the far slower peers (dense NumPy,
// DuckDB's MMM) would multiply the run's time, and a run that fills
// gigabytes leaves the machine busy for a while after it exits, which
// would fall on whoever comes next.
const roundsWithin = 4

// setPhases sets m's phases from a run's timing lines.
func (m *Measurement) setPhases(t map[string]float64) {
	m.Load, m.Build, m.Optimize, m.Compile, m.Execute = ms(t, "load"), ms(t, "build"), ms(t, "optimize"), ms(t, "compile"), ms(t, "execute")
	// storel's prepare (index arrays narrowed for its row loops) is
	// building data structures, as a peer's build is.
	if p := ms(t, "prepare"); p != nil {
		m.Build = p
	}
}

// rounds is how many times a case's systems run in turn.
func (h *Harness) rounds(k caseKey) int {
	switch k.experiment {
	case "e2e", "variants", "threads", "cpd":
	default:
		return 1
	}
	return max(h.cfg.Rounds, 1)
}

// moreRounds runs the case's systems again, in the jobs' order, round after
// round, and replaces each one's phases with their medians over the rounds.
// Each run of a process already reports the median of its own --repeat
// runs; rounds guard against the machine's drift between the systems' turns
// (on a shared machine one system's turn can fall in a busy minute), which
// within-process repeats cannot; a short run repeats more in later rounds
// (roundRepeat). Only systems whose first run gave a
// checked (or cross-checked) answer take part, and of those only the ones
// within roundsWithin of the fastest; the reference interpreter does not
// (its time is not compared), nor does TACO, which already runs as
// separate processes (runRepeated), nor any run longer than
// roundWallBudget. Later rounds' answers are not checked again: the
// program, inputs and binary are the same, and the first round checked
// them. A later round that fails ends that system's rounds, noted.
func (h *Harness) moreRounds(k caseKey, jobs []job, out []Measurement, first map[int]map[string]float64) {
	n := h.rounds(k)
	if n < 2 {
		return
	}
	type series struct {
		phases map[string][]float64
		walls  []float64
	}
	eligible := func(i int) bool {
		j := jobs[i]
		return !j.oracle && !j.tacoTimes && out[i].Wall <= float64(roundWallBudget.Milliseconds())
	}
	fastest := math.Inf(1)
	for i, t := range first {
		if eligible(i) && !jobs[i].always {
			fastest = min(fastest, t["execute"])
		}
	}
	taking := map[int]*series{}
	for i, t := range first {
		if !eligible(i) || t["execute"] > roundsWithin*fastest && !jobs[i].always {
			continue
		}
		s := &series{phases: map[string][]float64{}, walls: []float64{out[i].Wall}}
		for p, v := range t {
			s.phases[p] = append(s.phases[p], v)
		}
		taking[i] = s
	}
	for round := 2; round <= n; round++ {
		for i, j := range jobs {
			s := taking[i]
			if s == nil {
				continue
			}
			removeAnswer(j.answer, j.npy)
			e := j.exec
			e.Args = withRepeat(e.Args, roundRepeat(first[i]["execute"], h.cfg.Repeat))
			r := Run(e)
			removeAnswer(j.answer, j.npy)
			if _, ok := r.Timings["execute"]; r.Status != StatusOK || !ok {
				why := r.Err
				if why == "" {
					why = "no execute timing in its output"
				}
				out[i].Note = joinNote(out[i].Note, fmt.Sprintf("round %d failed (%s); median of the %d rounds before", round, why, len(s.walls)))
				h.logf("%s %s %s %s: round %d: %s %s", k.experiment, k.kernel, k.input, j.system, round, r.Status, why)
				delete(taking, i)
				out[i].setPhases(medians(s.phases))
				out[i].Wall = median(s.walls)
				continue
			}
			for p, v := range r.Timings {
				s.phases[p] = append(s.phases[p], v)
			}
			s.walls = append(s.walls, float64(r.Wall.Microseconds())/1000)
			h.logf("%s %s %s %s: round %d execute %.3f ms", k.experiment, k.kernel, k.input, j.system, round, r.Timings["execute"])
		}
	}
	for i, s := range taking {
		out[i].setPhases(medians(s.phases))
		out[i].Wall = median(s.walls)
		out[i].Note = joinNote(out[i].Note, fmt.Sprintf("median of %d %s", len(s.walls), roundsNote))
	}
}

// roundExecTarget is how long a later round's process should spend
// executing: a run of a few milliseconds repeated only Repeat times gives a
// median that one wake-up of another process on a 2-core machine moves
// (2-thread runs most, since they need both cores), so later rounds repeat
// a short run more, up to maxRoundRepeat.
const (
	roundExecTarget = 400.0 // ms
	maxRoundRepeat  = 200
)

// roundRepeat is the --repeat of a later round for a run whose first
// round's execute phase took exec ms.
func roundRepeat(exec float64, repeat int) int {
	if exec <= 0 {
		return repeat
	}
	return min(max(repeat, int(math.Ceil(roundExecTarget/exec))), max(repeat, maxRoundRepeat))
}

// withRepeat returns a copy of args with its --repeat value set to n.
func withRepeat(args []string, n int) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "--repeat" {
			out[i+1] = strconv.Itoa(n)
		}
	}
	return out
}

// roundsNote ends the note of a time taken over rounds.
const roundsNote = "rounds in turn with the case's other systems"

// medians maps each phase to the median of its values.
func medians(phases map[string][]float64) map[string]float64 {
	t := make(map[string]float64, len(phases))
	for p, vs := range phases {
		t[p] = median(vs)
	}
	return t
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
