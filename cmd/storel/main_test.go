package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cli runs the command in-process and returns its exit status and output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A 3x4 matrix, the paper's Fig. 1 (b) C: rows 0 and 2 non-empty.
const figC = `%%MatrixMarket matrix coordinate real general
3 4 5
1 1 6
1 3 9
1 4 8
3 1 5
3 4 7
`

func TestRunSpMVEveryFormat(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	x := writeFile(t, dir, "x.txt", "1\n2\n3\n4\n")
	// y = C x = (6*1 + 9*3 + 8*4, 0, 5*1 + 7*4) = (65, 0, 33)
	want := "1 65\n3 33\n"
	for _, f := range []string{"csr", "csc", "dcsr", "dcsc", "coo", "hash", "trie", "dense", "ds", "ss:1,0", "dd:1,0"} {
		code, out, errs := cli(t, "run", "../../examples/spmv.sdql", "--tensor", "A="+mtx+":"+f, "--data", "x="+x)
		if code != 0 || out != want {
			t.Errorf("format %s: exit %d, stdout %q, stderr %q; want %q", f, code, out, errs, want)
		}
	}
}

// TestPatternFormats: a +pattern format stores no values (every entry is
// 1) and computes what the plain format computes; a matrix with another
// value is refused, naming the entry.
func TestPatternFormats(t *testing.T) {
	dir := t.TempDir()
	pattern := writeFile(t, dir, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 4 5\n1 1\n1 3\n1 4\n3 1\n3 4\n")
	x := writeFile(t, dir, "x.txt", "1\n2\n3\n4\n")
	want := "1 8\n3 5\n" // rows 1 and 3 of the pattern times x
	for _, f := range []string{"csr", "csr+pattern", "csc+pattern", "dcsr+pattern", "coo+pattern", "ss:1,0+pattern"} {
		code, out, errs := cli(t, "run", "../../examples/spmv.sdql", "--tensor", "A="+pattern+":"+f, "--data", "x="+x)
		if code != 0 || out != want {
			t.Errorf("format %s: exit %d, stdout %q, stderr %q; want %q", f, code, out, errs, want)
		}
	}
	real := writeFile(t, dir, "c.mtx", figC)
	code, _, errs := cli(t, "run", "../../examples/spmv.sdql", "--tensor", "A="+real+":csr+pattern", "--data", "x="+x)
	if code != 1 || !strings.Contains(errs, "the entry at (1,1) is 6: a +pattern format stores only entries equal to 1") {
		t.Errorf("a real matrix as csr+pattern: exit %d, stderr %q", code, errs)
	}
}

func TestRunOutputsAndTimings(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	prog := writeFile(t, dir, "t.sdql", "CREATE TENSOR T AS sum(<(i,j),v> in C) {(j,i) -> 2*v};")
	out := filepath.Join(dir, "t.tns")
	code, _, errs := cli(t, "run", prog, "--tensor", "C="+mtx+":csr", "--output", out, "--timings", "--repeat", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(out)
	if want := "1 1 12\n1 3 10\n3 1 18\n4 1 16\n4 3 14\n"; string(got) != want {
		t.Errorf("transpose: got %q, want %q", got, want)
	}
	for _, phase := range []string{"parse", "load", "optimize", "compile", "prepare", "execute", "write"} {
		if !regexp.MustCompile(`(?m)^timing: ` + phase + ` [0-9.]+ ms$`).MatchString(errs) {
			t.Errorf("no timing line for %s in %q", phase, errs)
		}
	}
	// A scalar result is one line holding the value.
	sum := writeFile(t, dir, "s.sdql", "sum(<(i,j),v> in C) v")
	code, stdout, errs := cli(t, "run", sum, "--tensor", "C="+mtx)
	if code != 0 || stdout != "35\n" {
		t.Errorf("scalar: exit %d, %q, %q", code, stdout, errs)
	}
}

// TestOutputsStreamAsTheInterpreterWrites: run streams the compiled
// kernel's result into the file (no logical value); every format must
// hold the bytes the interpreter's logical value writes, for real, int
// and scalar results.
func TestOutputsStreamAsTheInterpreterWrites(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	progs := map[string]string{
		"real":   "CREATE TENSOR T AS sum(<(i,j),v> in C) {(j,i) -> 0.5*v};",
		"int":    "CREATE TENSOR T AS sum(<(i,j),v> in C) {(j,i) -> i*j};",
		"vector": "CREATE TENSOR T AS sum(<(i,j),v> in C) {j -> v - 5};",
		"scalar": "sum(<(i,j),v> in C) v - v",
	}
	for name, src := range progs {
		prog := writeFile(t, dir, name+".sdql", src)
		for _, ext := range []string{"tns", "mtx", "npy"} {
			if ext == "mtx" && name != "real" && name != "int" {
				continue
			}
			var files [2][]byte
			for i, eng := range []string{"compiled", "interp"} {
				out := filepath.Join(dir, name+"-"+eng+"."+ext)
				if code, _, errs := cli(t, "run", prog, "--tensor", "C="+mtx+":csr", "--engine", eng, "--output", out); code != 0 {
					t.Fatalf("%s %s %s: exit %d: %s", name, ext, eng, code, errs)
				}
				files[i], _ = os.ReadFile(out)
			}
			if len(files[0]) == 0 || string(files[0]) != string(files[1]) {
				t.Errorf("%s as .%s: compiled wrote %q, the interpreter %q", name, ext, files[0], files[1])
			}
		}
	}
}

func TestExplainShowsPlans(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	code, out, errs := cli(t, "explain", "../../examples/summmm.sdql", "--tensor", "A="+mtx+":csc", "--tensor", "B="+mtx+":csr")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{"== declarations", "CREATE int ARRAY A_pos2", "== naive plan", "let A ="} {
		if !strings.Contains(out, s) {
			t.Errorf("explain output lacks %q:\n%s", s, out)
		}
	}
}

func TestDemoEveryKernel(t *testing.T) {
	for _, k := range demoKernels() {
		code, out, errs := cli(t, "demo", k)
		if code != 0 || !regexp.MustCompile(`all [0-9]+ entries agree|the value agrees`).MatchString(out) {
			t.Errorf("demo %s: exit %d\n%s\n%s", k, code, out, errs)
		}
	}
}

func TestErrorsAndExitStatus(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	bad := writeFile(t, dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 6\n9 1 5\n")
	typo := writeFile(t, dir, "typo.sdql", "CREATE TENSOR T AS\n  sum(<(i,j),v> in C) {i -> v * y};\n")
	overrun := writeFile(t, dir, "overrun.sdql", "CREATE int ARRAY P(3);\nCREATE int ARRAY Q(2);\nsum(<i,_> in 0:2) sum(<p,q> in Q(P(i):P(i+1))) q\n")
	p := writeFile(t, dir, "p.txt", "0\n1\n5\n")
	q := writeFile(t, dir, "q.txt", "7\n8\n")
	cases := []struct {
		args []string
		code int
		msg  string // regexp the stderr must match
	}{
		{[]string{}, 2, "no command"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"run"}, 2, "needs a PROGRAM.sdql"},
		{[]string{"run", typo, "--plan", "fast"}, 2, "--plan fast"},
		{[]string{"run", typo, "--bogus"}, 2, "bogus"},
		{[]string{"run", typo, "--tensor", "C=" + mtx}, 1, `typo.sdql:2:33: undefined: y`},
		{[]string{"run", typo, "--tensor", "C=" + bad}, 1, `bad.mtx:4: `},
		{[]string{"run", typo, "--tensor", "C=" + mtx + ":zzz"}, 2, `unknown format "zzz"`},
		{[]string{"run", typo, "--tensor", "C=" + filepath.Join(dir, "missing.mtx")}, 1, `missing.mtx`},
		{[]string{"run", overrun, "--data", "P=" + p, "--data", "Q=" + q}, 1, `Q\(1:5\) runs past the end of Q, which has 2 elements`},
		{[]string{"run", overrun, "--data", "P=" + p}, 1, `ARRAY Q is declared but has no data`},
		{[]string{"demo", "nope"}, 2, `unknown kernel "nope"`},
	}
	for _, c := range cases {
		code, _, errs := cli(t, c.args...)
		if code != c.code || !regexp.MustCompile(c.msg).MatchString(errs) {
			t.Errorf("storel %s: exit %d, stderr %q; want exit %d and /%s/", strings.Join(c.args, " "), code, errs, c.code, c.msg)
		}
		if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
			t.Errorf("storel %s: panic trace in stderr: %s", strings.Join(c.args, " "), errs)
		}
	}
}

func TestSplitFileFormat(t *testing.T) {
	for in, want := range map[string][2]string{
		"a.mtx":               {"a.mtx", ""},
		"a.mtx:csr":           {"a.mtx", "csr"},
		"a.tns.gz:ss:1,0":     {"a.tns.gz", "ss:1,0"},
		"dir/b.tns:sss:0,2,1": {"dir/b.tns", "sss:0,2,1"},
	} {
		p, f := splitFileFormat(in)
		if p != want[0] || f != want[1] {
			t.Errorf("splitFileFormat(%q) = %q, %q; want %q, %q", in, p, f, want[0], want[1])
		}
	}
}
