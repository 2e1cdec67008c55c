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

// tacoTime matches TACO's -time report lines ("Compute: 1.23 ms", also
// with extra statistics); the first number after the phase is taken.
var tacoTime = regexp.MustCompile(`(?im)^\s*(compile|assemble|compute)\b[^0-9\n]*([0-9]+(?:\.[0-9]+)?)\s*(ms|us|s)?`)

// parseTacoTimes maps TACO's timing report onto the harness's phases: the
// paper counts assembly into TACO's execution time.
func parseTacoTimes(text string) map[string]float64 {
	t := map[string]float64{}
	for _, m := range tacoTime.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		v = toMS(v, m[3])
		switch strings.ToLower(m[1]) {
		case "compile":
			t["compile"] = v
		case "assemble":
			t["assemble"] = v
		case "compute":
			t["compute"] = v
		}
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
	return os.WriteFile(path, []byte(text), 0o644)
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
