package egraph

import "encoding/binary"

// smallArity is the largest arity whose nodes are keyed by a fixed-size
// struct. Such keys hash as plain memory and need no allocation; wider nodes
// (rare in practice) fall back to a byte-string key.
const smallArity = 4

// smallKey is the canonical encoding of a node with at most smallArity
// children. Unused child slots are zero; arity disambiguates them.
type smallKey struct {
	op      Op
	arity   uint32
	payload uint64
	kids    [smallArity]ClassID
}

// hashcons maps the canonical form of every live node to its NodeID. The
// invariant kept by the e-graph: for each live node n, the key built from n's
// stored children maps to n, and no two live nodes share a key.
type hashcons struct {
	small map[smallKey]NodeID
	large map[string]NodeID
	buf   []byte // scratch for large keys, so lookups do not allocate
}

func newHashcons() hashcons {
	return hashcons{small: map[smallKey]NodeID{}, large: map[string]NodeID{}}
}

func makeSmallKey(op Op, payload uint64, kids []ClassID) smallKey {
	k := smallKey{op: op, arity: uint32(len(kids)), payload: payload}
	copy(k.kids[:], kids)
	return k
}

func (h *hashcons) largeKey(op Op, payload uint64, kids []ClassID) []byte {
	b := h.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(op))
	b = binary.LittleEndian.AppendUint64(b, payload)
	for _, c := range kids {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	h.buf = b
	return b
}

func (h *hashcons) get(op Op, payload uint64, kids []ClassID) (NodeID, bool) {
	if len(kids) <= smallArity {
		n, ok := h.small[makeSmallKey(op, payload, kids)]
		return n, ok
	}
	n, ok := h.large[string(h.largeKey(op, payload, kids))]
	return n, ok
}

func (h *hashcons) put(op Op, payload uint64, kids []ClassID, n NodeID) {
	if len(kids) <= smallArity {
		h.small[makeSmallKey(op, payload, kids)] = n
		return
	}
	h.large[string(h.largeKey(op, payload, kids))] = n
}

// removeIf deletes the entry for the key only when it maps to n, so that
// re-canonicalizing a node never evicts another live node.
func (h *hashcons) removeIf(op Op, payload uint64, kids []ClassID, n NodeID) {
	if len(kids) <= smallArity {
		k := makeSmallKey(op, payload, kids)
		if got, ok := h.small[k]; ok && got == n {
			delete(h.small, k)
		}
		return
	}
	k := h.largeKey(op, payload, kids)
	if got, ok := h.large[string(k)]; ok && got == n {
		delete(h.large, string(k))
	}
}
