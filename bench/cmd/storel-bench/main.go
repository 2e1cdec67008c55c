// Command storel-bench reproduces the paper's experiments (§6) against
// real peers and writes REPORT.md with tables and plots.
//
//	storel-bench [--quick] [--only e2e,sweep,ablation,optimizer,overhead,threads,variants,cpd] [flags]
//	storel-bench report [--out DIR]       rewrite REPORT.md from DIR/results.json
//	                                      (and README.md's table, for the default DIR)
//	storel-bench oracle PROGRAM [storel run flags]   the reference interpreter
//	storel-bench handloop --kernel K [flags]         a kernel's hand-written Go loop (variants)
//
// bench/run.sh builds everything and calls it; see bench/README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storel/storel/bench/harness"
)

// subcommands are the systems storel-bench runs as processes of its own.
var subcommands = map[string]func([]string) error{"handloop": harness.HandLoop, "oracle": harness.Oracle}

func main() {
	if len(os.Args) > 1 {
		if sub, ok := subcommands[os.Args[1]]; ok {
			if err := sub(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "storel-bench %s: %v\n", os.Args[1], err)
				os.Exit(1)
			}
			return
		}
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "storel-bench: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	reportOnly := false
	if len(args) > 0 && args[0] == "report" {
		reportOnly, args = true, args[1:]
	}
	fs := flag.NewFlagSet("storel-bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "small sizes, a couple of minutes: proves the harness works")
	only := fs.String("only", strings.Join(harness.AllExperiments, ","), "experiments to run, comma-separated")
	repo := fs.String("repo", "", "storel's repository (default: found from the working directory)")
	dataDir := fs.String("data-dir", "", "real matrices and tensors (default: REPO/../shared/data)")
	out := fs.String("out", "", "results directory (default: REPO/bench/results, or REPO/bench/results/quick with --quick)")
	storel := fs.String("storel", "", "storel binary (default: REPO/bench/bin/storel, built if missing)")
	python := fs.String("python", "/usr/bin/python3", "python with SciPy, NumPy and PyTorch")
	duck := fs.String("duckdb", "", "duckdb-peer binary (default: REPO/bench/bin/duckdb-peer if built)")
	taco := fs.String("taco", "", "taco binary (default: REPO/bench/bin/taco from install-peers.sh --taco, else taco on PATH, if any)")
	repeat := fs.Int("repeat", 5, "runs per measurement; the median is reported")
	rounds := fs.Int("rounds", 3, "e2e, variants and threads: run each case's systems this many times in turn; the median over rounds is reported")
	timeout := fs.Duration("timeout", 0, "per-run time limit (default 10m, 60s with --quick)")
	sweepTimeout := fs.Duration("sweep-timeout", time.Minute, "per-run time limit of the sweep (at most --timeout)")
	oracleTimeout := fs.Duration("oracle-timeout", 0, "time limit of a reference-interpreter run (default 2m, 30s with --quick)")
	oracleMax := fs.Int64("oracle-max-nnz", 0, "run the reference interpreter on inputs with at most this many non-zeros (default 50000, 100000 with --quick)")
	threads := fs.String("threads", "1,2", "thread counts of the scaling experiment")
	maxMem := fs.Float64("max-mem-gb", float64(harness.DefaultMaxRSS())/1e9, "kill a run whose resident memory passes this many GB (0: no limit)")
	kernels := fs.String("kernels", "", "only these kernels (mmm,summmm,batax,spmv,ttm,mttkrp; variants also sddmm,ttv; cpd is mttkrp), comma-separated")
	inputs := fs.String("inputs", "", "only these real inputs (e.g. cnr-2000,wordnet) in e2e, threads and cpd; the inputs of variants (default bcsstk16,orghs), comma-separated")
	merge := fs.Bool("merge", false, "keep OUT/results.json's other measurements; replace only the cases run again")
	factorDensity := fs.Float64("factor-density", 1.0/32, "density of generated right-hand factors (paper: 2^-5)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if *repo == "" {
		if *repo, err = findRepo(); err != nil {
			return err
		}
	}
	if *out == "" {
		*out = filepath.Join(*repo, "bench", "results")
		if *quick {
			*out = filepath.Join(*out, "quick")
		}
	}
	// The README's headline table follows the full run's results.
	readme := func() error {
		if abs(*out) != abs(filepath.Join(*repo, "bench", "results")) {
			return nil
		}
		return harness.UpdateReadme(filepath.Join(*repo, "README.md"), *out)
	}
	if reportOnly {
		if err := harness.WriteReportFromJSON(*out); err != nil {
			return err
		}
		return readme()
	}
	if *dataDir == "" {
		*dataDir = filepath.Join(*repo, "..", "shared", "data")
	}
	if *timeout == 0 {
		*timeout = 10 * time.Minute
		if *quick {
			*timeout = time.Minute
		}
	}
	if *oracleTimeout == 0 {
		*oracleTimeout = 2 * time.Minute
		if *quick {
			*oracleTimeout = 30 * time.Second
		}
	}
	if *oracleMax == 0 {
		*oracleMax = 50000
		if *quick {
			*oracleMax = 100000
		}
	}
	if *storel == "" {
		*storel = filepath.Join(*repo, "bench", "bin", "storel")
		if _, err := os.Stat(*storel); err != nil {
			fmt.Fprintf(os.Stderr, "building %s\n", *storel)
			cmd := exec.Command("go", "build", "-o", *storel, "./cmd/storel")
			cmd.Dir, cmd.Stdout, cmd.Stderr = *repo, os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("building storel: %v", err)
			}
		}
	}
	if *duck == "" {
		p := filepath.Join(*repo, "bench", "bin", "duckdb-peer")
		if _, err := os.Stat(p); err == nil {
			*duck = p
		}
	}
	if *taco == "" {
		if p := filepath.Join(*repo, "bench", "bin", "taco"); isExecutable(p) {
			*taco = p // built by install-peers.sh --taco
		} else if p, err := exec.LookPath("taco"); err == nil {
			*taco = p
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var ts []int
	for _, s := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--threads %s: want positive counts separated by commas", *threads)
		}
		ts = append(ts, n)
	}
	var exps []string
	for _, e := range strings.Split(*only, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !contains(harness.AllExperiments, e) {
			return fmt.Errorf("--only: unknown experiment %q (have %s)", e, strings.Join(harness.AllExperiments, ", "))
		}
		exps = append(exps, e)
	}
	tmp := filepath.Join(*out, "tmp")
	cfg := harness.Config{
		Quick: *quick, Repo: abs(*repo), DataDir: abs(*dataDir), OutDir: abs(*out), TmpDir: abs(tmp),
		Storel: abs(*storel), Self: self, Python: *python, PyPeer: filepath.Join(abs(*repo), "bench", "peers", "pypeer.py"),
		DuckDB: *duck, Taco: *taco, Experiments: exps, Repeat: *repeat, Rounds: *rounds, Timeout: *timeout, SweepTimeout: *sweepTimeout,
		OracleTimeout: *oracleTimeout, OracleMaxNNZ: *oracleMax, Threads: ts, FactorDensity: *factorDensity,
		Kernels: splitList(*kernels), Inputs: splitList(*inputs), Merge: *merge, MaxRSS: int64(*maxMem * 1e9),
		Machine: harness.Describe(), StorelBuild: harness.StorelBuild(abs(*repo), abs(*storel)), Log: os.Stderr,
	}
	h := harness.New(cfg)
	start := time.Now()
	runErr := h.RunAll()
	// A run that stopped early, or lacked real inputs, leaves the report
	// in OutDir as it was.
	complete := runErr == nil && len(h.Missing) == 0
	dir, err := h.WriteReport(time.Since(start), complete)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", filepath.Join(dir, "REPORT.md"))
	if runErr == nil && !complete {
		fmt.Fprintf(os.Stderr, "%s lacks %s: the report covers the rest and is left in %s; %s is unchanged\n",
			cfg.DataDir, strings.Join(h.Missing, ", "), dir, cfg.OutDir)
	}
	if complete && !cfg.Quick {
		if err := readme(); err != nil {
			return err
		}
	}
	if runErr != nil {
		return fmt.Errorf("%v (the report of the runs so far is in %s; %s is left as it was)", runErr, dir, cfg.OutDir)
	}
	if len(h.Failures) > 0 {
		for _, f := range h.Failures {
			fmt.Fprintln(os.Stderr, "FAILED:", f)
		}
		return errors.New("some runs failed (a wrong answer or a broken reference run); see REPORT.md")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// findRepo walks up from the working directory to storel's go.mod, else
// from this binary's own directory (bench/bin in the repository).
func findRepo() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.Contains(string(b), "module github.com/storel/storel\n") {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("cannot find storel's repository above the working directory or this program (give --repo)")
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// isExecutable reports whether path is a file that can be run.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode().Perm()&0o111 != 0
}
