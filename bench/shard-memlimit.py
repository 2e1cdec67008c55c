#!/usr/bin/python3
"""Inputs larger than a run's memory limit, through storel shard.

    bench/shard-memlimit.py [--storel PATH] [--out FILE]

For each case: the input's size in memory (the `memory: inputs` line of
`storel run --timings`), then limits of 1/2 and 1/4 of it. At each limit,
whether `storel run --memory-limit L` runs the whole program, and the fewest
parts (2, 4, 8, 16) at which `storel run --manifest --memory-limit L` runs
every part; the combined result is checked byte for byte against the
unlimited run. Needs a storel whose run has --memory-limit.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
import shardcases  # noqa: E402

ROOT = shardcases.ROOT


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--storel", help="the storel binary (default: built from this checkout)")
    ap.add_argument("--note", default="", help="a line saying which build --storel is")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "shard", "MEMLIMIT.md"))
    o = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="shard-memlimit-")
    storel = o.storel
    if storel is None:
        storel = os.path.join(tmp, "storel")
        subprocess.run(["go", "build", "-o", storel, "./cmd/storel"], cwd=ROOT, check=True)
    code, err = run([storel, "run", os.path.join(ROOT, "examples", "summmm.sdql"), "--memory-limit", "none"])
    if "memory-limit" in err and "not defined" in err:
        sys.exit("shard-memlimit: this storel's run has no --memory-limit")
    cases = shardcases.cases(tmp, 7)
    rows = []
    for name, args in cases:
        whole = os.path.join(tmp, "whole.tns")
        code, err = run([storel, "run"] + args + ["--timings", "--memory-limit", "none", "--output", whole])
        if code != 0:
            sys.exit("shard-memlimit: %s: %s" % (name, err))
        size = float(re.search(r"memory: inputs ([0-9.]+) MiB", err).group(1))
        want = open(whole, "rb").read()
        for frac in (2, 4):
            limit = "%dM" % max(1, int(size / frac))
            code, err = run([storel, "run"] + args + ["--memory-limit", limit, "--output", os.path.join(tmp, "limited.tns")])
            whole_ok = "runs" if code == 0 else "refused: " + err.strip().split("\n")[-1][len("storel: "):][:70] + "..."
            fewest = None
            for n in (2, 4, 8, 16):
                out = os.path.join(tmp, "parts-%d" % n)
                shutil.rmtree(out, ignore_errors=True)
                code, err = run([storel, "shard"] + args + ["--parts", str(n), "--output", out])
                if code != 0:
                    sys.exit("shard-memlimit: %s: shard: %s" % (name, err))
                ok = all(run([storel, "run", "--manifest", os.path.join(out, "part-%03d" % k, "manifest.txt"), "--memory-limit", limit,
                              "--output", os.path.join(out, "part-%03d" % k, "result.tns")])[0] == 0 for k in range(n))
                if ok:
                    got = os.path.join(tmp, "combined.tns")
                    code, err = run([storel, "combine", out, "--output", got])
                    if code != 0 or open(got, "rb").read() != want:
                        sys.exit("shard-memlimit: %s, %d parts: the combined result differs from storel run's" % (name, n))
                    fewest = n
                    break
            rows.append((name, size, limit, whole_ok, fewest))
            print(rows[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout.strip()
    os.makedirs(os.path.dirname(o.out), exist_ok=True)
    with open(o.out, "w") as f:
        f.write("# Inputs larger than the memory limit, through storel shard\n\n")
        f.write("`bench/shard-memlimit.py%s` (checkout %s). Inputs: the `memory: inputs` figure of the unlimited run. Every\n"
                "combined result was byte-identical to the unlimited run's.\n\n" % (" --storel " + o.storel if o.storel else "", commit))
        if o.note:
            f.write(o.note + "\n\n")
        f.write("| case | inputs (MiB) | --memory-limit | whole run | fewest parts that all run |\n|---|---:|---:|---|---:|\n")
        for name, size, limit, whole_ok, fewest in rows:
            f.write("| %s | %.1f | %s | %s | %s |\n" % (name, size, limit, whole_ok, fewest or "none up to 16"))
    shutil.rmtree(tmp, ignore_errors=True)
    print("wrote", o.out)


if __name__ == "__main__":
    main()
