package datadriven

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected outputs of datadriven test files with the actual outputs")

// TestData is one case of a test file.
type TestData struct {
	Pos      string   // file:line of the command, for messages
	Cmd      string   // the command word
	CmdArgs  []CmdArg // the arguments after it
	Input    string   // the lines between the command and ----, joined with newlines
	Expected string   // the expected output, ending in a newline unless empty
}

// CmdArg is an argument of a command: key, key=value or key=(v1, v2).
type CmdArg struct {
	Key  string
	Vals []string
}

func (a CmdArg) String() string {
	switch len(a.Vals) {
	case 0:
		return a.Key
	case 1:
		return a.Key + "=" + a.Vals[0]
	}
	return a.Key + "=(" + strings.Join(a.Vals, ", ") + ")"
}

// HasArg reports whether the command has an argument named key.
func (d *TestData) HasArg(key string) bool {
	_, ok := d.Arg(key)
	return ok
}

// Arg returns the values of the argument named key.
func (d *TestData) Arg(key string) ([]string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return a.Vals, true
		}
	}
	return nil, false
}

// Fatalf fails the test with the case's position in front of the message.
func (d *TestData) Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s: %s", d.Pos, fmt.Sprintf(format, args...))
}

// RunTest runs f on every case of the file at path and compares what f
// returns with the expected output (a missing final newline is added).
// With -rewrite it writes the actual outputs back into the file instead.
func RunTest(t *testing.T, path string, f func(t *testing.T, d *TestData) string) {
	t.Helper()
	runFile(t, t, path, *rewriteFlag, f)
}

// Walk calls f (in a subtest named after the file) for every file under
// dir, in name order.
func Walk(t *testing.T, dir string, f func(t *testing.T, path string)) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) { f(t, path) })
	}
}

// reporter is the part of testing.TB that the comparison uses, so the
// driver's own tests can observe mismatches.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

func runFile(t *testing.T, r reporter, path string, rewrite bool, f func(t *testing.T, d *TestData) string) {
	r.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		r.Fatalf("%v", err)
		return
	}
	chunks, err := parseFile(path, string(content))
	if err != nil {
		r.Fatalf("%v", err)
		return
	}
	var out strings.Builder
	for _, c := range chunks {
		if c.data == nil {
			out.WriteString(c.text)
			continue
		}
		actual := f(t, c.data)
		if actual != "" && !strings.HasSuffix(actual, "\n") {
			actual += "\n"
		}
		if rewrite {
			out.WriteString(c.text)
			out.WriteString(formatOutput(actual))
			continue
		}
		if actual != c.data.Expected {
			r.Errorf("%s: %s: output differs\n--- expected:\n%s--- actual:\n%s--- diff (- expected, + actual):\n%s",
				c.data.Pos, c.data.Cmd, c.data.Expected, actual, lineDiff(c.data.Expected, actual))
		}
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			r.Fatalf("%v", err)
		}
	}
}

// formatOutput renders an output after its ----, choosing the double
// separator form when the output has blank lines (or would otherwise be
// misread).
func formatOutput(actual string) string {
	body := strings.TrimSuffix(actual, "\n")
	lines := strings.Split(body, "\n")
	needsDouble := lines[0] == "----"
	for _, line := range lines {
		if strings.TrimSpace(line) == "" && body != "" {
			needsDouble = true
		}
	}
	if !needsDouble {
		return actual
	}
	return "----\n" + actual + "----\n----\n"
}

// chunk is either verbatim text (comments and blank lines between cases)
// or a case; for a case, text is everything up to and including the first
// ---- line.
type chunk struct {
	text string
	data *TestData
}

func parseFile(path, content string) ([]chunk, error) {
	lines := strings.SplitAfter(content, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	trim := func(l string) string { return strings.TrimRight(l, "\r\n") }
	var chunks []chunk
	i := 0
	for i < len(lines) {
		line := trim(lines[i])
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			chunks = append(chunks, chunk{text: lines[i]})
			i++
			continue
		}
		d := &TestData{Pos: fmt.Sprintf("%s:%d", path, i+1)}
		var err error
		d.Cmd, d.CmdArgs, err = parseDirective(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.Pos, err)
		}
		var head strings.Builder
		head.WriteString(lines[i])
		i++
		var input []string
		for {
			if i >= len(lines) {
				return nil, fmt.Errorf("%s: the case has no ---- line before the end of the file", d.Pos)
			}
			l := trim(lines[i])
			head.WriteString(lines[i])
			i++
			if l == "----" {
				break
			}
			input = append(input, l)
		}
		d.Input = strings.Join(input, "\n")
		var expected []string
		if i < len(lines) && trim(lines[i]) == "----" {
			// Double separator: the output ends at a ----/---- pair.
			i++
			for {
				if i >= len(lines) {
					return nil, fmt.Errorf("%s: the output opened with ----/---- is not closed by ----/----", d.Pos)
				}
				if trim(lines[i]) == "----" && i+1 < len(lines) && trim(lines[i+1]) == "----" {
					i += 2
					break
				}
				expected = append(expected, trim(lines[i]))
				i++
			}
		} else {
			for i < len(lines) && strings.TrimSpace(trim(lines[i])) != "" {
				expected = append(expected, trim(lines[i]))
				i++
			}
		}
		if len(expected) > 0 {
			d.Expected = strings.Join(expected, "\n") + "\n"
		}
		chunks = append(chunks, chunk{text: head.String(), data: d})
	}
	return chunks, nil
}

// parseDirective splits "cmd a b=c d=(e, f)" into the command and its
// arguments.
func parseDirective(line string) (string, []CmdArg, error) {
	fields, err := splitFields(line)
	if err != nil {
		return "", nil, err
	}
	cmd := fields[0]
	var args []CmdArg
	for _, f := range fields[1:] {
		key, val, hasVal := strings.Cut(f, "=")
		a := CmdArg{Key: key}
		if hasVal {
			if strings.HasPrefix(val, "(") && strings.HasSuffix(val, ")") {
				for _, v := range strings.Split(val[1:len(val)-1], ",") {
					if v = strings.TrimSpace(v); v != "" {
						a.Vals = append(a.Vals, v)
					}
				}
			} else {
				a.Vals = []string{val}
			}
		}
		args = append(args, a)
	}
	return cmd, args, nil
}

// splitFields splits on spaces outside parentheses.
func splitFields(line string) ([]string, error) {
	var fields []string
	depth, start := 0, -1
	for i, r := range line {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ) in %q", line)
			}
		case (r == ' ' || r == '\t') && depth == 0:
			if start >= 0 {
				fields = append(fields, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced ( in %q", line)
	}
	if start >= 0 {
		fields = append(fields, line[start:])
	}
	return fields, nil
}

// lineDiff shows which lines differ, by a longest common subsequence.
func lineDiff(expected, actual string) string {
	a := strings.Split(strings.TrimSuffix(expected, "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(actual, "\n"), "\n")
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		default:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return sb.String()
}
