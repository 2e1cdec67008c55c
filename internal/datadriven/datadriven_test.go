package datadriven

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder captures mismatches instead of failing the test.
type recorder struct{ errors, fatals []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

const sample = `# A comment that must survive a rewrite.
upper
hello
----
HELLO

echo a b=c d=(e, f)
one

two
----
----
one

two
----
----

upper
----

lines n=2
x
----
x
x
`

// run applies the sample commands: upper, echo (the input with its
// arguments) and lines (the input repeated n times).
func run(t *testing.T, d *TestData) string {
	switch d.Cmd {
	case "upper":
		return strings.ToUpper(d.Input)
	case "echo":
		if got := fmt.Sprint(d.CmdArgs); got != "[a b=c d=(e, f)]" {
			t.Errorf("%s: arguments parsed as %s", d.Pos, got)
		}
		if vals, ok := d.Arg("d"); !ok || len(vals) != 2 || vals[1] != "f" {
			t.Errorf("%s: d=(e, f) parsed as %v", d.Pos, vals)
		}
		return d.Input
	case "lines":
		vals, _ := d.Arg("n")
		var n int
		fmt.Sscan(vals[0], &n)
		return strings.Repeat(d.Input+"\n", n)
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}

func writeTemp(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "cases")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMatchingFilePasses(t *testing.T) {
	r := &recorder{}
	runFile(t, r, writeTemp(t, sample), false, run)
	if len(r.errors)+len(r.fatals) > 0 {
		t.Fatalf("unexpected failures: %v %v", r.errors, r.fatals)
	}
}

func TestMismatchIsReportedWithPosition(t *testing.T) {
	broken := strings.Replace(sample, "HELLO", "HELLO!", 1)
	r := &recorder{}
	runFile(t, r, writeTemp(t, broken), false, run)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "cases:2: upper: output differs") ||
		!strings.Contains(r.errors[0], "- HELLO!\n+ HELLO\n") {
		t.Fatalf("expected one mismatch at line 2 with a diff, got %q", r.errors)
	}
}

func TestRewriteRestoresOutputs(t *testing.T) {
	// Blank every expected output; rewriting must give back the sample,
	// including the double-separator form and the comment.
	stale := strings.NewReplacer("HELLO\n", "", "x\nx\n", "old\n").Replace(sample)
	stale = strings.Replace(stale, "----\n----\none\n\ntwo\n----\n----\n", "----\nstale\n", 1)
	path := writeTemp(t, stale)
	r := &recorder{}
	runFile(t, r, path, true, run)
	got, _ := os.ReadFile(path)
	if string(got) != sample {
		t.Fatalf("rewrite produced:\n%s\nwant:\n%s", got, sample)
	}
}

func TestMalformedFiles(t *testing.T) {
	for _, content := range []string{
		"cmd\ninput without separator\n",
		"cmd\n----\n----\nunterminated double output\n",
		"cmd a=(b\n----\n",
	} {
		r := &recorder{}
		runFile(t, r, writeTemp(t, content), false, run)
		if len(r.fatals) != 1 {
			t.Errorf("%q: want one fatal error, got %v", content, r.fatals)
		}
	}
}
