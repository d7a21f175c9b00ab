"""Replay every kernel call of the tilted quadrature (``engine/quadrature.py``'s kernel names,
``finish_values`` and ``grid_tilts`` included) on a sample of DHC pairs or on named pairs,
with CPU seconds per kernel and a bit-for-bit check of the outputs (kern8, issue 14).

usage:
  python bench/bench_kern8_replay.py record OUT.pkl STEP|I-J[,I-J...]   # every STEP-th DHC pair,
                                                                         # or the pairs named
  python bench/bench_kern8_replay.py replay OUT.pkl [TREE]             # CPU-s per kernel (min
                                                                         # of 3), outputs that differ

TREE: an unpacked source tree of another commit with its own NUMBA_CACHE_DIR, as for
``bench_kernel_replay.py`` (``git archive C | tar -x -C TREE``); the recorded outputs are the
reference, so record with the old code and replay with the new one (and the old one, for
the side-by-side time).  The node tables of ``node_factors`` are dropped before each round.
"""

from __future__ import annotations

import os
import pickle
import sys
import time

import numpy as np

from bench_kernel_replay import _same  # noqa: E402  (this folder)

#: the kernels engine/quadrature.py calls by name
KERNELS = ("node_factors", "tilted_sums", "delta_factors", "node_trig", "finish_values", "grid_tilts",
           "sieve_candidates")


def _pairs(spec, alloc):
    if "-" in spec:
        return [tuple(map(int, p.split("-"))) for p in spec.split(",")]
    return list(alloc.pairs())[::int(spec)]


def record(out, spec):
    from exactdp.census.allocations import load_allocation
    from exactdp.engine import quadrature
    from exactdp.sweep.pair import SweepSettings, compute_pair

    rec = {name: [] for name in KERNELS}

    def recording(name):
        fn = getattr(quadrature, name)

        def call(*args):
            res = fn(*args)
            rec[name].append((tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args), res))
            return res

        return call

    for name in KERNELS:
        setattr(quadrature, name, recording(name))
    alloc = load_allocation("dhc-persons-2020")
    for i, j in _pairs(spec, alloc):
        compute_pair(i, j, alloc.pair_rhos(i, j), SweepSettings())
    with open(out, "wb") as fh:
        pickle.dump(rec, fh)
    print({name: len(v) for name, v in rec.items()}, "calls")


def replay(path, tree=None):
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
        sys.path.insert(0, tree)
    from exactdp.engine import quadrature
    from exactdp.kernels import nodes

    with open(path, "rb") as fh:
        rec = pickle.load(fh)
    total = 0.0
    for name in KERNELS:
        calls = rec.get(name)
        if not calls:
            continue
        fn = getattr(quadrature, name)
        fn(*calls[0][0])  # load the kernel
        best, outs = float("inf"), []
        for _ in range(3):
            nodes.clear_tables()
            t0 = time.process_time()
            outs = [fn(*args) for args, _ in calls]
            best = min(best, time.process_time() - t0)
        differ = sum(not _same(o, ref) for o, (_, ref) in zip(outs, calls))
        total += best
        print(f"{name}: {len(calls)} calls, {best:.3f} CPU-s (min of 3), {differ} outputs differ")
    print(f"{os.path.dirname(quadrature.__file__)}: {total:.3f} CPU-s in all")


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "10")
    else:
        replay(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
