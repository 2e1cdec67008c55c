package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's benchmark table is the one the harness makes from the
// committed results: rerunning `storel-bench report` must not change it.
func TestReadmeHeadlineMatchesResults(t *testing.T) {
	d, err := readResults(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	want := headlineMarkdown(d)
	if want == "" {
		t.Fatal("no headline from bench/results/results.json")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), want) {
		t.Errorf("README.md's headline table is not the one bench/results/results.json gives; run `cd bench && go run ./cmd/storel-bench report`.\nwant:\n%s", want)
	}
}

func TestUpdateReadmeReplacesOnlyTheBlock(t *testing.T) {
	dir := t.TempDir()
	d := &reportData{Machine: "test machine", Runs: []string{"2026-01-02 03:04 UTC: e2e (storel build abc1234 binary 0)"}}
	for i, sys := range []string{"storel", "scipy", "storel", "scipy", "duckdb"} {
		v := []float64{2, 4, 3, 3, 30}[i]
		d.Results = append(d.Results, Measurement{Experiment: "e2e", Kernel: "spmv", Input: []string{"a", "a", "b", "b", "a"}[i],
			System: sys, Threads: 1, Status: StatusOK, Execute: &v, StorelBuild: "abc1234 binary 0"})
	}
	writeJSON(t, filepath.Join(dir, "results.json"), d)
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(readme, []byte("intro\n"+headlineBegin+"\nold\n"+headlineEnd+"\nafter\n"), 0o644)
	if err := UpdateReadme(readme, dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(readme)
	got := string(b)
	for _, want := range []string{"intro\n" + headlineBegin, "| SpMV | 2 | 1.41× | — | — | 15× | abc1234 |", "test machine; 2026-01-02", headlineEnd + "\nafter\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old") {
		t.Errorf("the old block is still there:\n%s", got)
	}
	os.WriteFile(readme, []byte("no markers\n"), 0o644)
	if err := UpdateReadme(readme, dir); err == nil {
		t.Error("a README without markers was accepted")
	}
	if b, _ := os.ReadFile(readme); string(b) != "no markers\n" {
		t.Errorf("a failed update changed the README: %q", b)
	}
}

func writeJSON(t *testing.T, path string, d *reportData) {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
