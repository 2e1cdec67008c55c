package egraph

import "fmt"

// CostFunc gives the cost of node n of class, knowing the best costs of its
// children (kids[i] is the cost of n.Children[i]); false means the node must
// not be extracted (an infinite cost). The cost type C is the client's:
// storel's costs are structured (a cardinality and a cost), so C need not be
// a number, and the order is given separately.
//
// Extraction converges when costs never decrease from children to parent
// (cost(n) is not less than any kids[i]) and are monotone in kids.
type CostFunc[D, C any] func(g *EGraph[D], class ClassID, n Node, kids []C) (C, bool)

// Extractor finds, for every class, the cheapest term it represents,
// bottom-up to a fixed point. A class none of whose nodes can be built
// from classes with a cost (e.g. every node depends on the class itself)
// gets none.
type Extractor[D, C any] struct {
	g    *EGraph[D]
	cost CostFunc[D, C]
	less func(a, b C) bool
	best []bestChoice[C] // indexed by ClassID; meaningful for roots
}

type bestChoice[C any] struct {
	cost C
	node NodeID
	ok   bool
}

// maxRisesPerClass bounds how often a class takes another node because its
// best one came to cost more: costs that rise and fall with their
// children's choices can go round a cycle of classes, each rise requeuing
// parents, for as long as the evaluation budget lasts (a random program
// took 60x its optimization time). Past it, the class keeps its choice and
// number, as a cost that only falls would.
const maxRisesPerClass = 2

// maxEvaluationsPerNode bounds the work of a cost function that keeps
// improving (non-monotone costs on a cycle): past it, the current best
// choices are kept.
const maxEvaluationsPerNode = 64

// NewExtractor rebuilds g if needed and computes the best cost of every
// class. less orders costs (strictly). The extractor is a snapshot: build a
// new one after changing g.
func NewExtractor[D, C any](g *EGraph[D], cost CostFunc[D, C], less func(a, b C) bool) *Extractor[D, C] {
	g.ensureClean()
	x := &Extractor[D, C]{g: g, cost: cost, less: less, best: make([]bestChoice[C], g.uf.size())}
	x.computeCosts()
	return x
}

// computeCosts is a worklist fixed point: every node is evaluated once its
// children all have costs, and a class whose best cost improves requeues
// its parents.
func (x *Extractor[D, C]) computeCosts() {
	g := x.g
	queue := make([]NodeID, 0, g.NumNodes())
	queued := make([]bool, len(g.nodes))
	for c := range g.Classes() {
		for _, n := range g.classes[c].nodes {
			queue = append(queue, n)
			queued[n] = true
		}
	}
	var kids []C
	// nodes: each node's cost at its latest evaluation.
	nodes := make([]bestChoice[C], len(g.nodes))
	rises := make([]uint8, len(x.best))
	budget := maxEvaluationsPerNode*len(queue) + 1024
	for head := 0; head < len(queue) && budget > 0; head++ {
		nid := queue[head]
		queued[nid] = false
		budget--
		n := g.Node(nid)
		kids = kids[:0]
		ready := true
		for _, c := range n.Children {
			b := &x.best[c]
			if !b.ok {
				ready = false
				break
			}
			kids = append(kids, b.cost)
		}
		if !ready {
			continue
		}
		class := g.uf.find(g.nodes[nid].class)
		cost, ok := x.cost(g, class, n, kids)
		nodes[nid] = bestChoice[C]{cost: cost, node: nid, ok: ok}
		b := &x.best[class]
		switch {
		case ok && (!b.ok || x.less(cost, b.cost)):
			*b = nodes[nid]
		case b.ok && b.node == nid && rises[class] < maxRisesPerClass:
			rises[class]++
			// The class's best node now costs more (or nothing): a cost
			// that depends on more than its children's numbers (what
			// they build, which loops they hold) may rise when a child
			// switches to a cheaper term. Keeping the old number would
			// price a term the class no longer has, so the class takes
			// its cheapest node at their latest costs.
			old := *b
			*b = bestChoice[C]{}
			for _, m := range g.classes[class].nodes {
				if c := nodes[m]; c.ok && (!b.ok || x.less(c.cost, b.cost)) {
					*b = c
				}
			}
			if b.ok && b.node == old.node && !x.less(old.cost, b.cost) && !x.less(b.cost, old.cost) {
				continue
			}
		default:
			continue
		}
		for _, p := range g.classes[class].parents {
			if !queued[p] && !g.dead[p] {
				queued[p] = true
				queue = append(queue, p)
			}
		}
		// Reclaim the consumed prefix now and then so the queue does not
		// grow with the number of evaluations.
		if head > 4096 && head > len(queue)/2 {
			queue = append(queue[:0], queue[head+1:]...)
			head = -1
		}
	}
}

// choice returns the best choice of id's class; classes created after the
// extractor have none.
func (x *Extractor[D, C]) choice(id ClassID) bestChoice[C] {
	if c := x.g.uf.find(id); int(c) < len(x.best) {
		return x.best[c]
	}
	return bestChoice[C]{}
}

// Cost returns the best cost of id's class, false if it has none.
func (x *Extractor[D, C]) Cost(id ClassID) (C, bool) {
	b := x.choice(id)
	return b.cost, b.ok
}

// BestNode returns the node chosen for id's class.
func (x *Extractor[D, C]) BestNode(id ClassID) (NodeID, bool) {
	b := x.choice(id)
	return b.node, b.ok
}

// Extract returns the cheapest term of id's class, as a RecExpr in which
// shared classes appear once, with its cost. It fails if the class has no
// finite cost or the chosen nodes form a cycle (a cost function that lets
// a parent be cheaper than its child).
func (x *Extractor[D, C]) Extract(id ClassID) (*RecExpr, C, error) {
	root := x.g.uf.find(id)
	b := x.choice(root)
	if !b.ok {
		var zero C
		return nil, zero, fmt.Errorf("class %d has no extractable term", root)
	}
	e := &RecExpr{}
	index := map[ClassID]ClassID{}
	onPath := map[ClassID]bool{}
	var build func(c ClassID) (ClassID, error)
	build = func(c ClassID) (ClassID, error) {
		c = x.g.uf.find(c)
		if i, ok := index[c]; ok {
			return i, nil
		}
		if onPath[c] {
			return 0, fmt.Errorf("chosen terms form a cycle through class %d", c)
		}
		onPath[c] = true
		n := x.g.Node(x.best[c].node)
		kids := make([]ClassID, len(n.Children))
		for i, k := range n.Children {
			var err error
			if kids[i], err = build(k); err != nil {
				return 0, err
			}
		}
		onPath[c] = false
		i := e.Add(Node{Op: n.Op, Payload: n.Payload, Children: kids})
		index[c] = i
		return i, nil
	}
	if _, err := build(root); err != nil {
		var zero C
		return nil, zero, err
	}
	return e, b.cost, nil
}

// AstSize is a CostFunc counting nodes (shared subterms counted each time
// they occur), ordered with cmp.Less[int].
func AstSize[D any](_ *EGraph[D], _ ClassID, _ Node, kids []int) (int, bool) {
	s := 1
	for _, k := range kids {
		s += k
	}
	return s, true
}

// AstDepth is a CostFunc measuring the height of the term.
func AstDepth[D any](_ *EGraph[D], _ ClassID, _ Node, kids []int) (int, bool) {
	d := 0
	for _, k := range kids {
		d = max(d, k)
	}
	return d + 1, true
}
