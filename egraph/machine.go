package egraph

// A pattern is compiled into a small program for a backtracking matching
// machine, in the spirit of egg's (itself after de Moura and Bjørner's
// e-matching code trees). Registers hold e-class IDs; register 0 holds the
// candidate class for the pattern's root.
//
//   - bind r, op, payload, arity -> out: for each node of class regs[r] with
//     that operator, payload and arity, copy its children to
//     regs[out..out+arity) and run the rest of the program (a branch point);
//   - compare r, s: continue only if regs[r] == regs[s] (second occurrence
//     of a variable: this is what makes non-linear patterns work);
//   - ground r, k: continue only if regs[r] is the class of the k-th ground
//     sub-pattern (one without variables), looked up once per search
//     instead of being matched node by node in every candidate.
//
// Reaching the end of the program yields the registers of the variables.
// Checks are emitted right after the bind that fills their registers, before
// descending into deeper binds, so that failing candidates are cut early.

type instKind uint8

const (
	instBind instKind = iota
	instCompare
	instGround
)

type inst struct {
	kind    instKind
	reg     uint32 // register inspected
	arg     uint32 // bind: first output register; compare: other register; ground: ground index
	arity   uint32
	op      Op
	payload uint64
}

type program struct {
	insts   []inst
	numRegs int
	varRegs []uint32 // register holding each variable, by slot
	grounds []int    // pattern nodes of the ground sub-patterns
}

type compiler struct {
	p      *Pattern
	prog   program
	varReg []int // -1 until the variable's first occurrence
}

func compile(p *Pattern) program {
	c := &compiler{p: p, varReg: make([]int, len(p.vars))}
	for i := range c.varReg {
		c.varReg[i] = -1
	}
	c.prog.numRegs = 1
	root := p.root()
	if p.nodes[root].isVar {
		c.varReg[p.nodes[root].slot] = 0
	} else {
		c.bind(root, 0)
	}
	c.prog.varRegs = make([]uint32, len(p.vars))
	for i, r := range c.varReg {
		c.prog.varRegs[i] = uint32(r)
	}
	return c.prog
}

// bind emits the bind for pattern node pi held in register reg, then the
// checks on its children, then recursively the binds of its operator
// children.
func (c *compiler) bind(pi int, reg uint32) {
	n := &c.p.nodes[pi]
	out := uint32(c.prog.numRegs)
	c.prog.numRegs += len(n.kids)
	c.prog.insts = append(c.prog.insts, inst{
		kind: instBind, reg: reg, arg: out, arity: uint32(len(n.kids)), op: n.op, payload: n.payload,
	})
	for i, k := range n.kids {
		kid, r := &c.p.nodes[k], out+uint32(i)
		switch {
		case kid.isVar:
			if prev := c.varReg[kid.slot]; prev >= 0 {
				c.prog.insts = append(c.prog.insts, inst{kind: instCompare, reg: r, arg: uint32(prev)})
			} else {
				c.varReg[kid.slot] = int(r)
			}
		case kid.ground:
			c.prog.insts = append(c.prog.insts, inst{kind: instGround, reg: r, arg: uint32(len(c.prog.grounds))})
			c.prog.grounds = append(c.prog.grounds, k)
		}
	}
	for i, k := range n.kids {
		if kid := &c.p.nodes[k]; !kid.isVar && !kid.ground {
			c.bind(k, out+uint32(i))
		}
	}
}

// machine runs a program over one e-graph. The graph must be clean, so that
// every stored child and every indexed class is canonical and registers can
// be compared with ==.
type machine[D any] struct {
	g      *EGraph[D]
	prog   *program
	regs   []ClassID
	ground []ClassID
	// out collects the variable bindings of every yielded match, flat.
	out   []ClassID
	count int
	limit int // stop after this many matches; <= 0 means no limit
}

// run executes the program from pc; it returns false once the limit is
// reached, to unwind the whole search.
func (m *machine[D]) run(pc int) bool {
	insts := m.prog.insts
	for ; pc < len(insts); pc++ {
		in := &insts[pc]
		switch in.kind {
		case instCompare:
			if m.regs[in.reg] != m.regs[in.arg] {
				return true
			}
		case instGround:
			if m.regs[in.reg] != m.ground[in.arg] {
				return true
			}
		case instBind:
			nodes := m.g.classes[m.regs[in.reg]].nodes
			for i := firstWithOp(m.g, nodes, in.op); i < len(nodes); i++ {
				r := &m.g.nodes[nodes[i]]
				if r.op != in.op || r.payload > in.payload {
					break
				}
				if r.payload != in.payload || r.arity != in.arity {
					continue
				}
				copy(m.regs[in.arg:], m.g.kidsOf(nodes[i]))
				if !m.run(pc + 1) {
					return false
				}
			}
			return true
		}
	}
	for _, r := range m.prog.varRegs {
		m.out = append(m.out, m.regs[r])
	}
	m.count++
	return m.limit <= 0 || m.count < m.limit
}

// firstWithOp returns the index of the first node with operator op in a
// class's sorted node list (or where it would be).
func firstWithOp[D any](g *EGraph[D], nodes []NodeID, op Op) int {
	if len(nodes) <= 8 {
		for i, n := range nodes {
			if g.nodes[n].op >= op {
				return i
			}
		}
		return len(nodes)
	}
	lo, hi := 0, len(nodes)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if g.nodes[nodes[mid]].op < op {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
