package storage

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
)

// stripComments drops the leading comment lines and blank lines of a
// hand-written mapping.
func stripComments(s string) string {
	lines := strings.Split(s, "\n")
	i := 0
	for i < len(lines) && (strings.HasPrefix(lines[i], "//") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// TestEmbeddedMappings checks that each hand-written mapping in
// mappings/ is exactly what Mapping generates for its format.
func TestEmbeddedMappings(t *testing.T) {
	files, err := fs.Glob(Mappings, "mappings/*.sdql")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range FormatNames {
		want[n] = true
	}
	delete(want, "csf")
	want["csf3"] = true
	for _, file := range files {
		base := strings.TrimSuffix(path.Base(file), ".sdql")
		if !want[base] {
			t.Errorf("unexpected mapping file %s", file)
			continue
		}
		delete(want, base)
		text, err := fs.ReadFile(Mappings, file)
		if err != nil {
			t.Fatal(err)
		}
		order := 2
		name := base
		if base == "csf3" {
			order, name = 3, "csf"
		}
		f := mustFormat(t, name)
		got := Mapping("A", f, order, ir.Real)
		if hand := stripComments(string(text)); got != hand {
			t.Errorf("%s differs from the generated mapping:\n--- generated\n%s--- %s\n%s", file, got, file, hand)
		}
	}
	for n := range want {
		t.Errorf("no mapping file for %s", n)
	}
}

var uniqueKey = regexp.MustCompile(`\{ (@unique )?([A-Za-z_0-9()]+) ->`)

// singletonKeys lists the singleton keys of the tensor definition in
// order, with a * on those marked @unique.
func singletonKeys(mapping string) []string {
	_, def, _ := strings.Cut(mapping, "CREATE TENSOR")
	var out []string
	for _, m := range uniqueKey.FindAllStringSubmatch(def, -1) {
		k := m[2]
		if m[1] != "" {
			k += "*"
		}
		out = append(out, k)
	}
	return out
}

func TestMappingUnique(t *testing.T) {
	cases := []struct {
		format string
		order  int
		want   string // singleton keys, outermost first; * = @unique
	}{
		{"csr", 2, "i1* i2*"},
		{"csc", 2, "i1 i2*"},
		{"dcsr", 2, "i1* i2*"},
		{"dcsc", 2, "i1 i2*"},
		{"coo", 2, "i1* i2*"},
		{"coo", 3, "i1* i2* i3*"},
		{"coo", 1, "i1*"},
		{"dense", 3, "i1* i2* i3*"},
		{"dd:1,0", 2, "i1 i2*"},
		{"sss:0,2,1", 3, "i1* i2 i3*"},
		{"sss:1,0,2", 3, "i1 i2* i3*"},
		{"sds:2,0,1", 3, "i1 i2 i3*"},
		{"hash", 3, "i1* i2* i3*"},
		{"trie", 2, "i1* i2*"},
	}
	for _, tc := range cases {
		m := Mapping("A", mustFormat(t, tc.format), tc.order, ir.Real)
		if got := strings.Join(singletonKeys(m), " "); got != tc.want {
			t.Errorf("%s order %d: singletons %q, want %q\n%s", tc.format, tc.order, got, tc.want, m)
		}
	}
}

func TestMappingPaperCSR(t *testing.T) {
	// Fig. 1 (c) with @unique (§5.2), up to the names of the variables
	// (row = i1, off = p2, col = i2).
	paper := `CREATE TENSOR C AS sum(<row,_> in 0:C_len1)
    { @unique row ->
      sum(<off,col> in C_idx2(C_pos2(row):C_pos2(row+1)))
        { @unique col -> C_val(off) }
    };`
	r := strings.NewReplacer("row", "i1", "off", "p2", "col", "i2")
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, " ", "")), "") }
	got := Mapping("C", mustFormat(t, "csr"), 2, ir.Real)
	_, def, _ := strings.Cut(got, "CREATE TENSOR")
	if norm("CREATE TENSOR"+def) != norm(r.Replace(paper)) {
		t.Errorf("CSR mapping\n%s\nis not the paper's\n%s", got, paper)
	}
	if !strings.Contains(got, "CREATE int ARRAY C_idx2(C_pos2(C_len1));") {
		t.Errorf("CSR mapping lacks the C_idx2 declaration:\n%s", got)
	}
}

func TestMappingNames(t *testing.T) {
	// A tensor called like a generated variable gets other variables; an
	// order the format cannot hold gives no mapping.
	m := Mapping("i1", mustFormat(t, "csr"), 2, ir.Int)
	if strings.Contains(m, "<i1,") || !strings.Contains(m, "CREATE int ARRAY i1_val") {
		t.Errorf("mapping of tensor i1:\n%s", m)
	}
	if m := Mapping("A", mustFormat(t, "csr"), 3, ir.Real); m != "" {
		t.Errorf("csr mapping of order 3: %q", m)
	}
}
