package egraph

// Scheduler decides, iteration by iteration, which rules are searched. It
// is how a runner keeps explosive rules (associativity, commutativity) from
// starving the others.
type Scheduler[D any] interface {
	// Search returns the matches of rw to apply in this iteration, and
	// false if the rule was skipped (banned) rather than searched.
	Search(iteration int, g *EGraph[D], rw *Rewrite[D]) ([]Match, bool)
	// CanStop is asked when an iteration changed nothing: may the runner
	// report saturation? A scheduler that skipped rules says no (and
	// arranges for them to run next).
	CanStop(iteration int) bool
}

// SimpleScheduler searches every rule in every iteration, without limit.
type SimpleScheduler[D any] struct{}

// Search implements Scheduler.
func (SimpleScheduler[D]) Search(_ int, g *EGraph[D], rw *Rewrite[D]) ([]Match, bool) {
	return rw.Search(g, 0), true
}

// CanStop implements Scheduler.
func (SimpleScheduler[D]) CanStop(int) bool { return true }

// BackoffScheduler bans rules that match too often, with exponential
// backoff: a rule whose search yields more than its match limit is skipped
// for BanLength iterations; each further ban doubles both the limit and the
// ban length for that rule. Searches stop at the limit, so an explosive
// rule costs little while it is being found out.
type BackoffScheduler[D any] struct {
	// MatchLimit is the initial limit of substitutions per search
	// (default 1000); BanLength the initial ban in iterations (default 5).
	MatchLimit, BanLength int
	perRule               map[string]*ruleLimits
	stats                 map[*Rewrite[D]]*ruleStats
}

type ruleLimits struct {
	matchLimit, banLength int
	neverBan              bool
}

type ruleStats struct {
	timesApplied int
	timesBanned  int
	bannedUntil  int
	matchLimit   int
	banLength    int
	neverBan     bool
}

// Default limits of the BackoffScheduler.
const (
	DefaultMatchLimit = 1000
	DefaultBanLength  = 5
)

// NewBackoffScheduler returns a scheduler with the default limits.
func NewBackoffScheduler[D any]() *BackoffScheduler[D] {
	return &BackoffScheduler[D]{MatchLimit: DefaultMatchLimit, BanLength: DefaultBanLength}
}

// SetRuleLimits overrides the initial match limit and ban length of the
// rule named name (values <= 0 keep the scheduler's defaults).
func (s *BackoffScheduler[D]) SetRuleLimits(name string, matchLimit, banLength int) *BackoffScheduler[D] {
	l := s.limitsFor(name)
	l.matchLimit, l.banLength = matchLimit, banLength
	return s
}

// DoNotBan exempts the rule named name from banning.
func (s *BackoffScheduler[D]) DoNotBan(name string) *BackoffScheduler[D] {
	s.limitsFor(name).neverBan = true
	return s
}

func (s *BackoffScheduler[D]) limitsFor(name string) *ruleLimits {
	if s.perRule == nil {
		s.perRule = map[string]*ruleLimits{}
	}
	l := s.perRule[name]
	if l == nil {
		l = &ruleLimits{}
		s.perRule[name] = l
	}
	return l
}

func (s *BackoffScheduler[D]) statsFor(rw *Rewrite[D]) *ruleStats {
	if s.stats == nil {
		s.stats = map[*Rewrite[D]]*ruleStats{}
	}
	st := s.stats[rw]
	if st != nil {
		return st
	}
	st = &ruleStats{matchLimit: s.MatchLimit, banLength: s.BanLength}
	if l := s.perRule[rw.Name]; l != nil {
		if l.matchLimit > 0 {
			st.matchLimit = l.matchLimit
		}
		if l.banLength > 0 {
			st.banLength = l.banLength
		}
		st.neverBan = l.neverBan
	}
	if st.matchLimit <= 0 {
		st.matchLimit = DefaultMatchLimit
	}
	if st.banLength <= 0 {
		st.banLength = DefaultBanLength
	}
	s.stats[rw] = st
	return st
}

// maxBackoffShift caps the doubling so limits cannot overflow.
const maxBackoffShift = 30

// Search implements Scheduler.
func (s *BackoffScheduler[D]) Search(iteration int, g *EGraph[D], rw *Rewrite[D]) ([]Match, bool) {
	st := s.statsFor(rw)
	if st.neverBan {
		return rw.Search(g, 0), true
	}
	if iteration < st.bannedUntil {
		return nil, false
	}
	shift := min(st.timesBanned, maxBackoffShift)
	threshold := st.matchLimit << shift
	matches := rw.Search(g, threshold+1)
	if CountSubsts(matches) > threshold {
		st.timesBanned++
		st.bannedUntil = iteration + st.banLength<<shift
		return nil, false
	}
	st.timesApplied++
	return matches, true
}

// CanStop implements Scheduler: with no rule banned, yes; otherwise the
// bans are shortened so that the earliest-ending one ends now, and the
// runner goes on.
func (s *BackoffScheduler[D]) CanStop(iteration int) bool {
	earliest := -1
	for _, st := range s.stats {
		if st.bannedUntil > iteration && (earliest < 0 || st.bannedUntil < earliest) {
			earliest = st.bannedUntil
		}
	}
	if earliest < 0 {
		return true
	}
	delta := earliest - (iteration + 1)
	for _, st := range s.stats {
		if st.bannedUntil > iteration {
			st.bannedUntil -= delta
		}
	}
	return false
}

// TimesBanned reports how often the rule named name has been banned.
func (s *BackoffScheduler[D]) TimesBanned(name string) int {
	n := 0
	for rw, st := range s.stats {
		if rw.Name == name {
			n += st.timesBanned
		}
	}
	return n
}

// BannedUntil reports the first iteration in which the rule named name may
// be searched again (0 if it was never banned).
func (s *BackoffScheduler[D]) BannedUntil(name string) int {
	until := 0
	for rw, st := range s.stats {
		if rw.Name == name {
			until = max(until, st.bannedUntil)
		}
	}
	return until
}
