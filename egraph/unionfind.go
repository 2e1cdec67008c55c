package egraph

// unionFind is a disjoint-set forest over ClassIDs. Which root survives a
// union is decided by the e-graph (it keeps the class with more parents, so
// fewer nodes need re-canonicalizing), so there is no union by rank here.
type unionFind struct {
	parent []ClassID
}

// makeSet adds a singleton set and returns its ID.
func (u *unionFind) makeSet() ClassID {
	id := ClassID(len(u.parent))
	u.parent = append(grow(u.parent, 1), id)
	return id
}

// find returns the root of id, halving the path on the way: every visited
// node is pointed at its grandparent, which keeps trees flat without a
// second pass.
func (u *unionFind) find(id ClassID) ClassID {
	p := u.parent
	for p[id] != id {
		p[id] = p[p[id]]
		id = p[id]
	}
	return id
}

// link makes root the parent of child; both must be roots.
func (u *unionFind) link(root, child ClassID) {
	u.parent[child] = root
}

// isRoot reports whether id is canonical.
func (u *unionFind) isRoot(id ClassID) bool {
	return u.parent[id] == id
}

func (u *unionFind) size() int { return len(u.parent) }
