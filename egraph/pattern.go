package egraph

import (
	"strings"
)

// Pattern is a term with variables, such as (* ?a (+ ?b ?c)), used both to
// search an e-graph (the left-hand side of a rewrite) and to build new terms
// from a substitution (the right-hand side). A variable may occur several
// times (a non-linear pattern): all its occurrences must match the same
// e-class. Operators match by Op and Payload exactly.
//
// A Pattern is compiled once into a matching program (see machine.go) and
// is safe to share between rewrites and graphs.
type Pattern struct {
	lang  Language
	nodes []patNode // postorder: children before parents, root last
	vars  []Var     // distinct variables, in order of first occurrence
	prog  program
}

// patNode is a variable occurrence or an operator applied to sub-patterns.
type patNode struct {
	isVar   bool
	slot    int // index into Pattern.vars when isVar
	op      Op
	payload uint64
	kids    []int // indices into Pattern.nodes
	ground  bool  // no variable below (inclusive)
}

// ParsePattern reads a pattern. Atoms starting with '?' are variables;
// everything else is resolved by lang.
func ParsePattern(lang Language, src string) (*Pattern, error) {
	s, err := parseSexpr(src)
	if err != nil {
		return nil, err
	}
	p := &Pattern{lang: lang}
	if _, err := p.addSexpr(s); err != nil {
		return nil, err
	}
	p.prog = compile(p)
	return p, nil
}

// MustParsePattern is ParsePattern for patterns written in Go source; it
// panics on error.
func MustParsePattern(lang Language, src string) *Pattern {
	p, err := ParsePattern(lang, src)
	if err != nil {
		panic("egraph: pattern " + src + ": " + err.Error())
	}
	return p
}

func (p *Pattern) addSexpr(s *sexpr) (int, error) {
	head, args, pos := s.head()
	if strings.HasPrefix(head, "?") {
		if s.isList {
			return 0, pos.at("a variable cannot be an operator")
		}
		if len(head) == 1 {
			return 0, pos.at("variable without a name")
		}
		v := Var(head)
		slot := -1
		for i, w := range p.vars {
			if w == v {
				slot = i
			}
		}
		if slot < 0 {
			slot = len(p.vars)
			p.vars = append(p.vars, v)
		}
		p.nodes = append(p.nodes, patNode{isVar: true, slot: slot})
		return len(p.nodes) - 1, nil
	}
	op, payload, err := p.lang.Parse(head, len(args))
	if err != nil {
		return 0, pos.at(err.Error())
	}
	kids := make([]int, len(args))
	ground := true
	for i, a := range args {
		if kids[i], err = p.addSexpr(a); err != nil {
			return 0, err
		}
		ground = ground && p.nodes[kids[i]].ground
	}
	p.nodes = append(p.nodes, patNode{op: op, payload: payload, kids: kids, ground: ground})
	return len(p.nodes) - 1, nil
}

// Vars returns the pattern's distinct variables in order of first
// occurrence (shared; don't modify).
func (p *Pattern) Vars() []Var { return p.vars }

// root returns the index of the root node.
func (p *Pattern) root() int { return len(p.nodes) - 1 }

// String prints the pattern as an s-expression.
func (p *Pattern) String() string {
	var b strings.Builder
	p.format(&b, p.root())
	return b.String()
}

func (p *Pattern) format(b *strings.Builder, i int) {
	n := &p.nodes[i]
	switch {
	case n.isVar:
		b.WriteString(string(p.vars[n.slot]))
	case len(n.kids) == 0:
		b.WriteString(p.lang.Format(n.op, n.payload))
	default:
		b.WriteByte('(')
		b.WriteString(p.lang.Format(n.op, n.payload))
		for _, k := range n.kids {
			b.WriteByte(' ')
			p.format(b, k)
		}
		b.WriteByte(')')
	}
}
