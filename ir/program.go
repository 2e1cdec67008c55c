package ir

// ObjKind is the kind of a declared physical object (paper §4).
type ObjKind uint8

const (
	ObjScalar  ObjKind = iota // CREATE [int|real] SCALAR a
	ObjArray                  // CREATE [int|real] ARRAY A(n)
	ObjHashMap                // CREATE [int|real] HASHMAP H(n1, ..., nd): tuple keys
	ObjTrie                   // CREATE [int|real] TRIE T(n1)(n2)...(nd): nested hash maps
)

func (k ObjKind) String() string {
	return [...]string{"SCALAR", "ARRAY", "HASHMAP", "TRIE"}[k]
}

// Decl declares a named physical object. Dims are int expressions over
// scalars and arrays declared earlier (e.g. C_idx2(C_pos2(C_pos1(1)))).
type Decl struct {
	Name string
	Kind ObjKind
	Elem Base // Int or Real
	Dims []*Expr
	Pos  Pos
}

// Type is the logical type of the object: arrays are dictionaries from
// position to element; a hash map or trie of d dimensions is a d-deep
// dictionary.
func (d *Decl) Type() Type {
	switch d.Kind {
	case ObjScalar:
		return Type{0, d.Elem}
	case ObjArray:
		return Type{1, d.Elem}
	}
	return Type{len(d.Dims), d.Elem}
}

// Tensor is CREATE TENSOR Name AS Def: a logical tensor defined over
// physical objects and tensors defined before it.
type Tensor struct {
	Name string
	Def  *Expr
	Pos  Pos
}

// Program is a checked SDQLite compilation unit: physical declarations,
// tensor definitions in order, and an optional final bare expression.
type Program struct {
	Decls   []*Decl
	Tensors []*Tensor
	Result  *Expr // the final bare expression, or nil
}

// Decl returns the declaration of name, or nil.
func (p *Program) Decl(name string) *Decl {
	for _, d := range p.Decls {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Tensor returns the last definition of tensor name, or nil.
func (p *Program) Tensor(name string) *Tensor {
	for i := len(p.Tensors) - 1; i >= 0; i-- {
		if p.Tensors[i].Name == name {
			return p.Tensors[i]
		}
	}
	return nil
}

// Compose builds the naive logical plan of paper §5.1:
//
//	let T1 = def1 in let T2 = def2 in ... in query
//
// where query is the final bare expression when there is one and query is
// empty, else the tensor named query (default: the last one defined). Only
// tensors the query needs (transitively) are bound. It returns nil if there
// is nothing to compute or query names no tensor.
func (p *Program) Compose(query string) *Expr {
	var body *Expr
	switch {
	case query == "" && p.Result != nil:
		body = p.Result
	case query == "" && len(p.Tensors) > 0:
		t := p.Tensors[len(p.Tensors)-1]
		body = &Expr{Op: OpVar, Name: t.Name, Type: t.Def.Type, Pos: t.Pos}
	default:
		t := p.Tensor(query)
		if t == nil {
			return nil
		}
		body = &Expr{Op: OpVar, Name: t.Name, Type: t.Def.Type, Pos: t.Pos}
	}
	// Walk the definitions backwards, binding each tensor the plan still
	// refers to. A later definition of the same name shadows earlier ones.
	for i := len(p.Tensors) - 1; i >= 0; i-- {
		t := p.Tensors[i]
		if !FreeVars(body)[t.Name] {
			continue
		}
		l := Let(t.Name, t.Def, body)
		l.Type, l.Pos = body.Type, t.Pos
		body = l
	}
	return body
}
