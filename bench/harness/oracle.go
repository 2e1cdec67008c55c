package harness

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/storel/storel"
	"github.com/storel/storel/storage"
)

// Oracle runs a program's naive plan in the reference interpreter
// (package eval, through storel's Go API: PlanNaive on EngineInterp),
// whatever `storel run` does by default, and writes its answer as
// .tns. Flags are storel run's --tensor, --dims, --data and --output. The
// harness checks storel's answer against it on small inputs.
func Oracle(args []string) error {
	fs := flag.NewFlagSet("oracle", flag.ContinueOnError)
	var tensors, dims, data multi
	fs.Var(&tensors, "tensor", "NAME=FILE[:FORMAT]")
	fs.Var(&dims, "dims", "NAME=D1,D2,...")
	fs.Var(&data, "data", "NAME=FILE|VALUE")
	output := fs.String("output", "", "answer file (.tns)")
	var program string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if program != "" {
			return fmt.Errorf("more than one program: %s, %s", program, fs.Arg(0))
		}
		program, args = fs.Arg(0), fs.Args()[1:]
	}
	if program == "" || *output == "" {
		return errors.New("usage: oracle PROGRAM.sdql --tensor NAME=FILE:FORMAT ... --output FILE.tns")
	}
	dimsOf, err := dims.parseDims()
	if err != nil {
		return err
	}
	w := storel.NewWorkspace()
	for _, t := range tensors {
		name, rest, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("--tensor %s: want NAME=FILE[:FORMAT]", t)
		}
		// Formats hold ':' themselves (ss:1,0): the file is the shortest
		// prefix that exists.
		path, format := rest, ""
		for i := 0; i < len(rest); i++ {
			if rest[i] != ':' {
				continue
			}
			if _, err := os.Stat(rest[:i]); err == nil {
				path, format = rest[:i], rest[i+1:]
				break
			}
		}
		if err := w.LoadTensor(name, path, format, storage.ReadOptions{Dims: dimsOf[name]}); err != nil {
			return err
		}
	}
	for _, d := range data {
		name, spec, _ := strings.Cut(d, "=")
		if err := w.SetData(name, spec); err != nil {
			return err
		}
	}
	text, err := os.ReadFile(program)
	if err != nil {
		return err
	}
	p, err := w.Compile(program, text, "")
	if err != nil {
		return err
	}
	res, err := p.Run(storel.RunOptions{Plan: storel.PlanNaive, Engine: storel.EngineInterp})
	if err != nil {
		return err
	}
	if err := res.WriteFile(*output, "tns", storage.WriteOptions{}); err != nil {
		return err
	}
	// A constant "execute" line lets the harness treat the oracle like the
	// other systems; its speed is not a measurement.
	fmt.Fprintln(os.Stderr, "timing: execute 0 ms")
	return nil
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// parseDims reads --dims NAME=D1,D2,... flags into sizes per tensor.
func (m multi) parseDims() (map[string][]int64, error) {
	dimsOf := map[string][]int64{}
	for _, d := range m {
		name, list, _ := strings.Cut(d, "=")
		for _, s := range strings.Split(list, ",") {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--dims %s: %v", d, err)
			}
			dimsOf[name] = append(dimsOf[name], n)
		}
	}
	return dimsOf, nil
}
