package harness

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/storel/storel/internal/atomicfile"
)

// pythonMissing says why a Python peer cannot run ("" when it can).
func (h *Harness) pythonMissing(system string) string {
	if h.pyMissing == nil {
		h.pyMissing = map[string]string{}
		for mod, sys := range map[string]string{"scipy": "scipy", "numpy": "numpy", "torch": "torch"} {
			r := Run(Exec{Args: []string{h.cfg.Python, "-c", "import " + mod}, Timeout: time.Minute})
			if r.Status != StatusOK {
				h.pyMissing[sys] = h.cfg.Python + " has no " + mod + " (run bench/install-peers.sh)"
			}
		}
		if _, err := os.Stat(h.cfg.PyPeer); err != nil {
			for _, s := range []string{"scipy", "numpy", "torch"} {
				h.pyMissing[s] = "no " + h.cfg.PyPeer
			}
		}
	}
	return h.pyMissing[system]
}

// tacoNumber is a number as C++ streams print doubles ("0.000123", "1.2e-05").
const tacoNumber = `([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)`

var (
	// "A file read: 0.109121 ms", "A pack:      151.231 ms"
	tacoTensorPhase = regexp.MustCompile(`^(\S+) (file read|pack):\s+` + tacoNumber + ` ms$`)
	// "Compile:  247.353 ms", "Assemble: 0.156563 ms", "Compute:  0.06 ms" (-time=1)
	tacoPhase = regexp.MustCompile(`^(Compile|Assemble|Compute):\s+` + tacoNumber + ` ms$`)
	// "  median: 0.000123", a statistic under "Compute time (ms)" (-time=N, N > 1)
	tacoStatistic = regexp.MustCompile(`^\s+(mean|stdev|median):\s+` + tacoNumber + `$`)
)

// parseTacoTimes maps the report of `taco -time=N` onto the harness's
// phases, in milliseconds. The binary prints, per input tensor, "NAME file
// read: T ms" (load) and "NAME pack: T ms" (build: packing into its
// format, including compiling the packing code); then "Compile: T ms",
// "Assemble: T ms" (each timed once) and, for N > 1, "Compute time (ms)"
// followed by mean, stdev and median lines, for N = 1 "Compute: T ms".
// The compute time taken is the median (the harness's statistic for
// every system); execute is assembly plus compute, as the paper counts
// TACO's execution time.
func parseTacoTimes(text string) map[string]float64 {
	t := map[string]float64{}
	inCompute := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r ")
		if m := tacoTensorPhase.FindStringSubmatch(line); m != nil {
			phase := "load"
			if m[2] == "pack" {
				phase = "build"
			}
			if v, err := strconv.ParseFloat(m[3], 64); err == nil {
				t[phase] += v
			}
			continue
		}
		if m := tacoPhase.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				t[strings.ToLower(m[1])] = v
			}
			inCompute = false
			continue
		}
		if line == "Compute time (ms)" {
			inCompute = true
			continue
		}
		if m := tacoStatistic.FindStringSubmatch(line); m != nil && inCompute {
			if m[1] == "median" {
				if v, err := strconv.ParseFloat(m[2], 64); err == nil {
					t["compute"] = v
				}
			}
			continue
		}
		inCompute = false
	}
	if c, ok := t["compute"]; ok {
		t["execute"] = c + t["assemble"]
	}
	return t
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(text))
}

// Describe returns a one-line description of this machine.
func Describe() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					cpu = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						mem = strconv.FormatFloat(kb/1024/1024, 'f', 0, 64) + " GiB RAM"
					}
				}
			}
		}
	}
	cores := strconv.Itoa(numCPU()) + " cores"
	host := "linux"
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "PRETTY_NAME=") {
				host = strings.Trim(strings.TrimPrefix(l, "PRETTY_NAME="), `"`)
			}
		}
	}
	return strings.Join([]string{cpu, cores, mem, host}, ", ")
}

// Versions reports the peers' versions, for the report.
func (h *Harness) Versions() map[string]string {
	v := map[string]string{}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		v["go"] = strings.TrimSpace(string(out))
	}
	r := Run(Exec{Args: []string{h.cfg.Python, "-c", `
import sys
print("python", sys.version.split()[0])
for m in ("numpy", "scipy", "torch"):
    try:
        print(m, __import__(m).__version__)
    except ImportError:
        print(m, "missing")`}, Timeout: time.Minute})
	for _, l := range strings.Split(r.Stdout, "\n") {
		if k, val, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
			v[k] = val
		}
	}
	if h.cfg.DuckDB != "" {
		r := Run(Exec{Args: []string{h.cfg.DuckDB, "--version"}, Timeout: time.Minute})
		v["duckdb"] = strings.TrimSpace(r.Stdout)
	}
	if h.cfg.Taco != "" {
		v["taco"] = h.cfg.Taco
		if real, err := filepath.EvalSymlinks(h.cfg.Taco); err == nil && real != h.cfg.Taco {
			v["taco"] += " (" + real + ")"
		}
	}
	if out, err := exec.Command("git", "-C", h.cfg.Repo, "rev-parse", "--short", "HEAD").Output(); err == nil {
		v["storel commit"] = strings.TrimSpace(string(out))
	}
	return v
}

func numCPU() int { return runtime.NumCPU() }

// StorelBuild identifies the storel binary at path built from repo: the
// commit, "+changes" when the tree differs from it outside bench/, and
// the first bytes of the binary's SHA-256.
func StorelBuild(repo, path string) string {
	id := "unknown commit"
	if out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output(); err == nil {
		id = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			id += "+changes"
		}
	}
	if b, err := os.ReadFile(path); err == nil {
		sum := sha256.Sum256(b)
		id += fmt.Sprintf(" binary %x", sum[:4])
	}
	return id
}
