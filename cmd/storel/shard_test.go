package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeMatrix writes a random integer-valued matrix (or 3-tensor, as
// .tns) with one empty and one full first-mode slice.
func writeMatrix(t *testing.T, r *rand.Rand, dir, name string, density float64, dims ...int) string {
	t.Helper()
	var lines []string
	empty, full := r.IntN(dims[0]), r.IntN(dims[0])
	var rec func(prefix []int)
	rec = func(prefix []int) {
		if len(prefix) == len(dims) {
			if prefix[0] != full && (prefix[0] == empty || r.Float64() >= density) {
				return
			}
			s := ""
			for _, x := range prefix {
				s += fmt.Sprint(x+1) + " "
			}
			lines = append(lines, s+fmt.Sprint(r.IntN(9)-4))
			return
		}
		for x := 0; x < dims[len(prefix)]; x++ {
			rec(append(prefix, x))
		}
	}
	rec(nil)
	text := strings.Join(lines, "\n") + "\n"
	if len(dims) == 2 {
		text = fmt.Sprintf("%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", dims[0], dims[1], len(lines)) + text
		return writeFile(t, dir, name+".mtx", text)
	}
	return writeFile(t, dir, name+".tns", text)
}

// TestShardRunCombine: storel shard, storel run --manifest on every part
// and storel combine give storel run's output byte for byte (integer
// values: every order of additions is exact), at 1, 2, 3 and 7 parts.
func TestShardRunCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 32))
	dir := t.TempDir()
	a := writeMatrix(t, r, dir, "a", 0.15, 14, 9)
	b := writeMatrix(t, r, dir, "b", 0.3, 9, 6)
	t3 := writeMatrix(t, r, dir, "t3", 0.1, 10, 9, 6)
	c := writeMatrix(t, r, dir, "c", 0.5, 9, 3)
	d := writeMatrix(t, r, dir, "d", 0.5, 3, 6)
	x := writeFile(t, dir, "x.txt", "1\n-2\n3\n0\n5\n1\n2\n-1\n4\n")
	cases := []struct {
		name string
		args []string
		out  string
	}{
		{"spmv", []string{"../../examples/spmv.sdql", "--tensor", "A=" + a, "--data", "x=" + x}, "y.tns"},
		{"spmv-dims", []string{"../../examples/spmv.sdql", "--tensor", "A=" + a, "--data", "x=" + x, "--dims", "20"}, "y.npy"},
		{"batax", []string{"../../examples/batax.sdql", "--tensor", "A=" + a + ":dcsr", "--data", "x=" + x, "--data", "beta=0.5"}, "q.npy"},
		{"mmm", []string{"../../examples/mmm.sdql", "--tensor", "A=" + a, "--tensor", "B=" + b, "--copy", "B"}, "q.mtx"},
		{"summmm", []string{"../../examples/summmm.sdql", "--tensor", "A=" + a + ":csc", "--tensor", "B=" + b, "--copy", "B"}, "q.tns"},
		{"ttm", []string{"../../examples/ttm.sdql", "--tensor", "A=" + t3, "--tensor", "B=" + d + ":csc"}, "q.tns"},
		{"mttkrp", []string{"../../examples/mttkrp.sdql", "--tensor", "B=" + t3, "--tensor", "C=" + c, "--tensor", "D=" + d}, "q.tns"},
	}
	for _, tc := range cases {
		whole := filepath.Join(dir, tc.name+"-whole-"+tc.out)
		runArgs := append([]string{"run"}, tc.args...)
		for i := 0; i < len(runArgs); i++ {
			if runArgs[i] == "--copy" {
				runArgs = append(runArgs[:i], runArgs[i+2:]...)
			}
		}
		if code, _, errs := cli(t, append(runArgs, "--output", whole)...); code != 0 {
			t.Fatalf("%s: run: %s", tc.name, errs)
		}
		want, _ := os.ReadFile(whole)
		for _, n := range []int{1, 2, 3, 7} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d", tc.name, n))
			code, stdout, errs := cli(t, append(append([]string{"shard"}, tc.args...), "--parts", fmt.Sprint(n), "--output", out)...)
			if code != 0 {
				t.Fatalf("%s: shard: %s", tc.name, errs)
			}
			if n == 7 && !strings.Contains(stdout, ", 0 entries") {
				t.Errorf("%s: no empty part among 7:\n%s", tc.name, stdout)
			}
			for k := 0; k < n; k++ {
				part := filepath.Join(out, fmt.Sprintf("part-%03d", k))
				if code, _, errs := cli(t, "run", "--manifest", filepath.Join(part, "manifest.txt"), "--output", filepath.Join(part, "result.tns")); code != 0 {
					t.Fatalf("%s: part %d: %s", tc.name, k, errs)
				}
			}
			got := filepath.Join(out, tc.out)
			if code, _, errs := cli(t, "combine", out, "--output", got); code != 0 {
				t.Fatalf("%s: combine: %s", tc.name, errs)
			}
			if g, _ := os.ReadFile(got); string(g) != string(want) {
				t.Errorf("%s, %d parts: combined\n%s\nwant\n%s", tc.name, n, g, want)
			}
		}
	}
}

func TestShardErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 32))
	dir := t.TempDir()
	a := writeMatrix(t, r, dir, "a", 0.3, 8, 8)
	x := writeFile(t, dir, "x.txt", "1\n1\n1\n1\n1\n1\n1\n1\n")
	code, _, errs := cli(t, "shard", "../../examples/mmm.sdql", "--tensor", "A="+a, "--tensor", "B="+a, "--output", filepath.Join(dir, "mmm"))
	if code != 1 || !strings.Contains(errs, "cannot be split: B (") || !strings.Contains(errs, "--copy B") {
		t.Errorf("mmm with B as large as A: exit %d, %q", code, errs)
	}
	for _, data := range [][]string{{"--data", "x=" + filepath.Join(dir, "none.txt")}, {"--data", "x=" + x, "--data", "x=" + x}} {
		args := append([]string{"shard", "../../examples/spmv.sdql", "--tensor", "A=" + a, "--parts", "2", "--output", filepath.Join(dir, "bad-data")}, data...)
		if code, _, errs := cli(t, args...); code != 1 || !strings.HasPrefix(errs, "storel: --data x=") {
			t.Errorf("shard with %v: exit %d, %q", data, code, errs)
		}
	}
	out := filepath.Join(dir, "spmv")
	spmv := []string{"shard", "../../examples/spmv.sdql", "--tensor", "A=" + a, "--data", "x=" + x, "--parts", "2", "--output", out}
	if code, _, errs := cli(t, spmv...); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := cli(t, spmv...); code != 1 || !strings.Contains(errs, "not empty") {
		t.Errorf("shard into a full directory: exit %d, %q", code, errs)
	}
	result := filepath.Join(out, "y.tns")
	if code, _, errs := cli(t, "combine", out, "--output", result); code != 1 || !strings.Contains(errs, "part 1 has no result") {
		t.Errorf("combine before the parts ran: exit %d, %q", code, errs)
	}
	writeFile(t, filepath.Join(out, "part-000"), "result.tns", "1 2\n")
	writeFile(t, filepath.Join(out, "part-001"), "result.tns", "7 1\n8 x\n")
	code, _, errs = cli(t, "combine", out, "--output", result)
	if code != 1 || !strings.Contains(errs, "part-001/result.tns:2: value \"x\" is not a number") {
		t.Errorf("combine of a bad result: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(result); err == nil {
		t.Errorf("combine left a partial %s", result)
	}
	writeFile(t, filepath.Join(out, "part-001"), "result.tns", "1 1\n")
	if code, _, errs := cli(t, "combine", out); code != 1 || !strings.Contains(errs, "the parts overlap") {
		t.Errorf("combine of overlapping disjoint parts: exit %d, %q", code, errs)
	}
	bad := writeFile(t, dir, "bad-manifest.txt", "# a part\nprogram ../../examples/spmv.sdql\nbogus x\n")
	if code, _, errs := cli(t, "run", "--manifest", bad); code != 1 || !strings.Contains(errs, "bad-manifest.txt:3: unknown line \"bogus\"") {
		t.Errorf("run --manifest with a bad line: exit %d, %q", code, errs)
	}
	if code, _, errs := cli(t, "run", "../../examples/spmv.sdql", "--manifest", filepath.Join(out, "part-000", "manifest.txt")); code != 2 || !strings.Contains(errs, "names the program") {
		t.Errorf("run --manifest with a program too: exit %d, %q", code, errs)
	}
}

// TestShardShortWrite: a part file cut short (here by a file size limit)
// stops shard with exit 1 and leaves no truncated file a later run could
// read as a whole part.
func TestShardShortWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 33))
	dir := t.TempDir()
	a := writeMatrix(t, r, dir, "a", 0.9, 60, 60)
	x := writeFile(t, dir, "x.txt", strings.Repeat("1\n", 60))
	out := filepath.Join(dir, "parts")
	cmd := exec.Command("bash", "-c", `ulimit -f 8 && exec "$0" "$@"`, os.Args[0], "shard", "../../examples/spmv.sdql", "--tensor", "A="+a, "--data", "x="+x, "--parts", "2", "--output", out)
	cmd.Env = append(os.Environ(), "STOREL_TEST_MAIN=1")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(b), "panic") {
		t.Fatalf("shard past a file size limit: %v\n%s", err, b)
	}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, _ := d.Info()
		if strings.Contains(d.Name(), ".tmp") || info.Size() >= 8*1024 {
			t.Errorf("left behind: %s, %d bytes", path, info.Size())
		}
		return nil
	})
}
