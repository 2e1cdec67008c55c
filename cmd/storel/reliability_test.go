package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/storel/storel/storage"
)

// TestMain lets a test run the command as a separate process (under a
// file size limit, say): STOREL_TEST_MAIN=1 makes the test binary storel.
func TestMain(m *testing.M) {
	if os.Getenv("STOREL_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A 6x5 matrix whose last two rows are empty.
const mat65 = `%%MatrixMarket matrix coordinate real general
6 5 3
1 1 1
2 2 2
4 3 3
`

func TestOutputNeverLosesTheFile(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "a.mtx", mat65)
	keep := writeFile(t, dir, "keep.mtx", "precious\n")
	intact := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(keep); string(b) != "precious\n" {
			t.Errorf("%s: keep.mtx now holds %q", what, b)
		}
	}
	total := writeFile(t, dir, "total.sdql", "sum(<(i,j),v> in A) v")
	code, _, errs := cli(t, "run", total, "--tensor", "A="+mtx, "--output", keep)
	if code != 1 || !strings.Contains(errs, "needs a matrix") {
		t.Errorf("a scalar into .mtx: exit %d, %q", code, errs)
	}
	intact("a scalar into .mtx")
	// The format is checked before anything runs: this program would fail
	// at run time.
	fails := writeFile(t, dir, "fails.sdql", "sum(<(i,j),v> in A) {(i,j,i) -> 1 / (j - j)}")
	code, _, errs = cli(t, "run", fails, "--tensor", "A="+mtx, "--output", keep)
	if code != 1 || !strings.Contains(errs, "needs a matrix") || strings.Contains(errs, "division") {
		t.Errorf("a 3-tensor into .mtx: exit %d, %q", code, errs)
	}
	intact("a 3-tensor into .mtx")

	// A write cut short by a file size limit.
	big := writeFile(t, dir, "big.sdql", "sum(<i,_> in 0:20000) {i -> 1.5 * i}")
	keepTNS := writeFile(t, dir, "keep.tns", "precious\n")
	cmd := exec.Command("bash", "-c", `ulimit -f 8 && exec "$0" "$@"`, os.Args[0], "run", big, "--output", keepTNS)
	cmd.Env = append(os.Environ(), "STOREL_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "keep.tns is left as it was") || strings.Contains(string(out), ".tmp") {
		t.Errorf("a short write: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(keepTNS); string(b) != "precious\n" {
		t.Errorf("a short write left %d bytes in keep.tns", len(b))
	}
	// A replaced file keeps its permissions.
	os.Chmod(keepTNS, 0o600)
	if code, _, errs := cli(t, "run", big, "--output", keepTNS); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if info, err := os.Stat(keepTNS); err != nil || info.Mode().Perm() != 0o600 || info.Size() < 1000 {
		t.Errorf("the replaced file: %v, %v", info.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("files left behind: %v", ents)
	}
}

// TestResultShape: .npy and .mtx outputs have the shape the inputs give,
// not the largest key's; --dims sizes the result where nothing does.
func TestResultShape(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "a.mtx", mat65)
	x := writeFile(t, dir, "x.txt", "1\n1\n1\n1\n1\n")
	npyShape := func(args ...string) ([]int64, string) {
		t.Helper()
		out := filepath.Join(dir, "y.npy")
		os.Remove(out)
		code, _, errs := cli(t, append([]string{"run", "../../examples/spmv.sdql", "--tensor", "A=" + mtx, "--data", "x=" + x, "--output", out}, args...)...)
		if code != 0 {
			return nil, errs
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		a, err := storage.ReadNPY(f, out)
		if err != nil {
			t.Fatal(err)
		}
		return a.Shape, errs
	}
	for _, c := range []struct {
		args []string
		want []int64
	}{
		{nil, []int64{6}},
		{[]string{"--dims", "8"}, []int64{8}},
		{[]string{"--dims", "y=7"}, []int64{7}},
		{[]string{"--engine", "interp", "--plan", "naive"}, []int64{6}},
	} {
		if got, errs := npyShape(c.args...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("spmv %v: shape %v (%s), want %v", c.args, got, errs, c.want)
		}
	}
	tr := writeFile(t, dir, "tr.sdql", "CREATE TENSOR T AS sum(<(i,j),v> in A) {(j,i) -> v};")
	out := filepath.Join(dir, "t.mtx")
	if code, _, errs := cli(t, "run", tr, "--tensor", "A="+mtx, "--output", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "%%MatrixMarket matrix coordinate real general\n5 6 3\n") {
		t.Errorf("transpose of a 6x5 matrix:\n%s", b)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--dims", "3"}, 1, "key 3 in mode 1 does not fit the given size 3"},
		{[]string{"--dims", "6,1"}, 2, "2 sizes given, but the result"},
		{[]string{"--dims", "zz=6"}, 2, "no --tensor zz, and the result is y"},
	} {
		args := append([]string{"run", "../../examples/spmv.sdql", "--tensor", "A=" + mtx, "--data", "x=" + x, "--output", filepath.Join(dir, "z.npy")}, c.args...)
		if code, _, errs := cli(t, args...); code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.msg)
		}
	}
}

func TestSubcommandHelp(t *testing.T) {
	for _, c := range []struct {
		cmd   string
		flags []string
	}{
		{"run", []string{"--tensor", "--output", "--dims", "--stats"}},
		{"explain", []string{"--tensor", "--dot"}},
		{"demo", []string{"--size", "--engine", "--threads"}},
	} {
		for _, h := range []string{"-h", "--help"} {
			code, out, errs := cli(t, c.cmd, h)
			if code != 0 || errs != "" || strings.Contains(out+errs, "help requested") {
				t.Errorf("storel %s %s: exit %d, stderr %q", c.cmd, h, code, errs)
			}
			for _, f := range c.flags {
				if !strings.Contains(out, f) {
					t.Errorf("storel %s %s does not list %s:\n%s", c.cmd, h, f, out)
				}
			}
		}
	}
}

// TestSizeMismatch: a vector indexed by the columns of a matrix of
// another size is warned of, naming both files; where the program
// declares the size, the run is refused.
func TestSizeMismatch(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a53.mtx", "%%MatrixMarket matrix coordinate real general\n5 3 3\n1 1 1\n2 2 2\n3 3 3\n")
	xt := writeFile(t, dir, "x5.tns", "1 1\n2 2\n3 3\n4 4\n5 5\n")
	xv := writeFile(t, dir, "x5.txt", "1\n2\n3\n4\n5\n")
	prog := writeFile(t, dir, "spmv.sdql", "CREATE TENSOR y AS sum(<(i,j), a> in A) { i -> a * x(j) };\n")
	code, out, errs := cli(t, "run", prog, "--tensor", "A="+a, "--tensor", "x="+xt)
	if code != 0 || out != "1 1\n2 4\n3 9\n" || !regexp.MustCompile(`warning: .*spmv.sdql:1:\d+: in x\(j\), j ranges over A's dimension 2 \(size 3, from .*a53.mtx\) but is a key of x's dimension 1 \(size 5, from .*x5.tns\)`).MatchString(errs) {
		t.Errorf("x of 5 by A's 3 columns: exit %d, %q, %q", code, out, errs)
	}
	code, _, errs = cli(t, "run", "../../examples/spmv.sdql", "--tensor", "A="+a, "--data", "x="+xv)
	if code != 1 || !strings.Contains(errs, "x is declared with 3 elements (A_dim2, from tensor A ("+a+")) but its data ("+xv+") has 5") {
		t.Errorf("declared x(A_dim2) of 5: exit %d, %q", code, errs)
	}
}

func TestMisuseAndMessages(t *testing.T) {
	dir := t.TempDir()
	mtx := writeFile(t, dir, "c.mtx", figC)
	x := writeFile(t, dir, "x.txt", "1\n2\n3\n4\n")
	x2 := writeFile(t, dir, "x2.txt", "4\n3\n2\n1\n")
	garbage := writeFile(t, dir, "garbage.stats", "garbage\n")
	unknown := writeFile(t, dir, "unknown.stats", "A_pos2 len=4\nnosuch len=3\n")
	spmv := "../../examples/spmv.sdql"
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + x, "--data", "x=" + x2}, 1, `--data x=.*x2.txt: object x is given data twice`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + filepath.Join(dir, "no.txt")}, 1, `data of x: .*no.txt`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx + ":csrr"}, 2, `unknown format "csrr"`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx + ":csr|zzz"}, 2, `unknown format "zzz"`},
		{[]string{"run", spmv, "--plan", "fast"}, 2, `--plan fast`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + x, "--stats", garbage}, 1, `garbage.stats:1: garbage: no statistic given`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + x, "--stats", unknown}, 1, `unknown.stats: no object of the program is named nosuch$`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--tensor", "x=" + mtx}, 1, `x is already defined by the csr mapping of x; every object`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + x, "--output", filepath.Join(dir, "y.csv")}, 2, `want a .tns, .mtx or .npy`},
		{[]string{"run", spmv, "--tensor", "A=" + mtx, "--data", "x=" + x, "--output", filepath.Join(dir, "no", "y.tns")}, 1, `cannot write .*no/y.tns`},
	}
	for _, c := range cases {
		code, _, errs := cli(t, c.args...)
		if code != c.code || !regexp.MustCompile("(?m)"+c.msg).MatchString(errs) {
			t.Errorf("storel %s: exit %d, stderr %q; want exit %d and /%s/", strings.Join(c.args, " "), code, errs, c.code, c.msg)
		}
		if strings.Contains(errs, "<") {
			t.Errorf("storel %s: a pseudo-file in %q", strings.Join(c.args, " "), errs)
		}
	}
	// Devices and pipes are written directly.
	if code, _, errs := cli(t, "run", spmv, "--tensor", "A="+mtx, "--data", "x="+x, "--output", os.DevNull); code != 0 {
		t.Errorf("--output %s: exit %d, %s", os.DevNull, code, errs)
	}
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if code, _, errs := cli(t, "run", spmv, "--tensor", "A="+mtx, "--data", "x="+x, "--output", fifo); code != 0 {
		t.Errorf("--output FIFO: exit %d, %s", code, errs)
		// Release the reader.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
	if s := <-got; s != "1 65\n3 33\n" {
		t.Errorf("the FIFO carried %q", s)
	}
}

func TestAgreement(t *testing.T) {
	for _, c := range []struct {
		n      int
		scalar bool
		want   string
	}{{0, false, "both are empty"}, {1, false, "the 1 entry agrees"}, {2, false, "all 2 entries agree"}, {1, true, "the value agrees"}} {
		if got := agreement(c.n, c.scalar); got != c.want {
			t.Errorf("agreement(%d, %v) = %q, want %q", c.n, c.scalar, got, c.want)
		}
	}
}
