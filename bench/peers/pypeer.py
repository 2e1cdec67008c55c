#!/usr/bin/python3
"""Runs one of the paper's matrix kernels, SpMV, or MTTKRP with dense factors,
in SciPy, NumPy or PyTorch.

The harness (bench/cmd/storel-bench) calls this with /usr/bin/python3, where
Debian's python3-scipy, python3-numpy and python3-torch are installed. Each
system gets its best storage of the paper's Table 3:

    scipy   CSR, CSR (x dense)     numpy  dense, dense     torch  CSR, dense

Phases are reported on stderr as storel reports them ("timing: <phase> <ms>
ms"): load = reading the files, build = building the system's storage,
execute = the median of --repeat runs of the kernel alone. The answer is
written for the harness to check: PREFIX.idx.npy (n x order, 0-based int64
coordinates of the non-zeros) and PREFIX.val.npy (their float64 values); a
scalar answer is PREFIX.val.npy alone.

BATAX is run as beta * A^T (A x), the hand-optimized order, in every
system: none of them would factor the naive sum by itself. SumMMM is run as
the sum of the product, which is how the library composes. SpMV is A @ x
(x a dense vector): SciPy's CSR, NumPy's dense matrix, PyTorch's CSR times
x as an n x 1 dense matrix (its CSR x vector product needs MKL).

MTTKRP with dense factors (--kernel mttkrp-dense, the cpd experiment: A(i,j) =
sum B(i,k,l) C(k,j) D(j,l), B a .tns 3-tensor sized by --dims, C and D dense
.mtx files) runs in the vectorized form a Python user writes: gather the
factor rows of every non-zero, multiply them by its value, and sum them per
row i, with a SciPy sparse product (numpy) or index_add_ (torch).

Exit status 3 means the system cannot run this input (NumPy's dense
matrices would not fit in memory); the message says why.
"""

import argparse
import gzip
import os
import statistics
import sys
import time


def fail(msg, code=1):
    print("pypeer: " + msg, file=sys.stderr)
    sys.exit(code)


def timing(phase, seconds):
    print("timing: %s %.3f ms" % (phase, seconds * 1000.0), file=sys.stderr)


def read_mtx(path):
    """Reads a Matrix Market coordinate file (optionally .gz) into COO arrays.

    Symmetric and skew-symmetric files are expanded to both triangles;
    pattern files get the value 1. Parsing is done by numpy in C, which is
    much faster than scipy.io.mmread on million-entry files."""
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        header = f.readline().split()
        if len(header) < 5 or header[0].lower() != "%%matrixmarket" or header[2].lower() != "coordinate":
            fail("%s: not a Matrix Market coordinate file" % path)
        field, symmetry = header[3].lower(), header[4].lower()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        rows, cols, nnz = (int(t) for t in line.split())
        body = f.read()
    nums = np.fromstring(body, dtype=np.float64, sep=" ") if body.strip() else np.zeros(0)
    width = 2 if field == "pattern" else 3
    if nums.size != nnz * width:
        fail("%s: expected %d entries of %d numbers, found %d numbers" % (path, nnz, width, nums.size))
    nums = nums.reshape(nnz, width)
    i = nums[:, 0].astype(np.int64) - 1
    j = nums[:, 1].astype(np.int64) - 1
    v = nums[:, 2].copy() if width == 3 else np.ones(nnz)
    if symmetry in ("symmetric", "skew-symmetric", "hermitian"):
        off = i != j
        sign = -1.0 if symmetry == "skew-symmetric" else 1.0
        i, j, v = (np.concatenate([i, j[off]]), np.concatenate([j, i[off]]),
                   np.concatenate([v, sign * v[off]]))
    return (rows, cols), i, j, v


def read_tns(path, dims):
    """Reads a .tns file (optionally .gz): per line 1-based coordinates and
    a value. Returns (dims, coordinate arrays..., values)."""
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        body = "".join(line for line in f if not line.startswith(("#", "%")))
    nums = np.fromstring(body, dtype=np.float64, sep=" ") if body.strip() else np.zeros(0)
    width = len(dims) + 1
    if nums.size % width:
        fail("%s: %d numbers do not make entries of %d coordinates and a value" % (path, nums.size, len(dims)))
    nums = nums.reshape(-1, width)
    coords = [nums[:, m].astype(np.int64) - 1 for m in range(len(dims))]
    return (tuple(dims), *coords, nums[:, -1].copy())


def dense(m):
    """A dense array of a matrix read by read_mtx."""
    import numpy as np

    shape, i, j, v = m
    d = np.zeros(shape)
    np.add.at(d, (i, j), v)
    return d


def cpd_kernel(system, threads, mats):
    """MTTKRP with dense factors: the kernel function of system."""
    import numpy as np
    import scipy.sparse as sp

    (I, _, _), i, k, l, v = mats["B"]
    C = dense(mats["C"])
    DT = np.ascontiguousarray(dense(mats["D"]).T)  # stored l-major: a row per non-zero's l
    if system == "numpy":
        rows = sp.csr_matrix((np.ones(len(v)), (i, np.arange(len(v)))), shape=(I, len(v)))

        def kernel():
            return rows @ (v[:, None] * C[k] * DT[l])
        return kernel
    if system == "torch":
        import torch
        torch.set_num_threads(threads)
        ti, tk, tl, tv = (torch.from_numpy(a) for a in (i, k, l, v))
        Ct, DTt = torch.from_numpy(C), torch.from_numpy(DT)

        def kernel():
            M = tv[:, None] * Ct[tk] * DTt[tl]
            return torch.zeros(I, Ct.shape[1], dtype=torch.float64).index_add_(0, ti, M)
        return kernel
    fail("%s has no form of MTTKRP with dense factors here" % system, 3)


def read_vector(path):
    import numpy as np

    if path.endswith(".npy"):
        return np.load(path).astype(np.float64)
    return np.loadtxt(path, dtype=np.float64, ndmin=1)


def write_answer(prefix, answer):
    """Writes the non-zeros of answer (scalar, numpy array, scipy sparse
    matrix or torch tensor) as PREFIX.idx.npy and PREFIX.val.npy."""
    import numpy as np
    import scipy.sparse as sp

    if type(answer).__module__.startswith("torch"):  # without importing torch for the others
        import torch
        answer = answer.to_dense().numpy() if answer.layout != torch.strided else answer.numpy()
    if np.isscalar(answer) or (isinstance(answer, np.ndarray) and answer.ndim == 0):
        np.save(prefix + ".val.npy", np.array([float(answer)]))
        return
    if sp.issparse(answer):
        coo = answer.tocoo()
        keep = coo.data != 0
        idx = np.stack([coo.row[keep], coo.col[keep]], axis=1).astype(np.int64)
        val = coo.data[keep].astype(np.float64)
    else:
        answer = np.asarray(answer)
        nz = np.nonzero(answer)
        idx = np.stack(nz, axis=1).astype(np.int64)
        val = answer[nz].astype(np.float64)
    order = np.lexsort(idx.T[::-1]) if idx.shape[0] else np.arange(0)
    np.save(prefix + ".idx.npy", np.ascontiguousarray(idx[order]))
    np.save(prefix + ".val.npy", val[order])


def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True, choices=["scipy", "numpy", "torch"])
    ap.add_argument("--kernel", required=True, choices=["mmm", "summmm", "batax", "spmv", "mttkrp-dense"])
    ap.add_argument("--tensor", action="append", default=[], help="NAME=FILE.mtx[.gz] or NAME=FILE.tns[.gz] (with --dims)")
    ap.add_argument("--dims", action="append", default=[], help="NAME=D1,D2,...: the sizes of a .tns tensor")
    ap.add_argument("--data", action="append", default=[], help="NAME=FILE.npy or NAME=NUMBER")
    ap.add_argument("--output", default="")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mem-fraction", type=float, default=0.5,
                    help="NumPy: refuse dense inputs needing more than this share of available memory")
    args = ap.parse_args()

    # One thread unless told otherwise, for BLAS too (set before importing numpy).
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np
    import scipy.sparse as sp

    t0 = time.perf_counter()
    mats, data = {}, {}
    dims = {}
    for d in args.dims:
        name, _, spec = d.partition("=")
        dims[name] = [int(x) for x in spec.split(",")]
    for t in args.tensor:
        name, _, path = t.partition("=")
        if ".tns" in os.path.basename(path):
            if name not in dims:
                fail("%s: a .tns tensor needs --dims %s=D1,D2,..." % (path, name))
            mats[name] = read_tns(path, dims[name])
        else:
            mats[name] = read_mtx(path)
    for d in args.data:
        name, _, spec = d.partition("=")
        try:
            data[name] = float(spec)
        except ValueError:
            data[name] = read_vector(spec)
    timing("load", time.perf_counter() - t0)

    if args.kernel == "mttkrp-dense":
        t0 = time.perf_counter()
        kernel = cpd_kernel(args.system, args.threads, mats)
        timing("build", time.perf_counter() - t0)
        run(kernel, args)
        return

    if args.system == "numpy":
        need = 0
        for shape, *_ in mats.values():
            need += shape[0] * shape[1] * 8
        if args.kernel == "mmm":
            need += mats["A"][0][0] * mats["B"][0][1] * 8
        if args.kernel == "summmm":
            need += mats["A"][0][0] * mats["B"][0][1] * 8
        budget = int(mem_available() * args.mem_fraction)
        if need > budget:
            fail("dense storage needs %.1f GB, more than %.1f GB available to it" % (need / 1e9, budget / 1e9), 3)

    t0 = time.perf_counter()
    A = mats["A"]
    csr = {n: sp.csr_matrix((m[3], (m[1], m[2])), shape=m[0]) for n, m in mats.items()}
    for m in csr.values():
        m.sum_duplicates()
    if args.system == "scipy" and args.kernel in ("mmm", "summmm"):
        # SciPy's product first counts its non-zeros, then allocates them
        # (int32 index + float64 value each). Their number is at most
        # sum_k nnz(A[:,k]) * nnz(B[k,:]); refuse when even the product
        # cannot fit, as NumPy does for dense inputs.
        Acols = np.bincount(csr["A"].indices, minlength=csr["A"].shape[1])
        Brows = np.diff(csr["B"].indptr)
        bound = min(int(np.dot(Acols.astype(np.float64), Brows.astype(np.float64))),
                    csr["A"].shape[0] * csr["B"].shape[1])
        need = bound * 12
        budget = int(mem_available() * args.mem_fraction)
        if need > budget:
            fail("the product A*B may hold %.2g non-zeros (%.1f GB), more than %.1f GB available to it" % (bound, need / 1e9, budget / 1e9), 3)
    if args.system == "scipy":
        Asys = csr["A"]
        if args.kernel == "batax":
            x, beta = data["x"], data["beta"]
            AT = Asys.T  # CSC view of the transpose: no copy

            def kernel():
                return beta * (AT @ (Asys @ x))
        elif args.kernel == "spmv":
            x = data["x"]

            def kernel():
                return Asys @ x
        else:
            Bsys = csr["B"]

            def kernel():
                C = Asys @ Bsys
                return C.sum() if args.kernel == "summmm" else C
    elif args.system == "numpy":
        Ad = csr["A"].toarray()
        if args.kernel == "batax":
            x, beta = data["x"], data["beta"]

            def kernel():
                return beta * (Ad.T @ (Ad @ x))
        elif args.kernel == "spmv":
            x = data["x"]

            def kernel():
                return Ad @ x
        else:
            Bd = csr["B"].toarray()

            def kernel():
                C = Ad @ Bd
                return C.sum() if args.kernel == "summmm" else C
    else:
        import torch
        torch.set_num_threads(args.threads)

        def to_torch(m):
            return torch.sparse_csr_tensor(torch.from_numpy(m.indptr.astype(np.int64)),
                                           torch.from_numpy(m.indices.astype(np.int64)),
                                           torch.from_numpy(m.data.astype(np.float64)),
                                           size=m.shape, dtype=torch.float64)
        At = to_torch(csr["A"])
        if args.kernel == "batax":
            ATt = to_torch(csr["A"].T.tocsr())
            x = torch.from_numpy(data["x"]).reshape(-1, 1)
            beta = data["beta"]

            def kernel():
                return beta * (ATt @ (At @ x)).reshape(-1)
        elif args.kernel == "spmv":
            # Debian's PyTorch has no MKL, which its CSR x vector (addmv)
            # needs; CSR x (n x 1 dense matrix) is the same product.
            x = torch.from_numpy(data["x"]).reshape(-1, 1)

            def kernel():
                return (At @ x).reshape(-1)
        else:
            Bt = torch.from_numpy(csr["B"].toarray())

            def kernel():
                C = At @ Bt
                return C.sum().item() if args.kernel == "summmm" else C
    timing("build", time.perf_counter() - t0)
    run(kernel, args)


def run(kernel, args):
    """Times --repeat runs of kernel and writes the last answer."""
    times, answer = [], None
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        answer = kernel()
        times.append(time.perf_counter() - t0)
    timing("execute", statistics.median(times))

    if args.output:
        t0 = time.perf_counter()
        write_answer(args.output, answer)
        timing("write", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
