// Package examples holds the paper's kernels as SDQLite programs (SpMV,
// MMM, SumMMM, BATAX, TTM, MTTKRP), embedded so that `storel demo` runs
// them with no files and tests and benchmarks share one copy. Beside
// them, data/ holds small inputs (a few KB) and mappings/ the storage
// mappings that docs/storage-mappings.md writes; README.md and docs/ run
// their commands on them.
package examples

import (
	"embed"
	"sort"
	"strings"
)

//go:embed *.sdql
var files embed.FS

// Source returns the text of the named kernel (e.g. "mttkrp").
func Source(name string) ([]byte, bool) {
	b, err := files.ReadFile(name + ".sdql")
	return b, err == nil
}

// Names lists the embedded kernels.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".sdql"))
	}
	sort.Strings(out)
	return out
}
