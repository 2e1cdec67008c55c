package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMissingDataLeavesTheCommittedReportAlone: on a fresh clone the data
// directory lacks real inputs. Their cases are left out with a note (the
// run goes on), and neither the checkpoints taken during the run nor an
// incomplete report replace the report already in OutDir; a complete one
// does, once written in full.
func TestMissingDataLeavesTheCommittedReportAlone(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeGz(t, filepath.Join(data, "bcsstk16.mtx.gz"), "%%MatrixMarket matrix coordinate real symmetric\n4884 4884 2\n1 1 2.5\n700 3 1\n")
	fake := filepath.Join(dir, "storel")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then echo \"1 2\" > \"$2\"; fi; shift; done\necho 'timing: execute 1 ms' >&2\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	committed := map[string]string{"REPORT.md": "the committed report\n", "results.json": "{}\n"}
	for name, text := range committed {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(when string) {
		t.Helper()
		for name, text := range committed {
			if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != text {
				t.Errorf("%s: %s is now %q (%v)", when, name, b, err)
			}
		}
	}
	h := New(Config{Quick: true, Storel: fake, Repo: dir, DataDir: data, TmpDir: filepath.Join(out, "tmp"), OutDir: out,
		Experiments: []string{"e2e"}, Kernels: []string{"spmv"}, Python: "/nonexistent/python", Timeout: 10 * time.Second, Repeat: 1})
	if err := h.RunAll(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Missing, []string{"wiki-Vote"}) {
		t.Errorf("missing inputs %v, want [wiki-Vote]", h.Missing)
	}
	unchanged("after the run")
	stage, err := h.WriteReport(time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	unchanged("after an unpublished report")
	b, err := os.ReadFile(filepath.Join(stage, "REPORT.md"))
	if err != nil || !strings.Contains(string(b), "wiki-Vote is left out: wiki-Vote.mtx.gz is not in the data directory") {
		t.Errorf("the staged report lacks the note on wiki-Vote (%v):\n%s", err, b)
	}
	if got, err := h.WriteReport(time.Second, true); err != nil || got != out {
		t.Fatalf("published to %s: %v", got, err)
	}
	for _, name := range []string{"REPORT.md", "results.json"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) == committed[name] {
			t.Errorf("a published report left %s as it was (%v)", name, err)
		}
	}
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Errorf("the staging directory is still there after publishing: %v", err)
	}
}
