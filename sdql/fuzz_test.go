package sdql

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storel/storel/ir"
)

// FuzzCompile feeds arbitrary text to the front end. It must never panic;
// a failure must be an ErrorList of positioned errors; a success must
// print as a program that compiles again to the same text.
//
//	go test ./sdql -run '^$' -fuzz FuzzCompile -fuzztime 3m
func FuzzCompile(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Compile(Source{Name: "fuzz.sdql", Text: []byte(text)})
		checkErrorList(t, err)
		if _, err := ParseFile(Source{Name: "fuzz.sdql", Text: []byte(text)}); err == nil {
			// Parsing succeeded: the printed tree must parse to the same tree.
			f, _ := ParseFile(Source{Name: "fuzz.sdql", Text: []byte(text)})
			again, err := ParseFile(Source{Name: "again.sdql", Text: []byte(Format(f))})
			if err != nil || formatGrouped(again) != formatGrouped(f) {
				t.Fatalf("Format does not round-trip:\n%s\n%v", Format(f), err)
			}
		}
		env := map[string]ir.Type{"A": {Depth: 2, Base: ir.Real}, "x": ir.IntType}
		_, err = CompileExpr("fuzz.sdql", []byte(text), env)
		checkErrorList(t, err)
		if p == nil {
			return
		}
		printed := FormatProgram(p)
		q, err := Compile(Source{Name: "again.sdql", Text: []byte(printed)})
		if err != nil {
			t.Fatalf("printed program does not compile:\n%s\n%v", printed, err)
		}
		if again := FormatProgram(q); again != printed {
			t.Fatalf("printed program changed:\n%s\nbecame\n%s", printed, again)
		}
	})
}

func checkErrorList(t *testing.T, err error) {
	if err == nil {
		return
	}
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error is not a non-empty ErrorList: %#v", err)
	}
	for _, e := range list {
		if !e.Pos.IsValid() || e.Msg == "" {
			t.Fatalf("error without position or message: %#v", e)
		}
	}
	_ = err.Error()
}

// fuzzSeeds are the inputs of the golden files, plus a few fragments.
func fuzzSeeds(f *testing.F) []string {
	seeds := []string{
		"", ";", "CREATE", "sum(<", "merge(<a,b,c> in <", "{ @unique (", "if (a) b",
		"CREATE TENSOR T AS {} + { 1 -> 2 };", "let a = 1, b = 2 in a + b",
	}
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, path := range paths {
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			continue
		}
		content, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, block := range strings.Split(string(content), "\n\n") {
			lines := strings.Split(block, "\n")
			var input []string
			for i, l := range lines {
				if l == "----" || i == 0 {
					if l == "----" {
						break
					}
					continue // the command line
				}
				if strings.HasPrefix(l, "=== ") {
					continue
				}
				input = append(input, l)
			}
			seeds = append(seeds, strings.Join(input, "\n"))
		}
	}
	return seeds
}
