package shard

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// ManifestFile and CombineFile are the names storel shard writes in each
// part's directory and in the output directory.
const (
	ManifestFile = "manifest.txt"
	CombineFile  = "combine.txt"
)

// Manifest is a part's program and inputs, as storel run --manifest reads
// them: one per line, "program FILE", "tensor NAME=FILE[:FORMAT]",
// "dims NAME=D1,...", "storage FILE", "data NAME=FILE", "value NAME=LITERAL",
// "query NAME", "stats FILE"; '#' starts a comment. Files are relative to
// the manifest's directory, so a part can be moved as a whole.
type Manifest struct {
	Program  string
	Tensors  []string
	Dims     []string
	Storages []string
	Data     []string // NAME=FILE
	Values   []string // NAME=LITERAL
	Query    string
	Stats    string
}

// Write writes m in the manifest's format, after a comment line.
func (m *Manifest) Write(w io.Writer, comment string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n", comment)
	fmt.Fprintf(bw, "program %s\n", m.Program)
	for _, list := range []struct {
		key  string
		vals []string
	}{{"tensor", m.Tensors}, {"dims", m.Dims}, {"storage", m.Storages}, {"data", m.Data}, {"value", m.Values}} {
		for _, v := range list.vals {
			fmt.Fprintf(bw, "%s %s\n", list.key, v)
		}
	}
	if m.Query != "" {
		fmt.Fprintf(bw, "query %s\n", m.Query)
	}
	if m.Stats != "" {
		fmt.Fprintf(bw, "stats %s\n", m.Stats)
	}
	return bw.Flush()
}

// ReadManifest reads a manifest and resolves its files against the
// manifest's directory.
func ReadManifest(path string) (*Manifest, error) {
	m := &Manifest{}
	dir := filepath.Dir(path)
	join := func(f string) string {
		if filepath.IsAbs(f) {
			return f
		}
		return filepath.Join(dir, f)
	}
	// joinAfterEq resolves the file of NAME=FILE[:FORMAT].
	joinAfterEq := func(v string) string {
		name, rest, _ := strings.Cut(v, "=")
		return name + "=" + join(rest)
	}
	err := readLines(path, func(line int, key, val string) error {
		switch key {
		case "tensor", "dims", "data", "value":
			if !strings.Contains(val, "=") {
				return fmt.Errorf("%s:%d: %s %q: want NAME=FILE or NAME=VALUE", path, line, key, val)
			}
		}
		switch key {
		case "program":
			m.Program = join(val)
		case "tensor":
			m.Tensors = append(m.Tensors, joinAfterEq(val))
		case "dims":
			m.Dims = append(m.Dims, val)
		case "storage":
			m.Storages = append(m.Storages, join(val))
		case "data":
			m.Data = append(m.Data, joinAfterEq(val))
		case "value":
			m.Values = append(m.Values, val)
		case "query":
			m.Query = val
		case "stats":
			m.Stats = join(val)
		default:
			return fmt.Errorf("%s:%d: unknown line %q (want program, tensor, dims, storage, data, value, query or stats)", path, line, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.Program == "" {
		return nil, fmt.Errorf("%s: no program line", path)
	}
	return m, nil
}

// readLines calls f with each non-comment line split at its first space.
func readLines(path string, f func(line int, key, val string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, val, _ := strings.Cut(text, " ")
		val = strings.TrimSpace(val)
		if val == "" {
			return fmt.Errorf("%s:%d: %q has no value", path, n, key)
		}
		if err := f(n, key, val); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// Plan is what storel combine reads from combine.txt: how many parts, the
// result's type and whether the parts are disjoint.
type Plan struct {
	Parts    int
	Type     ir.Type
	Disjoint bool
	Split    string // the tensor cut, for messages
	// Dims and MinDims size the result's modes as storel run sizes them
	// (storage.WriteOptions): the sizes given with --dims, and those known
	// from the whole program's declarations.
	Dims, MinDims []int64
}

// Write writes p as combine.txt.
func (p *Plan) Write(w io.Writer) error {
	how := "added key-wise"
	if p.Disjoint {
		how = "disjoint: concatenated"
	}
	_, err := fmt.Fprintf(w, "# storel combine: the results of %d parts (sums over slices of %s), %s\nparts %d\ndepth %d\nelem %s\ndisjoint %t\nsplit %s\n",
		p.Parts, p.Split, how, p.Parts, p.Type.Depth, p.Type.Base, p.Disjoint, p.Split)
	for _, d := range []struct {
		key  string
		dims []int64
	}{{"dims", p.Dims}, {"mindims", p.MinDims}} {
		if err == nil && len(d.dims) > 0 {
			_, err = fmt.Fprintf(w, "%s %s\n", d.key, JoinInts(d.dims))
		}
	}
	return err
}

// JoinInts writes sizes as a dims line holds them: D1,D2,...
func JoinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ReadPlan reads combine.txt.
func ReadPlan(path string) (*Plan, error) {
	p := &Plan{Parts: -1, Type: ir.Type{Depth: -1}}
	elem := ""
	err := readLines(path, func(line int, key, val string) error {
		var err error
		switch key {
		case "parts":
			p.Parts, err = strconv.Atoi(val)
		case "depth":
			p.Type.Depth, err = strconv.Atoi(val)
		case "elem":
			elem = val
		case "disjoint":
			p.Disjoint, err = strconv.ParseBool(val)
		case "split":
			p.Split = val
		case "dims":
			p.Dims, err = parseInts(val)
		case "mindims":
			p.MinDims, err = parseInts(val)
		default:
			return fmt.Errorf("%s:%d: unknown line %q", path, line, key)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %s %q: %v", path, line, key, val, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch elem {
	case "int":
		p.Type.Base = ir.Int
	case "real":
		p.Type.Base = ir.Real
	default:
		return nil, fmt.Errorf("%s: elem %q: want int or real", path, elem)
	}
	if p.Parts < 1 || p.Type.Depth < 0 {
		return nil, fmt.Errorf("%s: needs parts (at least 1) and depth lines", path)
	}
	return p, nil
}

// PartDir is the directory of part p under the output directory.
func PartDir(out string, p int) string {
	return filepath.Join(out, fmt.Sprintf("part-%03d", p))
}

// ResultFile is where a part's result goes for storel combine.
const ResultFile = "result.tns"

// WriteObjects writes a part's physical objects into dir: arrays as .npy
// files listed as data lines of m, scalars as value lines.
func WriteObjects(dir string, st storage.Store, m *Manifest) error {
	for _, name := range sortedNames(st) {
		switch o := st[name].(type) {
		case *storage.Scalar:
			v := strconv.FormatInt(o.I, 10)
			if o.Elem == ir.Real {
				v = strconv.FormatFloat(o.F, 'g', -1, 64)
			}
			m.Values = append(m.Values, name+"="+v)
		case *storage.Array:
			file := name + ".npy"
			if err := atomicfile.Write(filepath.Join(dir, file), func(w io.Writer) error {
				return storage.WriteNPY(w, []int64{int64(o.Len())}, o.I, o.F)
			}); err != nil {
				return err
			}
			m.Data = append(m.Data, name+"="+file)
		default:
			return fmt.Errorf("%s: a %s cannot be written into a part", name, o.Kind())
		}
	}
	return nil
}
