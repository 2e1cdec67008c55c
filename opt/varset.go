package opt

// varSet is a set of variable symbols kept as a sorted slice: the sets are
// small (the variables in scope of a kernel), compared often and copied on
// write, so a slice beats a map. Slices are never modified after creation.
type varSet []uint32

func (s varSet) has(v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
		if x > v {
			return false
		}
	}
	return false
}

func (s varSet) hasAny(vs ...uint32) bool {
	for _, v := range vs {
		if s.has(v) {
			return true
		}
	}
	return false
}

// union returns s ∪ t, sharing an operand when it already holds the other.
func (s varSet) union(t varSet) varSet {
	switch {
	case len(t) == 0:
		return s
	case len(s) == 0:
		return t
	}
	out := make(varSet, 0, len(s)+len(t))
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i] < t[j]:
			out = append(out, s[i])
			i++
		case s[i] > t[j]:
			out = append(out, t[j])
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	out = append(out, s[i:]...)
	out = append(out, t[j:]...)
	if len(out) == len(s) {
		return s
	}
	if len(out) == len(t) {
		return t
	}
	return out
}

// intersect returns s ∩ t.
func (s varSet) intersect(t varSet) varSet {
	if len(s) == 0 || len(t) == 0 {
		return nil
	}
	var out varSet
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i] < t[j]:
			i++
		case s[i] > t[j]:
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	if len(out) == len(s) {
		return s
	}
	return out
}

// minus returns s without the variables vs.
func (s varSet) minus(vs ...uint32) varSet {
	if !s.hasAny(vs...) {
		return s
	}
	out := make(varSet, 0, len(s))
	for _, x := range s {
		drop := false
		for _, v := range vs {
			if x == v {
				drop = true
			}
		}
		if !drop {
			out = append(out, x)
		}
	}
	return out
}

func (s varSet) equal(t varSet) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

func singletonSet(v uint32) varSet { return varSet{v} }
