"""The cases bench/shard-overhead.py and bench/shard-memlimit.py run: the
paper's kernels on the real data in ../shared/data, with integer-valued
vectors and factor matrices written into a temporary directory, so that
every combined result can be compared byte for byte."""

import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")


def cases(tmp, seed):
    """Returns [(name, storel run's arguments)], writing their inputs into tmp."""
    rng = random.Random(seed)

    def vec(name, n):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write("".join("%d\n" % rng.randint(-3, 3) for _ in range(n)))
        return path

    def mat(name, rows, cols, density):
        path = os.path.join(tmp, name)
        lines = ["%d %d %d\n" % (i + 1, j + 1, rng.randint(1, 4)) for i in range(rows) for j in range(cols) if rng.random() < density]
        with open(path, "w") as f:
            f.write("%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n" % (rows, cols, len(lines)) + "".join(lines))
        return path

    ex = lambda k: os.path.join(ROOT, "examples", k + ".sdql")
    d = lambda f: os.path.join(DATA, f)
    return [
        ("SpMV cnr-2000", [ex("spmv"), "--tensor", "A=" + d("cnr-2000.mtx.gz"), "--data", "x=" + vec("x-cnr.txt", 325557)]),
        ("BATAX Andrews", [ex("batax"), "--tensor", "A=" + d("Andrews.mtx.gz"), "--data", "x=" + vec("x-andrews.txt", 60000), "--data", "beta=2"]),
        ("MTTKRP WordNet", [ex("mttkrp"), "--tensor", "B=" + d("wordnet30_synset_ptr_synset.tns.gz"), "--dims", "B=117659,26,117659",
                            "--tensor", "C=" + mat("c.mtx", 26, 2, 1.0), "--tensor", "D=" + mat("d.mtx", 2, 117659, 0.3)]),
        ("TTM orghs", [ex("ttm"), "--tensor", "A=" + d("orghs_gene_go_evidence_direct.tns.gz"), "--tensor", "B=" + mat("b.mtx", 3, 20, 0.7) + ":csc"]),
    ]
