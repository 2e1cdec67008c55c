package egraph

// Symbols interns strings as payloads, so that names (variables, tensors)
// can ride in Node.Payload and compare as integers. The zero value is ready
// to use. Payload 0 is never handed out, so a zero payload can mean "none".
type Symbols struct {
	names []string
	ids   map[string]uint64
}

// Intern returns the payload for name, adding it if new.
func (s *Symbols) Intern(name string) uint64 {
	if id, ok := s.ids[name]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = map[string]uint64{}
		s.names = []string{""}
	}
	id := uint64(len(s.names))
	s.names = append(s.names, name)
	s.ids[name] = id
	return id
}

// Lookup returns the payload of name without adding it.
func (s *Symbols) Lookup(name string) (uint64, bool) {
	id, ok := s.ids[name]
	return id, ok
}

// Name returns the string interned as id, or "" if there is none.
func (s *Symbols) Name(id uint64) string {
	if id == 0 || id >= uint64(len(s.names)) {
		return ""
	}
	return s.names[id]
}

// Len reports how many strings are interned.
func (s *Symbols) Len() int {
	if len(s.names) == 0 {
		return 0
	}
	return len(s.names) - 1
}
