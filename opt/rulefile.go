package opt

import (
	_ "embed"
	"fmt"
	"strings"
)

// The rule file (rules.txt) holds every rewrite the optimizer knows, one
// entry per rule:
//
//	rule NAME  "one-line reason"
//	  LHS  =>  RHS           (or <=> for a rule that applies both ways)
//	  if COND, COND, ...     (optional)
//
// The rewrite may span several lines; '#' starts a comment. NAME is the
// paper's name where the rule is the paper's (Fig. 3), else a name of our
// own. Conditions are predicates on metavariables, defined in conds.go:
//
//	notfree(e, x, ...)  none of the variables x occurs in e
//	distinct(x, y, ...) the binders are different variables: a rule that
//	                    swaps two binders would otherwise change which one
//	                    an occurrence refers to (rules reuse binder names,
//	                    so two binders in a term may share one)
//	strict(e, x)        e is zero whenever x is zero
//	linear(e, x)        e is additive in x (e(a+b) = e(a)+e(b), e(0) = 0)
//	scalar(e), dict(e), int(e)   the type of e
//	logical(e)          e is not a physical array, range or subarray
//	zerofree(e)         e stores no explicit zeros (see Data.Zeroful)
//	safe(e)             e cannot fail (a rule that evaluates e where it was
//	                    not evaluated before needs it; see safety.go)
//	sortedvec(e)        e is a sorted vector of distinct ints (for merge)
//	sortedruns(x)       x is a physical int array whose values never
//	                    decrease and repeat (the data's statistics): equal
//	                    values are runs of positions
//	loop(e)             every term of e runs a loop (a sum or a merge)
//	unbuilt(e)          e is not a dictionary built as @dense or @hash (a
//	                    singleton, or a sum of them)
//	holds(c)            the test c is true for every value its operands'
//	                    intervals allow (the ranges of the loops that bind
//	                    its variables, the data's scalars and arrays)
//	nontrivial(e)       e is not a variable or a constant
//	atom(e)             e is a variable or a constant (a name or a
//	                    literal): copying it repeats no work
//	densekey(k)         k is an int known to lie in [0, 2^26): it can index
//	                    a dense array
//	dropunique          (not a test) an unannotated singleton of the
//	                    right-hand side loses @unique: the rule puts it
//	                    under a different sum
//	filtered            (not a test) e[s(k) := v] replaces the walks of s
//	                    filtered to the key k (sum(<k2, v2> in s) if k ==
//	                    k2 then c, either side of ==, a lookup written as
//	                    a loop) by let k2 = k in let v2 = v in c, instead
//	                    of the lookups s(k)

// The file ends with the stages of the search:
//
//	stage NAME "what it does"
//	  RULE RULE< OTHERSTAGE ...
//
// RULE applies a rule left to right, RULE< right to left (a <=> rule),
// and the name of an earlier stage includes all of its rules.

//go:embed rules.txt
var rulesText string

// stageDef is one stage of the rule file.
type stageDef struct {
	Name, Reason string
	Rules        []string // rewrite names (NAME or NAME<)
	Line         int
}

// ruleDef is one entry of the rule file.
type ruleDef struct {
	Name, Reason string
	Text         string // the rewrite as written (joined on one line)
	Line         int
	LHS, RHS     *pat
	Bidir        bool
	Conds        []condSpec
	DropUnique   bool
	Filtered     bool
}

// condSpec is one condition: a predicate applied to metavariables.
type condSpec struct {
	Name string
	Args []string
}

func (c condSpec) String() string { return c.Name + "(" + strings.Join(c.Args, ", ") + ")" }

// parseRuleFile reads rule definitions and stages; name is used in error
// messages.
func parseRuleFile(name, text string) ([]*ruleDef, []*stageDef, error) {
	var defs []*ruleDef
	var stages []*stageDef
	var curStage *stageDef
	var cur *ruleDef
	var rewrite, conds []string
	var errs []string
	finish := func() {
		if cur == nil {
			return
		}
		cur.Text = strings.Join(rewrite, " ")
		lhs, rhs, bidir, err := parseRewrite(cur.Text)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: rule %s: %v", name, cur.Line, cur.Name, err))
		} else {
			cur.LHS, cur.RHS, cur.Bidir = lhs, rhs, bidir
		}
		for _, c := range conds {
			spec, err := parseCond(c)
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s:%d: rule %s: %v", name, cur.Line, cur.Name, err))
			case spec.Name == "dropunique":
				cur.DropUnique = true
			case spec.Name == "filtered":
				cur.Filtered = true
			default:
				cur.Conds = append(cur.Conds, spec)
			}
		}
		defs = append(defs, cur)
		cur, rewrite, conds = nil, nil, nil
	}
	inConds := false
	for i, line := range strings.Split(text, "\n") {
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "stage "); ok {
			finish()
			nm, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
			reason = strings.TrimSpace(reason)
			if len(reason) < 2 || reason[0] != '"' || reason[len(reason)-1] != '"' {
				errs = append(errs, fmt.Sprintf("%s:%d: stage %s: the reason must follow the name, in double quotes", name, i+1, nm))
			} else {
				reason = reason[1 : len(reason)-1]
			}
			curStage = &stageDef{Name: nm, Reason: reason, Line: i + 1}
			stages = append(stages, curStage)
			continue
		}
		if curStage != nil {
			curStage.Rules = append(curStage.Rules, strings.Fields(line)...)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "rule "); ok {
			finish()
			rest = strings.TrimSpace(rest)
			nm, reason, _ := strings.Cut(rest, " ")
			reason = strings.TrimSpace(reason)
			if len(reason) < 2 || reason[0] != '"' || reason[len(reason)-1] != '"' {
				errs = append(errs, fmt.Sprintf("%s:%d: rule %s: the reason must follow the name, in double quotes", name, i+1, nm))
			} else {
				reason = reason[1 : len(reason)-1]
			}
			cur = &ruleDef{Name: nm, Reason: reason, Line: i + 1}
			inConds = false
			continue
		}
		if cur == nil {
			errs = append(errs, fmt.Sprintf("%s:%d: expected 'rule NAME \"reason\"'", name, i+1))
			continue
		}
		// "if" starts the conditions once the rewrite has its arrow (a
		// rewrite may itself start with if ... then).
		if rest, ok := strings.CutPrefix(line, "if "); ok && strings.Contains(strings.Join(rewrite, " "), "=>") {
			inConds = true
			line = rest
		}
		if inConds {
			conds = append(conds, splitConds(line)...)
		} else {
			rewrite = append(rewrite, line)
		}
	}
	finish()
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	seen := map[string]*ruleDef{}
	for _, d := range defs {
		if seen[d.Name] != nil {
			return nil, nil, fmt.Errorf("%s:%d: rule %s is defined twice", name, d.Line, d.Name)
		}
		seen[d.Name] = d
	}
	// Expand stage references and check rule names.
	byName := map[string]*stageDef{}
	for _, st := range stages {
		var rules []string
		for _, r := range st.Rules {
			if prev, ok := byName[r]; ok {
				rules = append(rules, prev.Rules...)
				continue
			}
			base, rev := strings.CutSuffix(r, "<")
			d := seen[base]
			switch {
			case d == nil:
				errs = append(errs, fmt.Sprintf("%s:%d: stage %s: no rule or earlier stage is named %s", name, st.Line, st.Name, r))
			case rev && !d.Bidir:
				errs = append(errs, fmt.Sprintf("%s:%d: stage %s: rule %s applies one way only: %s is not a rule", name, st.Line, st.Name, base, r))
			}
			rules = append(rules, r)
		}
		st.Rules = rules
		byName[st.Name] = st
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return defs, stages, nil
}

// splitConds splits "a(x, y), b(z)" at the commas outside parentheses.
func splitConds(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

func parseCond(s string) (condSpec, error) {
	name, rest, ok := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if !ok {
		return condSpec{Name: name}, nil
	}
	args, ok := strings.CutSuffix(strings.TrimSpace(rest), ")")
	if !ok {
		return condSpec{}, fmt.Errorf("condition %q: missing )", s)
	}
	var spec condSpec
	spec.Name = name
	for _, a := range strings.Split(args, ",") {
		spec.Args = append(spec.Args, strings.TrimSpace(a))
	}
	return spec, nil
}
