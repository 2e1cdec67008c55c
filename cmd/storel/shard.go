package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/storel/storel"
	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/shard"
	"github.com/storel/storel/storage"
)

// applyManifest fills o's program and inputs from run --manifest FILE (a
// part written by storel shard); the command line's flags come after.
func (o *options) applyManifest() error {
	m, err := shard.ReadManifest(o.manifest)
	if err != nil {
		return err
	}
	if o.program != "" {
		return misuse("run --manifest %s names the program; do not give %s too", o.manifest, o.program)
	}
	o.program = m.Program
	o.tensors = append(m.Tensors, o.tensors...)
	for _, d := range m.Dims {
		if err := o.addDims(d); err != nil {
			return err
		}
	}
	o.storages = append(m.Storages, o.storages...)
	o.data = append(append(m.Data, m.Values...), o.data...)
	if o.query == "" {
		o.query = m.Query
	}
	if o.stats == "" {
		o.stats = m.Stats
	}
	return nil
}

// cmdShard writes the parts of a program's work (see package shard) and
// the combine step's description into the directory --output.
func cmdShard(o *options, stdout io.Writer) error {
	if o.output == "" {
		return misuse("shard needs --output DIR, the directory to write the parts into")
	}
	if o.parts < 1 {
		return misuse("--parts %d: want at least 1", o.parts)
	}
	if entries, err := os.ReadDir(o.output); err == nil && len(entries) > 0 {
		return fmt.Errorf("--output %s: the directory is not empty (storel shard writes a new one, overwriting nothing)", o.output)
	}
	// The tensors are read here, not through the workspace, and not held:
	// a first pass counts each one's entries per mode-0 coordinate and
	// keeps only its header (dimensions, field), which is all the program
	// needs to compile; a second pass sends the split tensor's entries to
	// the parts' files. So storel shard holds one part at a time.
	w := storel.NewWorkspace()
	var ins []shard.Input
	sizes := map[string]int{}
	counts := map[string][]int64{}  // tensor -> entries per mode-0 coordinate
	files := map[string][2]string{} // tensor -> file, format as given
	for _, t := range o.tensors {
		name, rest, ok := strings.Cut(t, "=")
		if !ok || name == "" || rest == "" {
			return misuse("--tensor %s: want NAME=FILE[:FORMAT]", t)
		}
		path, format := splitFileFormat(rest)
		var rows []int64
		n := 0
		count := func(coords []int64, _ float64) bool {
			for int64(len(rows)) <= coords[0] {
				rows = append(rows, 0)
			}
			rows[coords[0]]++
			n++
			return false
		}
		c, err := storage.ReadTensorFile(path, storage.ReadOptions{Dims: o.dims[name], Progress: storage.TerminalProgress(), Keep: count})
		if err != nil {
			return err
		}
		if format == "" {
			format = storel.DefaultFormat(c.Order())
		}
		if err := w.AddTensor(name, c, format); err != nil {
			return err
		}
		first, _, _ := strings.Cut(format, "|")
		f, err := storage.ParseFormat(first)
		if err == nil {
			f, err = f.ForOrder(c.Order())
		}
		if err != nil {
			return fmt.Errorf("tensor %s: %v", name, err)
		}
		ins = append(ins, shard.Input{Name: name, COO: c, Format: f})
		sizes[name], counts[name] = n, rows
		files[name] = [2]string{path, format}
	}
	for _, s := range o.storages {
		text, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		w.AddSource(s, text)
	}
	for _, d := range o.data {
		name, spec, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			return misuse("--data %s: want NAME=FILE or NAME=VALUE", d)
		}
		if err := w.SetData(name, spec); err != nil {
			return fmt.Errorf("--data %s: %v", d, err)
		}
	}
	text, err := os.ReadFile(o.program)
	if err != nil {
		return err
	}
	p, err := w.Compile(o.program, text, o.query)
	if err != nil {
		return err
	}
	prog := p.IR()
	if err := o.resolveDims(p); err != nil {
		return err
	}
	if err := o.checkOutDims(p); err != nil {
		return err
	}
	for _, d := range o.data {
		name, _, _ := strings.Cut(d, "=")
		if a, ok := p.Variants[0].Store[name].(*storage.Array); ok {
			sizes[name] = a.Len()
		}
	}
	copyOK := map[string]bool{}
	for _, c := range o.copies {
		if _, ok := sizes[c]; !ok {
			return misuse("--copy %s: no --tensor or --data array of that name", c)
		}
		copyOK[c] = true
	}
	split, err := shard.Analyze(prog, o.query, ins, sizes, copyOK)
	if err != nil {
		return fmt.Errorf("%s cannot be split: %v", o.program, err)
	}
	var in shard.Input
	for _, x := range ins {
		if x.Name == split.Tensor {
			in = x
		}
	}
	if format := files[in.Name][1]; strings.Contains(format, "|") {
		return misuse("--tensor %s: %s lists several formats; give one for the tensor storel shard splits", in.Name, format)
	}

	// What every part shares: the program and copies of the other inputs.
	common := shard.Manifest{Program: "program.sdql", Query: o.query}
	copies := map[string]string{"program.sdql": o.program} // name in a part -> source
	add := func(src, name string) string {
		copies[name] = src
		return name
	}
	for _, x := range ins {
		if x.Name == in.Name {
			continue
		}
		path, format := files[x.Name][0], files[x.Name][1]
		common.Tensors = append(common.Tensors, x.Name+"="+add(path, "in-"+x.Name+"-"+filepath.Base(path))+":"+format)
		if d := o.dims[x.Name]; d != nil {
			common.Dims = append(common.Dims, x.Name+"="+shard.JoinInts(d))
		}
	}
	for i, s := range o.storages {
		common.Storages = append(common.Storages, add(s, fmt.Sprintf("storage-%d-%s", i, filepath.Base(s))))
	}
	for _, d := range o.data {
		name, spec, _ := strings.Cut(d, "=")
		if decl := prog.Decl(name); decl != nil && decl.Kind == ir.ObjScalar {
			common.Values = append(common.Values, name+"="+spec)
			continue
		}
		common.Data = append(common.Data, name+"="+add(spec, "data-"+name+"-"+filepath.Base(spec)))
	}
	if o.stats != "" {
		common.Stats = add(o.stats, "stats-"+filepath.Base(o.stats))
	}

	if err := os.MkdirAll(o.output, 0o755); err != nil {
		return err
	}
	cuts := shard.CutsOf(counts[in.Name], in.COO.Dims[0], o.parts)
	for k := 0; k < o.parts; k++ {
		if err := os.Mkdir(shard.PartDir(o.output, k), 0o755); err != nil {
			return err
		}
	}
	spill := filepath.Join(o.output, "entries-%03d.bin")
	defer func() {
		// Scratch files: readSpill removes each as it is read; a failure
		// before that must not leave them among the parts.
		for k := 0; k < o.parts; k++ {
			os.Remove(fmt.Sprintf(spill, k))
		}
	}()
	if err := spillParts(files[in.Name][0], o.dims[in.Name], cuts, spill); err != nil {
		return err
	}
	for k := 0; k < o.parts; k++ {
		dir := shard.PartDir(o.output, k)
		for name, src := range copies {
			if err := linkOrCopy(src, filepath.Join(dir, name)); err != nil {
				return err
			}
		}
		part, err := readSpill(fmt.Sprintf(spill, k), in.COO)
		if err != nil {
			return err
		}
		st, mapping, err := shard.Part(shard.Input{Name: in.Name, COO: part, Format: in.Format}, cuts[k], cuts[k+1])
		if err != nil {
			return err
		}
		m := common
		m.Tensors = append([]string(nil), common.Tensors...)
		m.Data = append([]string(nil), common.Data...)
		m.Values = append([]string(nil), common.Values...)
		mapFile := in.Name + ".part.sdql"
		comment := fmt.Sprintf("// Rows %d..%d (counted from 0) of %s, stored in %s; the rest of %s is in the other parts.\n", cuts[k], cuts[k+1]-1, in.Name, in.Format.Name, in.Name)
		if err := os.WriteFile(filepath.Join(dir, mapFile), []byte(comment+mapping), 0o644); err != nil {
			return err
		}
		m.Storages = append([]string{mapFile}, common.Storages...)
		if err := shard.WriteObjects(dir, st, &m); err != nil {
			return err
		}
		entries := part.Len()
		what := fmt.Sprintf("part %d of %d: %s rows %d..%d counted from 0 (%d entries); run with storel run --manifest %s", k+1, o.parts, in.Name, cuts[k], cuts[k+1]-1, entries, shard.ManifestFile)
		if err := atomicfile.Write(filepath.Join(dir, shard.ManifestFile), func(w io.Writer) error { return m.Write(w, what) }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s rows %d..%d, %d entries\n", dir, in.Name, cuts[k], cuts[k+1]-1, entries)
	}
	plan := &shard.Plan{Parts: o.parts, Type: split.Type, Disjoint: split.Disjoint, Split: in.Name, Dims: o.outDims, MinDims: p.Dims()}
	if err := atomicfile.Write(filepath.Join(o.output, shard.CombineFile), plan.Write); err != nil {
		return err
	}
	how := "adds their results key-wise"
	if split.Disjoint {
		how = "concatenates their results (the split key is an output key)"
	}
	fmt.Fprintf(stdout, "run each part: storel run --manifest DIR/%s --output DIR/%s\nthen: storel combine %s --output FILE (%s)\n", shard.ManifestFile, shard.ResultFile, o.output, how)
	return nil
}

// spillParts reads the tensor file path once and appends each entry to the
// file spill (a format with the part's number) of the part whose cut holds
// its mode-0 coordinate, as little-endian int64 coordinates and float64
// value.
func spillParts(path string, dims []int64, cuts []int64, spill string) error {
	n := len(cuts) - 1
	files := make([]*os.File, n)
	bufs := make([]*bufio.Writer, n)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for k := range files {
		f, err := os.Create(fmt.Sprintf(spill, k))
		if err != nil {
			return err
		}
		files[k], bufs[k] = f, bufio.NewWriterSize(f, 1<<16)
	}
	var rec []byte
	var werr error
	send := func(coords []int64, v float64) bool {
		k := sort.Search(n, func(k int) bool { return cuts[k+1] > coords[0] })
		rec = rec[:0]
		for _, x := range coords {
			rec = binary.LittleEndian.AppendUint64(rec, uint64(x))
		}
		rec = binary.LittleEndian.AppendUint64(rec, math.Float64bits(v))
		if _, err := bufs[k].Write(rec); err != nil && werr == nil {
			werr = err
		}
		return false
	}
	if _, err := storage.ReadTensorFile(path, storage.ReadOptions{Dims: dims, Progress: storage.TerminalProgress(), Keep: send}); err != nil {
		return err
	}
	for k, b := range bufs {
		if err := b.Flush(); err != nil && werr == nil {
			werr = err
		}
		if err := files[k].Close(); err != nil && werr == nil {
			werr = err
		}
		files[k] = nil
	}
	if werr != nil {
		return fmt.Errorf("writing the parts of %s: %v", path, werr)
	}
	return nil
}

// readSpill reads a part's entries written by spillParts, with header's
// dimensions and field, and removes the file.
func readSpill(path string, header *storage.COO) (*storage.COO, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer os.Remove(path)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	order := header.Order()
	rec := make([]byte, 8*(order+1))
	n := int(info.Size()) / len(rec)
	c := &storage.COO{Dims: header.Dims, Field: header.Field, Coords: make([][]int64, order), Vals: make([]float64, n)}
	for m := range c.Coords {
		c.Coords[m] = make([]int64, n)
	}
	r := bufio.NewReaderSize(f, 1<<16)
	for e := 0; e < n; e++ {
		if _, err := io.ReadFull(r, rec); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		for m := 0; m < order; m++ {
			c.Coords[m][e] = int64(binary.LittleEndian.Uint64(rec[8*m:]))
		}
		c.Vals[e] = math.Float64frombits(binary.LittleEndian.Uint64(rec[8*order:]))
	}
	return c, nil
}

// linkOrCopy makes dst hold src's bytes: a hard link where it can, a copy
// elsewhere (another file system).
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copying %s to %s: %v", src, dst, err)
	}
	return nil
}

// cmdCombine adds the parts' results in DIR (see storel shard) into
// --output (default .tns on standard output).
func cmdCombine(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("combine", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.String("output", "", "")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return misuse("combine: %v", err)
	}
	if len(positional) != 1 {
		return misuse("combine takes one directory written by storel shard, got %d arguments", len(positional))
	}
	dir := positional[0]
	plan, err := shard.ReadPlan(filepath.Join(dir, shard.CombineFile))
	if err != nil {
		return err
	}
	format := "tns"
	if *output != "" {
		if format, err = outputFormat(*output); err != nil {
			return err
		}
	}
	for k := 0; k < plan.Parts; k++ {
		if _, err := os.Stat(filepath.Join(shard.PartDir(dir, k), shard.ResultFile)); err != nil {
			return fmt.Errorf("part %d has no result: %v (run storel run --manifest %s --output %s)", k+1, err,
				filepath.Join(shard.PartDir(dir, k), shard.ManifestFile), filepath.Join(shard.PartDir(dir, k), shard.ResultFile))
		}
	}
	open := func(k int) (shard.Source, error) {
		return shard.OpenTNS(filepath.Join(shard.PartDir(dir, k), shard.ResultFile), plan.Type)
	}
	if err := storage.CheckWritable(format, plan.Type, plan.Dims); err != nil {
		return fmt.Errorf("--output %s: %v", orStdout(*output), err)
	}
	write := func(w io.Writer) error { return shard.Write(w, format, plan, open) }
	if *output == "" {
		err = write(stdout)
	} else {
		err = atomicfile.Write(*output, write) // a failed combine leaves no partial result
	}
	if err != nil {
		return fmt.Errorf("combining %s: %v", dir, err)
	}
	return nil
}
