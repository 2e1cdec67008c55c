#!/usr/bin/python3
"""The cost of sharding on one machine: storel run against storel shard +
storel run --manifest on each part + storel combine, at 1, 2 and 4 parts,
and against dist/storel-dask on a local cluster.

    bench/shard-overhead.py [--rounds 5] [--out bench/results/shard/REPORT.md]

Each round runs every configuration of a case in turn (plain run first),
so a busy minute of a shared machine falls on all of them; the report gives
medians over the rounds of wall-clock time (each storel process from start
to exit), and of the execute phase (--timings): the plain run's against the
sum of the parts'. Parts run one after another here: the figures are the
work sharding adds, not a speed-up (that needs several machines).
All inputs are integer-valued, so every combined result is checked to be
byte-identical to the plain run's.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
import shardcases  # noqa: E402
import time

ROOT = shardcases.ROOT


def timed(cmd):
    """Runs cmd; returns its wall time, its execute phase (--timings) and
    its peak resident memory (MiB), which GNU time reports: a process
    forked from this one would count this interpreter's pages too."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "maxrss-kib %M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    wall = time.perf_counter() - start
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        sys.exit("shard-overhead: %s: %s" % (" ".join(cmd), err))
    m = re.search(r"timing: execute ([0-9.]+) ms", err)
    rss = re.search(r"maxrss-kib (\d+)", err)
    return wall, float(m.group(1)) / 1000 if m else 0.0, int(rss.group(1)) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "shard", "REPORT.md"))
    ap.add_argument("--dask", action="store_true", help="also time dist/storel-dask on a local cluster of 2 processes")
    o = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="shard-overhead-")
    storel = os.path.join(tmp, "storel")
    subprocess.run(["go", "build", "-o", storel, "./cmd/storel"], cwd=ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout.strip()
    cases = shardcases.cases(tmp, 5)
    parts_list = [1, 2, 4]
    flags = ["--threads", "1", "--timings"]
    rows = []
    for name, args in cases:
        res = {k: [] for k in ["run", "run-exec", "run-rss"] + ["%s-%d" % (w, n) for n in parts_list for w in ("shard", "parts", "parts-exec", "combine", "total", "shard-rss", "parts-rss", "combine-rss")] + ["dask"]}
        for r in range(o.rounds):
            whole = os.path.join(tmp, "whole.tns")
            wall, ex_s, rss = timed([storel, "run"] + args + flags + ["--output", whole])
            res["run"].append(wall)
            res["run-exec"].append(ex_s)
            res["run-rss"].append(rss)
            want = open(whole, "rb").read()
            for n in parts_list:
                out = os.path.join(tmp, "shard-%d" % n)
                shutil.rmtree(out, ignore_errors=True)
                sh, _, sh_rss = timed([storel, "shard"] + args + ["--parts", str(n), "--output", out])
                pw = pe = p_rss = 0.0
                for k in range(n):
                    part = os.path.join(out, "part-%03d" % k)
                    w, e, rss = timed([storel, "run", "--manifest", os.path.join(part, "manifest.txt"), "--output", os.path.join(part, "result.tns")] + flags)
                    pw, pe, p_rss = pw + w, pe + e, max(p_rss, rss)
                got = os.path.join(tmp, "combined.tns")
                cb, _, cb_rss = timed([storel, "combine", out, "--output", got])
                if open(got, "rb").read() != want:
                    sys.exit("shard-overhead: %s, %d parts: the combined result differs from storel run's" % (name, n))
                for key, v in (("shard", sh), ("parts", pw), ("parts-exec", pe), ("combine", cb), ("total", sh + pw + cb),
                               ("shard-rss", sh_rss), ("parts-rss", p_rss), ("combine-rss", cb_rss)):
                    res["%s-%d" % (key, n)].append(v)
            if o.dask:
                got = os.path.join(tmp, "dask.tns")
                w, _, _ = timed([os.path.join(ROOT, "dist", "storel-dask"), "--workers", "2", "--storel", storel, "--timeout", "300", "run"]
                             + args + ["--threads", "1", "--parts", "4", "--output", got])
                if open(got, "rb").read() != want:
                    sys.exit("shard-overhead: %s: storel-dask's result differs from storel run's" % name)
                res["dask"].append(w)
        med = {k: statistics.median(v) for k, v in res.items() if v}
        rows.append((name, med))
        print(name, {k: round(v, 3) for k, v in med.items()}, flush=True)

    os.makedirs(os.path.dirname(o.out), exist_ok=True)
    with open(o.out, "w") as f:
        f.write("# Sharding on one machine: what it costs\n\n")
        f.write("`bench/shard-overhead.py --rounds %d%s` on storel %s, %s, %d cores (shared). Medians of %d rounds, seconds.\n"
                % (o.rounds, " --dask" if o.dask else "", commit, time.strftime("%Y-%m-%d"), os.cpu_count(), o.rounds))
        f.write("Wall: each storel process from start to exit (load, optimize, execute, write). Parts run one after\n"
                "another with one thread; `exec` is the execute phase (`--timings`), the plain run's against the sum\n"
                "of the parts'. Every combined result was byte-identical to the plain run's.\n\n")
        f.write("| case | run | run exec | parts | shard | parts (sum) | parts exec (sum) | combine | shard+parts+combine | / run |%s\n"
                % (" storel-dask, 4 parts, local 2 workers |" if o.dask else ""))
        f.write("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s\n" % ("---:|" if o.dask else ""))
        for name, m in rows:
            for n in parts_list:
                f.write("| %s | %.3f | %.4f | %d | %.3f | %.3f | %.4f | %.3f | %.3f | %.2fx |%s\n" % (
                    name if n == parts_list[0] else "", m["run"], m["run-exec"], n, m["shard-%d" % n], m["parts-%d" % n],
                    m["parts-exec-%d" % n], m["combine-%d" % n], m["total-%d" % n], m["total-%d" % n] / m["run"],
                    (" %.2f |" % m["dask"] if n == parts_list[-1] else " |") if o.dask else ""))
        f.write("\nPeak resident memory (MiB, GNU time's %M) of each process: the plain run, the largest part's run,\n"
                "storel shard (which reads the input twice and holds one part at a time) and storel combine (one entry per part).\n\n")
        f.write("| case | run | parts | largest part | largest part / run | shard | combine |\n|---|---:|---:|---:|---:|---:|---:|\n")
        for name, m in rows:
            for n in parts_list:
                f.write("| %s | %.0f | %d | %.0f | %.2f | %.0f | %.0f |\n" % (
                    name if n == parts_list[0] else "", m["run-rss"], n, m["parts-rss-%d" % n], m["parts-rss-%d" % n] / m["run-rss"],
                    m["shard-rss-%d" % n], m["combine-rss-%d" % n]))
    shutil.rmtree(tmp, ignore_errors=True)
    print("wrote", o.out)


if __name__ == "__main__":
    main()
