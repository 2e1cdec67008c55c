package egraph

// hashcons maps the canonical form of every live node to its NodeID. The
// invariant kept by the e-graph: for each live node n, the key made of n's
// op, payload and stored children is in the table, mapping to n, and no two
// live nodes share a key. Nodes are re-canonicalized in place only after
// being removed from the table, so the stored children of every entry are
// its key.
//
// It is an open-addressing table with linear probing that stores only
// (hash tag, NodeID) pairs in 8 bytes, reading keys from the node arena;
// a Go map keyed by a node encoding needed about 50 bytes per entry and
// spent most of e-matching's apply time in probing.
type hashcons struct {
	// slots hold tag<<32 | nid+1, with 0 for empty. tag is the low 32 bits
	// of the node's hash, and the slot a key probes from is tag & mask.
	slots []uint64
	mask  uint32
	count int
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

func (g *EGraph[D]) nodeEquals(nid NodeID, op Op, payload uint64, kids []ClassID) bool {
	r := &g.nodes[nid]
	if r.op != op || r.payload != payload || int(r.arity) != len(kids) {
		return false
	}
	stored := r.inline[:]
	if r.arity > inlineKids {
		stored = g.kids[r.start : r.start+r.arity]
	}
	for i, k := range kids {
		if stored[i] != k {
			return false
		}
	}
	return true
}

// memoGet finds the live node equal to (op, payload, kids).
func (g *EGraph[D]) memoGet(op Op, payload uint64, kids []ClassID) (NodeID, bool) {
	h := &g.memo
	if h.count == 0 {
		return 0, false
	}
	tag := hashNode(op, payload, kids)
	for i := tag & h.mask; ; i = (i + 1) & h.mask {
		s := h.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == tag {
			nid := NodeID(uint32(s) - 1)
			if g.nodeEquals(nid, op, payload, kids) {
				return nid, true
			}
		}
	}
}

// memoPut files nid, whose key must not be present.
func (g *EGraph[D]) memoPut(op Op, payload uint64, kids []ClassID, nid NodeID) {
	h := &g.memo
	if (h.count+1)*2 > len(h.slots) {
		g.memoResize()
	}
	tag := hashNode(op, payload, kids)
	i := tag & h.mask
	for h.slots[i] != 0 {
		i = (i + 1) & h.mask
	}
	h.slots[i] = uint64(tag)<<32 | uint64(nid+1)
	h.count++
}

// memoRemove deletes the entry of nid, filed under (op, payload, kids), if
// present, closing the gap by shifting later entries of the probe run back
// so that no tombstones are needed.
func (g *EGraph[D]) memoRemove(op Op, payload uint64, kids []ClassID, nid NodeID) {
	h := &g.memo
	if h.count == 0 {
		return
	}
	tag := hashNode(op, payload, kids)
	want := uint64(tag)<<32 | uint64(nid+1)
	i := tag & h.mask
	for h.slots[i] != want {
		if h.slots[i] == 0 {
			return
		}
		i = (i + 1) & h.mask
	}
	for j := i; ; {
		j = (j + 1) & h.mask
		s := h.slots[j]
		if s == 0 {
			break
		}
		// Move s back into the hole unless its home lies cyclically in
		// (i, j], in which case it must stay reachable where it is.
		home := uint32(s>>32) & h.mask
		if (j-home)&h.mask >= (j-i)&h.mask {
			h.slots[i] = s
			i = j
		}
	}
	h.slots[i] = 0
	h.count--
}

// memoResize doubles the table (or creates it), re-filing every entry.
func (g *EGraph[D]) memoResize() {
	h := &g.memo
	size := max(64, len(h.slots)*2)
	old := h.slots
	h.slots = make([]uint64, size)
	h.mask = uint32(size - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & h.mask
		for h.slots[i] != 0 {
			i = (i + 1) & h.mask
		}
		h.slots[i] = s
	}
}
