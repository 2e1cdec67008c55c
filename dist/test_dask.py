#!/usr/bin/python3
"""Integration test of dist/storel-dask (run by .ci/run after dist/install.sh).

A Dask scheduler and 2 worker processes on 127.0.0.1; SpMV, BATAX, MTTKRP
and TTM on the real data in ../shared/data (or, where a checkout has none,
integer-valued random stand-ins of smaller sizes), 4 parts each: storel-dask's
output must equal `storel run`'s byte for byte (every input is
integer-valued, so every order of additions gives the same bits). Then a
local cluster started by storel-dask itself, and a run during which a
worker is killed while it runs a part: Dask runs that part again on the
other worker and the answer is still the same. Every wait is bounded.
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
PY = "/usr/bin/python3"
DRIVER = os.path.join(ROOT, "dist", "storel-dask")
STEP_TIMEOUT = 120  # seconds for any one command

failures = []


def log(msg):
    print("test_dask: " + msg, flush=True)


def run(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STEP_TIMEOUT, **kw)
    if proc.returncode != 0:
        raise SystemExit("test_dask: %s failed (exit %d):\n%s" % (" ".join(cmd), proc.returncode, proc.stderr.decode(errors="replace")))
    return proc


def write_vector(path, n, rng):
    with open(path, "w") as f:
        f.write("".join("%d\n" % rng.randint(-3, 3) for _ in range(n)))


def write_matrix(path, rows, cols, density, rng):
    """A random integer-valued Matrix Market matrix."""
    lines = []
    for i in range(rows):
        for j in range(cols):
            if rng.random() < density:
                lines.append("%d %d %d\n" % (i + 1, j + 1, rng.randint(-4, 4) or 1))
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n" % (rows, cols, len(lines)))
        f.write("".join(lines))


def write_sparse(path, dims, nnz, rng):
    """A random integer-valued sparse tensor: .mtx for a matrix, .tns
    otherwise, each coordinate at most once."""
    seen = set()
    while len(seen) < nnz:
        seen.add(tuple(rng.randrange(d) for d in dims))
    lines = ["%s %d\n" % (" ".join(str(c + 1) for c in k), rng.randint(-4, 4) or 1) for k in sorted(seen)]
    with open(path, "w") as f:
        if len(dims) == 2:
            f.write("%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n" % (dims[0], dims[1], nnz))
        f.write("".join(lines))


def inputs(tmp, rng):
    """The files and sizes of the four kernels' main inputs: the real data,
    or stand-ins written into tmp when ../shared/data is absent."""
    real = {"andrews": ("Andrews.mtx.gz", (60000, 60000)), "copter2": ("copter2.mtx.gz", (55476, 55476)),
            "wordnet": ("wordnet30_synset_ptr_synset.tns.gz", (117659, 26, 117659)),
            "orghs": ("orghs_gene_go_evidence_direct.tns.gz", (20728, 18933, 20))}
    if os.path.isdir(DATA):
        return {k: (os.path.join(DATA, f), dims) for k, (f, dims) in real.items()}
    log("no data directory %s: random stand-ins" % DATA)
    small = {"andrews": ((3000, 3000), 30000, ".mtx"), "copter2": ((2500, 2500), 25000, ".mtx"),
             "wordnet": ((4000, 26, 4000), 20000, ".tns"), "orghs": ((2000, 1500, 20), 20000, ".tns")}
    out = {}
    for k, (dims, nnz, ext) in small.items():
        path = os.path.join(tmp, k + "-standin" + ext)
        write_sparse(path, dims, nnz, rng)
        out[k] = (path, dims)
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def children(pid):
    """The pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def main():
    tmp = tempfile.mkdtemp(prefix="storel-dask-test-")
    storel = os.path.join(tmp, "storel")
    run(["go", "build", "-o", storel, "./cmd/storel"], cwd=ROOT)
    rng = random.Random(32)
    data = inputs(tmp, rng)
    (andrews, na), (copter2, nc) = data["andrews"], data["copter2"]
    (wordnet, nw), (orghs, no) = data["wordnet"], data["orghs"]
    write_vector(os.path.join(tmp, "x-andrews.txt"), na[1], rng)
    write_vector(os.path.join(tmp, "x-copter2.txt"), nc[1], rng)
    # MTTKRP on WordNet (I x 26 x L): C(k,j) 26 x 2, D(j,l) 2 x L.
    write_matrix(os.path.join(tmp, "c-wordnet.mtx"), nw[1], 2, 1.0, rng)
    write_matrix(os.path.join(tmp, "d-wordnet.mtx"), 2, nw[2], 0.3, rng)
    # TTM on orghs (I x J x 20): B(k,l) 3 x 20.
    write_matrix(os.path.join(tmp, "b-orghs.mtx"), 3, no[2], 0.7, rng)
    ex = lambda k: os.path.join(ROOT, "examples", k + ".sdql")
    t = lambda f: os.path.join(tmp, f)
    kernels = {
        "spmv": [ex("spmv"), "--tensor", "A=" + andrews, "--data", "x=" + t("x-andrews.txt")],
        "batax": [ex("batax"), "--tensor", "A=" + copter2, "--data", "x=" + t("x-copter2.txt"), "--data", "beta=2"],
        "mttkrp": [ex("mttkrp"), "--tensor", "B=" + wordnet, "--dims", "B=" + ",".join(map(str, nw)),
                   "--tensor", "C=" + t("c-wordnet.mtx"), "--tensor", "D=" + t("d-wordnet.mtx")],
        "ttm": [ex("ttm"), "--tensor", "A=" + orghs, "--dims", "A=" + ",".join(map(str, no)), "--tensor", "B=" + t("b-orghs.mtx") + ":csc"],
    }
    want = {}
    for name, args in kernels.items():
        out = t(name + "-whole.tns")
        run([storel, "run"] + args + ["--output", out])
        want[name] = read(out)
        if len(want[name]) == 0:
            raise SystemExit("test_dask: %s: storel run wrote nothing" % name)

    sched_file = t("scheduler.json")
    procs = []
    try:
        procs.append(subprocess.Popen([PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                       "--no-dashboard", "--scheduler-file", sched_file],
                                      stdout=subprocess.DEVNULL, stderr=open(t("scheduler.log"), "w"), start_new_session=True))
        workers = []
        for w in range(2):
            wdir = t("worker-%d" % w)
            os.mkdir(wdir)
            p = subprocess.Popen([PY, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched_file,
                                  "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                  "--local-directory", wdir, "--name", "w%d" % w],
                                 stdout=subprocess.DEVNULL, stderr=open(t("worker-%d.log" % w), "w"), start_new_session=True)
            procs.append(p)
            workers.append(p)
        deadline = time.monotonic() + 60
        while not os.path.exists(sched_file):
            if time.monotonic() > deadline:
                raise SystemExit("test_dask: the scheduler did not start in 60 s")
            time.sleep(0.1)
        from distributed import Client
        with Client(scheduler_file=sched_file, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            address = c.scheduler.address
        log("scheduler %s, 2 workers" % address)

        for name, args in kernels.items():
            out = t(name + "-dask.tns")
            start = time.monotonic()
            run([DRIVER, "--scheduler", address, "--storel", storel, "--timeout", str(STEP_TIMEOUT), "run"] + args + ["--parts", "4", "--output", out])
            ok = read(out) == want[name]
            log("%s, 4 parts over 2 workers: %s (%.1f s)" % (name, "same bytes as storel run" if ok else "DIFFERENT", time.monotonic() - start))
            if not ok:
                failures.append(name)

        # A program that cannot be split: the driver says why, exit 1.
        p = subprocess.run([DRIVER, "--scheduler", address, "--storel", storel, "--timeout", str(STEP_TIMEOUT), "run", ex("mmm"),
                            "--tensor", "A=" + copter2, "--tensor", "B=" + copter2, "--parts", "4", "--output", t("mmm.tns")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
        if p.returncode != 1 or b"cannot be split" not in p.stderr or os.path.exists(t("mmm.tns")):
            failures.append("mmm: exit %d, %r" % (p.returncode, p.stderr))
        else:
            log("mmm with two large operands refused: " + p.stderr.decode().strip().split(": ", 2)[-1][:90] + "...")

        # A local cluster started by the driver itself, parts read from disk.
        out = t("spmv-local.tns")
        run([DRIVER, "--workers", "2", "--storel", storel, "--timeout", str(STEP_TIMEOUT), "run"] + kernels["spmv"] + ["--parts", "3", "--output", out])
        ok = read(out) == want["spmv"]
        log("spmv on a local cluster of 2 processes: %s" % ("same bytes" if ok else "DIFFERENT"))
        if not ok:
            failures.append("spmv-local")

        # Kill worker w0 while a part runs on it (its storel run is a child
        # of the worker process); --repeat makes each part last long enough.
        out = t("mttkrp-kill.tns")
        start = time.monotonic()
        driver = subprocess.Popen([DRIVER, "--scheduler", address, "--storel", storel, "--timeout", str(STEP_TIMEOUT), "run"]
                                  + kernels["mttkrp"] + ["--repeat", "15", "--parts", "8", "--output", out],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        victim, killed = workers[0], False
        deadline = time.monotonic() + STEP_TIMEOUT
        while driver.poll() is None and time.monotonic() < deadline:
            running = [c for c in children(victim.pid) if any(a.endswith(b"storel-") or b"/storel-" in a for a in cmdline(c)[:1])]
            if running:
                os.killpg(victim.pid, signal.SIGKILL)
                killed = True
                log("killed worker w0 (pid %d) while it ran a part (pid %d)" % (victim.pid, running[0]))
                break
            time.sleep(0.005)
        try:
            _, err = driver.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            driver.kill()
            raise SystemExit("test_dask: the run with a killed worker did not finish in %d s" % STEP_TIMEOUT)
        if not killed:
            failures.append("kill: no part was seen running on w0 to kill")
        elif driver.returncode != 0:
            failures.append("kill: storel-dask failed: " + err.decode(errors="replace"))
        elif read(out) != want["mttkrp"]:
            failures.append("kill: the result differs from storel run's")
        else:
            log("mttkrp, 8 parts, a worker killed mid-run: same bytes as storel run (%.1f s)" % (time.monotonic() - start))
        # The scheduler saw w0 go while it held a task, so the part ran again.
        lost = [l for l in open(t("scheduler.log")) if "Remove worker" in l and "name: w0," in l]
        if killed and not any("processing: 0>" not in l for l in lost):
            failures.append("kill: the scheduler log shows no removal of w0 while it processed a part: %r" % lost)
        elif killed:
            log("scheduler: " + lost[0].strip().split("Remove worker ")[-1])
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
    if failures:
        raise SystemExit("test_dask: FAIL: " + "; ".join(failures) + " (logs in %s)" % tmp)
    subprocess.run(["rm", "-rf", tmp])
    log("ok")


if __name__ == "__main__":
    main()
