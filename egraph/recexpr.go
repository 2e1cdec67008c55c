package egraph

import "strings"

// RecExpr is a term (a tree, or a DAG when subterms are shared) flattened
// into a slice: each node's Children are indices of earlier nodes in Nodes,
// and the root is the last node. It is what extraction returns and what
// AddExpr loads into a graph.
type RecExpr struct {
	Nodes []Node
}

// Add appends n (whose Children index earlier nodes) and returns its index.
func (e *RecExpr) Add(n Node) ClassID {
	e.Nodes = append(e.Nodes, n)
	return ClassID(len(e.Nodes) - 1)
}

// Root returns the index of the root node. The expression must not be empty.
func (e *RecExpr) Root() ClassID { return ClassID(len(e.Nodes) - 1) }

// Format prints the expression as an s-expression, with heads printed by
// lang, e.g. (* x (+ 1 2)).
func (e *RecExpr) Format(lang Language) string {
	if len(e.Nodes) == 0 {
		return "()"
	}
	var b strings.Builder
	e.format(&b, lang, e.Root())
	return b.String()
}

func (e *RecExpr) format(b *strings.Builder, lang Language, i ClassID) {
	n := e.Nodes[i]
	if len(n.Children) == 0 {
		b.WriteString(lang.Format(n.Op, n.Payload))
		return
	}
	b.WriteByte('(')
	b.WriteString(lang.Format(n.Op, n.Payload))
	for _, c := range n.Children {
		b.WriteByte(' ')
		e.format(b, lang, c)
	}
	b.WriteByte(')')
}

// ParseExpr reads a ground term such as (* x (+ 1 2)).
func ParseExpr(lang Language, src string) (*RecExpr, error) {
	s, err := parseSexpr(src)
	if err != nil {
		return nil, err
	}
	e := &RecExpr{}
	if _, err := e.addSexpr(lang, s); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *RecExpr) addSexpr(lang Language, s *sexpr) (ClassID, error) {
	head, args, pos := s.head()
	if strings.HasPrefix(head, "?") {
		return 0, pos.at("pattern variable " + head + " in a ground expression")
	}
	op, payload, err := lang.Parse(head, len(args))
	if err != nil {
		return 0, pos.at(err.Error())
	}
	kids := make([]ClassID, len(args))
	for i, a := range args {
		if kids[i], err = e.addSexpr(lang, a); err != nil {
			return 0, err
		}
	}
	return e.Add(Node{Op: op, Payload: payload, Children: kids}), nil
}

// AddExpr adds every node of e and returns the class of its root.
func (g *EGraph[D]) AddExpr(e *RecExpr) ClassID {
	ids := make([]ClassID, len(e.Nodes))
	var kids []ClassID
	for i, n := range e.Nodes {
		kids = kids[:0]
		for _, c := range n.Children {
			kids = append(kids, ids[c])
		}
		ids[i] = g.Add(Node{Op: n.Op, Payload: n.Payload, Children: kids})
	}
	return ids[len(ids)-1]
}

// LookupExpr returns the class representing e if every node of it is
// already present.
func (g *EGraph[D]) LookupExpr(e *RecExpr) (ClassID, bool) {
	ids := make([]ClassID, len(e.Nodes))
	var kids []ClassID
	for i, n := range e.Nodes {
		kids = kids[:0]
		for _, c := range n.Children {
			kids = append(kids, ids[c])
		}
		id, ok := g.Lookup(Node{Op: n.Op, Payload: n.Payload, Children: kids})
		if !ok {
			return 0, false
		}
		ids[i] = id
	}
	return ids[len(ids)-1], true
}
