"""Time the tail engine alone on the calls a sample of DHC pairs makes (issue 14, qfinish).

usage:
  python bench/engine_replay.py record OUT.pkl [STEP]   # the TailEngine calls of compute_pair on
                                                         # every STEP-th DHC pair (default 20)
  python bench/engine_replay.py replay OUT.pkl [TREE]   # replay them on fresh engines: build and
                                                         # call CPU seconds (best of 3)
  python bench/engine_replay.py values OUT.pkl VALS.txt [TREE]  # replay once, every returned
                                                         # TailValue's fields (floats in hex) to VALS.txt
  python bench/engine_replay.py compare A.txt B.txt     # how many values differ (bit identity)

TREE (optional) is an unpacked source tree of another commit (``git archive C | tar -x -C
TREE``, then ``ln -s ../kernels TREE/exactdp/kernels``) to time instead of the installed
exactdp, with its own NUMBA_CACHE_DIR: the same calls, before and after a change, in one
session.  Only the engine is timed (no accountant, no post-processing), so the numbers
are less sensitive to what else the pair does; the machine's load still matters
(alternate the two versions and take minima).
"""

from __future__ import annotations

import os
import pickle
import sys
import time


def record(out, step):
    from exactdp.census.allocations import load_allocation
    from exactdp.engine import tails as T
    from exactdp.sweep.pair import SweepSettings, compute_pair

    rec = {}
    init, tails, weighted = T.TailEngine.__init__, T.TailEngine.tails, T.TailEngine.weighted

    def rec_init(self, lattice, *a, **k):
        init(self, lattice, *a, **k)
        self._replay = rec.setdefault(id(self), (lattice, a, k, []))[3]

    def rec_tails(self, thr, strict=True):
        thr = list(thr)
        self._replay.append(("t", thr, strict))
        return tails(self, thr, strict)

    def rec_weighted(self, qs, strict=True):
        qs = list(qs)
        self._replay.append(("w", [(q.threshold, q.x0, q.x1, q.beta) for q in qs], strict))
        return weighted(self, qs, strict)

    T.TailEngine.__init__, T.TailEngine.tails, T.TailEngine.weighted = rec_init, rec_tails, rec_weighted
    alloc = load_allocation("dhc-persons-2020")
    for i, j in list(alloc.pairs())[::step]:
        compute_pair(i, j, alloc.pair_rhos(i, j), SweepSettings())
    data = [v for v in rec.values() if v[3]]
    with open(out, "wb") as fh:
        pickle.dump(data, fh)
    print(len(data), "engines,", sum(len(v[3]) for v in data), "calls")


def _use_tree(tree):
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
        sys.path.insert(0, tree)


def _value_line(tv) -> str:
    """A TailValue's fields, floats in hex (an mpmath log by its exact mantissa/exponent)."""
    lv = tv.log_value
    lv = lv.hex() if isinstance(lv, float) else repr(lv._mpf_)
    return f"{tv.threshold} {lv} {tv.rel_error.hex()} {tv.method} {tv.nodes_kept} {tv.nodes_total} {tv.lam.hex()}"


def values(path, out, tree=None):
    _use_tree(tree)
    from exactdp.engine import tails as T
    from exactdp.engine.quadrature import WeightedQuery

    with open(path, "rb") as fh:
        data = pickle.load(fh)
    lines = []
    for n, (lattice, a, k, seq) in enumerate(data):
        e = T.TailEngine(lattice, *a, **k)
        for c, (kind, args, strict) in enumerate(seq):
            got = e.tails(args, strict) if kind == "t" else e.weighted([WeightedQuery(*q) for q in args], strict)
            lines += [f"{n} {c} " + _value_line(tv) for tv in got]
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(len(lines), "values from", os.path.dirname(T.__file__))


def compare(a, b):
    la, lb = open(a).read().splitlines(), open(b).read().splitlines()
    bad = sum(x != y for x, y in zip(la, lb)) + abs(len(la) - len(lb))
    print(len(la), "values,", bad, "differ")


def replay(path, tree=None):
    _use_tree(tree)
    from exactdp.engine import tails as T
    from exactdp.engine.quadrature import WeightedQuery

    with open(path, "rb") as fh:
        data = pickle.load(fh)

    def run():
        build = calls = 0.0
        for lattice, a, k, seq in data:
            t0 = time.process_time()
            e = T.TailEngine(lattice, *a, **k)
            t1 = time.process_time()
            for kind, args, strict in seq:
                if kind == "t":
                    e.tails(args, strict)
                else:
                    e.weighted([WeightedQuery(*q) for q in args], strict)
            build, calls = build + t1 - t0, calls + time.process_time() - t1
        return build, calls

    run()  # load the kernels
    build, calls = min((run() for _ in range(3)), key=sum)
    print(f"{os.path.dirname(T.__file__)}: build {build:.3f} s, calls {calls:.3f} s "
          f"({sum(len(v[3]) for v in data)} calls, {len(data)} engines)")


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 20)
    elif sys.argv[1] == "values":
        values(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        replay(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
