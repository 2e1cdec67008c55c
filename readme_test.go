package storel_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// notRun lists the documented commands this test does not run, each with
// why; every other line of a sh block in README.md or docs/*.md runs.
var notRun = map[string]string{
	"go test ./...":          "the test suite this test belongs to; CI runs it",
	"bench/install-peers.sh": "installs system packages as root",
	"bench/run.sh --quick":   "needs the peers that bench/install-peers.sh installs",
	"bench/run.sh":           "needs the peers and the real data; about an hour",
	"(cd bench && go run ./cmd/storel-bench report)": "rewrites the committed report and README table; bench/ is a module of its own",
	"dist/storel-dask --scheduler tcp://HOST:8786 run examples/spmv.sdql --tensor A=examples/data/a.mtx --data x=examples/data/x.npy --parts 2 --output y.tns": "needs a Dask scheduler; dist/test_dask.py (in .ci/run) runs it against one",
}

// docCommands returns the commands of the ```sh blocks of a Markdown
// file, a line continued by a trailing backslash joined to the next.
func docCommands(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in, cont := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && (trimmed == "```sh" || trimmed == "```bash"):
			in = true
		case in && trimmed == "```":
			in = false
		case in:
			if strings.HasSuffix(trimmed, `\`) {
				cont += strings.TrimSuffix(trimmed, `\`) + " "
				continue
			}
			cmd := strings.TrimSpace(cont + trimmed)
			cont = ""
			if cmd != "" && !strings.HasPrefix(cmd, "#") {
				cmds = append(cmds, cmd)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// withoutComment drops a trailing "# ..." comment from a command line (the
// documents use them only after two spaces).
func withoutComment(cmd string) string {
	if i := strings.Index(cmd, "  #"); i >= 0 {
		return strings.TrimSpace(cmd[:i])
	}
	return cmd
}

// TestDocumentedCommands runs every command of README.md and docs/*.md, as
// written, in order, with bash, from the root of a copy of the repository
// (so the files they write do not land in the checkout), after installing
// storel there as the README says.
func TestDocumentedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storel and runs the documented commands")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	docs := []string{"README.md"}
	more, _ := filepath.Glob("docs/*.md")
	docs = append(docs, more...)

	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	copyTree(t, ".", repo)
	gobin := filepath.Join(root, "bin")
	env := append(os.Environ(), "GOBIN="+gobin, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))

	total := 0
	for _, doc := range docs {
		for _, cmd := range docCommands(t, doc) {
			c := withoutComment(cmd)
			if _, skip := notRun[c]; skip {
				continue
			}
			total++
			sh := exec.Command("bash", "-e", "-o", "pipefail", "-c", c)
			sh.Dir, sh.Env = repo, env
			var out bytes.Buffer
			sh.Stdout, sh.Stderr = &out, &out
			if err := sh.Run(); err != nil {
				t.Errorf("%s: %s\nfailed: %v\n%s", doc, cmd, err, out.String())
			}
		}
	}
	if total < 10 {
		t.Errorf("ran only %d documented commands; the sh blocks were not found", total)
	}
}

// copyTree copies the regular files under src to dst, leaving out .git
// and the benchmark module (no documented command runs there).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel == ".git" || rel == "bench" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The commands the test skips must be the documented ones, no more: a
// stale entry would let a changed command go unrun.
func TestNotRunCommandsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	docs := []string{"README.md"}
	more, _ := filepath.Glob("docs/*.md")
	for _, doc := range append(docs, more...) {
		for _, cmd := range docCommands(t, doc) {
			seen[withoutComment(cmd)] = true
		}
	}
	for c := range notRun {
		if !seen[c] {
			t.Errorf("notRun lists %q, which no document shows", c)
		}
	}
}
