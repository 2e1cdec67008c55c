package egraph

// hashcons maps the canonical form of every live node to its NodeID. The
// invariant kept by the e-graph: for each live node n, the key made of n's
// op, payload and stored children is in the table, mapping to n, and no two
// live nodes share a key. Nodes are re-canonicalized in place only after
// being removed from the table, so an entry's key always equals its node's
// stored fields.
//
// It is an open-addressing table with linear probing. A slot copies the
// key of nodes of arity <= inlineKids and the node's creation class, so the
// common hit (Add of a node already present) reads one slot and no node
// record: e-matching's apply phase is a stream of such lookups, bound by
// memory latency. Deletion shifts later entries back instead of leaving
// tombstones.
type hashcons struct {
	slots []memoSlot
	mask  uint32
	count int
}

// memoSlot is one table entry; nid1 == 0 marks an empty slot.
type memoSlot struct {
	nid1    uint32 // NodeID + 1
	class   ClassID
	op      Op
	arity   uint32
	payload uint64
	inline  [inlineKids]ClassID // first children; the rest are in the arena
}

const (
	hashMul1 = 0x9E3779B97F4A7C15
	hashMul2 = 0xD6E8FEB86659FD93
)

// hashNode mixes a node's fields; any well-spread function would do.
func hashNode(op Op, payload uint64, kids []ClassID) uint32 {
	h := (uint64(op) + 1) * hashMul1
	h = (h ^ payload) * hashMul2
	h ^= h >> 32
	for _, k := range kids {
		h = (h ^ uint64(k)) * hashMul1
		h ^= h >> 29
	}
	h *= hashMul2
	return uint32(h ^ h>>32)
}

// slotMatches compares a slot's key with (op, payload, kids).
func (g *EGraph[D]) slotMatches(s *memoSlot, op Op, payload uint64, kids []ClassID) bool {
	if s.op != op || s.payload != payload || int(s.arity) != len(kids) {
		return false
	}
	if len(kids) <= inlineKids {
		for i, k := range kids {
			if s.inline[i] != k {
				return false
			}
		}
		return true
	}
	stored := g.kidsOf(NodeID(s.nid1 - 1))
	for i, k := range kids {
		if stored[i] != k {
			return false
		}
	}
	return true
}

// slotHash recomputes the hash of a filled slot's key.
func (g *EGraph[D]) slotHash(s *memoSlot) uint32 {
	if s.arity <= inlineKids {
		return hashNode(s.op, s.payload, s.inline[:s.arity])
	}
	return hashNode(s.op, s.payload, g.kidsOf(NodeID(s.nid1-1)))
}

// memoGet finds the live node equal to (op, payload, kids) and the class it
// was created in.
func (g *EGraph[D]) memoGet(op Op, payload uint64, kids []ClassID) (NodeID, ClassID, bool) {
	h := &g.memo
	if h.count == 0 {
		return 0, 0, false
	}
	for i := hashNode(op, payload, kids) & h.mask; ; i = (i + 1) & h.mask {
		s := &h.slots[i]
		if s.nid1 == 0 {
			return 0, 0, false
		}
		if g.slotMatches(s, op, payload, kids) {
			return NodeID(s.nid1 - 1), s.class, true
		}
	}
}

// memoPut files nid, whose key must not be present.
func (g *EGraph[D]) memoPut(op Op, payload uint64, kids []ClassID, nid NodeID) {
	h := &g.memo
	if (h.count+1)*2 > len(h.slots) {
		g.memoResize()
	}
	i := hashNode(op, payload, kids) & h.mask
	for h.slots[i].nid1 != 0 {
		i = (i + 1) & h.mask
	}
	s := memoSlot{nid1: uint32(nid) + 1, class: g.nodes[nid].class, op: op, arity: uint32(len(kids)), payload: payload}
	copy(s.inline[:], kids)
	h.slots[i] = s
	h.count++
}

// memoRemove deletes the entry of nid, filed under (op, payload, kids), if
// present, closing the gap by shifting later entries of the probe run back.
func (g *EGraph[D]) memoRemove(op Op, payload uint64, kids []ClassID, nid NodeID) {
	h := &g.memo
	if h.count == 0 {
		return
	}
	i := hashNode(op, payload, kids) & h.mask
	for h.slots[i].nid1 != uint32(nid)+1 {
		if h.slots[i].nid1 == 0 {
			return
		}
		i = (i + 1) & h.mask
	}
	for j := i; ; {
		j = (j + 1) & h.mask
		s := &h.slots[j]
		if s.nid1 == 0 {
			break
		}
		// Move s back into the hole unless its home lies cyclically in
		// (i, j], in which case it must stay reachable where it is.
		home := g.slotHash(s) & h.mask
		if (j-home)&h.mask >= (j-i)&h.mask {
			h.slots[i] = *s
			i = j
		}
	}
	h.slots[i] = memoSlot{}
	h.count--
}

// memoResize doubles the table (or creates it), re-filing every entry.
func (g *EGraph[D]) memoResize() {
	h := &g.memo
	size := max(64, len(h.slots)*2)
	old := h.slots
	h.slots = make([]memoSlot, size)
	h.mask = uint32(size - 1)
	for k := range old {
		s := &old[k]
		if s.nid1 == 0 {
			continue
		}
		i := g.slotHash(s) & h.mask
		for h.slots[i].nid1 != 0 {
			i = (i + 1) & h.mask
		}
		h.slots[i] = *s
	}
}
