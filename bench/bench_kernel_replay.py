"""Time the tilted rule's kernels alone on the inputs DHC pairs give them, and check their
outputs bit for bit against the recorded ones (issue 14: kern, kern8).

usage:
  python bench/bench_kernel_replay.py record OUT.pkl [STEP|I-J[,I-J...]]
        # the kernel calls of the tilted quadrature in compute_pair on every STEP-th DHC pair
        # (default 10: 95 pairs), or on the pairs named (e.g. 6-10,6-31)
  python bench/bench_kernel_replay.py replay OUT.pkl [TREE]
        # replay them: CPU seconds per kernel (min of 3), outputs that differ

The kernels are those ``engine/quadrature.py`` calls by name (``finish_values``, ``finish_tilts`` and
``grid_tilts`` included); a kernel a tree does not have is skipped.  TREE (optional) is an
unpacked source tree of another commit, as for ``engine_replay.py`` (``git archive C | tar
-x -C TREE``, then ``ln -s ../kernels TREE/exactdp/kernels`` and ``ln -s ../allocations
TREE/exactdp/allocation_data``), with its own NUMBA_CACHE_DIR: the same calls before and
after a change, in one session.  The recorded outputs are the reference, so record with the
old code.  The node tables of ``node_factors`` are dropped before each round (every round
builds them as a fresh sweep worker would).  Alternate the versions and take minima: the
machine's load matters.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
import time

import numpy as np

#: the kernels that engine/quadrature.py calls by name
KERNELS = ("node_factors", "tilted_sums", "delta_factors", "node_trig", "finish_values", "finish_tilts", "grid_tilts",
           "sieve_candidates")


def _pairs(spec: str, alloc):
    if "-" in spec:
        return [tuple(map(int, p.split("-"))) for p in spec.split(",")]
    return list(alloc.pairs())[::int(spec)]


def record(out, spec="10"):
    from exactdp.census.allocations import load_allocation
    from exactdp.engine import quadrature
    from exactdp.sweep.pair import SweepSettings, compute_pair

    names = [n for n in KERNELS if hasattr(quadrature, n)]
    rec = {name: [] for name in names}

    def recording(name):
        fn = getattr(quadrature, name)

        def call(*args):
            res = fn(*args)
            rec[name].append((tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args), res))
            return res

        return call

    for name in names:
        setattr(quadrature, name, recording(name))
    alloc = load_allocation("dhc-persons-2020")
    for i, j in _pairs(str(spec), alloc):
        compute_pair(i, j, alloc.pair_rhos(i, j), SweepSettings())
    with open(out, "wb") as fh:
        pickle.dump(rec, fh)
    print({name: len(v) for name, v in rec.items()}, "calls")


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def drop_tables():
    """Drop the node tables kept by ``node_factors`` (this tree's or an older one's)."""
    for name in ("nodes", "tilted"):  # the node tables' module (kernels.tilted before the split)
        try:
            module = importlib.import_module(f"exactdp.kernels.{name}")
        except ImportError:
            continue
        getattr(module, "_TABLES", {}).clear()


def replay(path, tree=None):
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
        sys.path.insert(0, tree)
    from exactdp.engine import quadrature

    with open(path, "rb") as fh:
        rec = pickle.load(fh)
    total = 0.0
    for name in KERNELS:
        calls, fn = rec.get(name), getattr(quadrature, name, None)
        if not calls or fn is None:
            continue
        fn(*calls[0][0])  # load the kernel
        best, outs = float("inf"), []
        for _ in range(3):
            drop_tables()
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
