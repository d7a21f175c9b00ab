"""Side by side in one process: the accounting layer's raw-tuple arithmetic (issue 14, mpasm)
against the mpf-object code it replaced.

usage: python bench/mpasm_ab.py [STEP] [ROUNDS] [BASE] [calls]
       (default: every 20th DHC pair, 3 rounds, e2cac23; ``calls``: also count the Python
       function calls of each side under cProfile, a load-independent measure)

The former functions are read from git (``git show BASE:path``), compiled in the namespace
of today's modules and swapped in for the "old" runs (``ExactAccountant._assemble``,
``_query``, ``_piece_eps``, ``delta``; ``ProfileInversion._solve_piece``, ``_finish``;
``_below``, ``_target``; ``inversion._floor_log``; ``lattice.floor_exact``, ``LatticeSum.delta_thresholds``).
Every pair runs old and new alternately (the order flips each round, a fresh accountant
each time) and the CPU time (``time.process_time``) of each is summed per stage; the three
CSV texts of both must be identical.
"""
import ast
import cProfile
import pstats
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from exactdp.accounting import accountant, curve, inversion
from exactdp.census.allocations import load_allocation
from exactdp.engine import lattice
from exactdp.sweep.pair import SweepSettings, compute_pair

ROOT = Path(__file__).resolve().parents[1]
STEP = int(sys.argv[1]) if len(sys.argv) > 1 else 20
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
BASE = sys.argv[3] if len(sys.argv) > 3 else "e2cac23"
CALLS = len(sys.argv) > 4 and sys.argv[4] == "calls"


def old_functions(path, names, module, extra=None):
    """The functions ``names`` (``Class.method`` or ``function``) of ``path`` at BASE,
    compiled in a copy of ``module``'s namespace."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{BASE}:{path}"], check=True, capture_output=True,
                         text=True).stdout
    tree = ast.parse(src)
    ns = dict(vars(module))
    ns.update(extra or {})
    out = {}
    for node in tree.body:
        items = [(node.name, node)] if isinstance(node, ast.FunctionDef) else []
        if isinstance(node, ast.ClassDef):
            items = [(f"{node.name}.{f.name}", f) for f in node.body if isinstance(f, ast.FunctionDef)]
        for name, fn in items:
            if name in names:
                code = textwrap.dedent(" " * fn.col_offset + ast.get_source_segment(src, fn))
                exec(compile(code, f"{BASE}:{path}", "exec"), ns)
                out[name] = ns[fn.name]
    assert set(out) == set(names), set(names) - set(out)
    return out


A = accountant.ExactAccountant
P = inversion.ProfileInversion
L = lattice.LatticeSum
old_lat = old_functions("exactdp/engine/lattice.py", {"floor_exact", "LatticeSum.delta_thresholds"}, lattice)
old_acc = old_functions("exactdp/accounting/accountant.py",
                        {"ExactAccountant._assemble", "ExactAccountant._query", "ExactAccountant._piece_eps",
                         "ExactAccountant.delta"}, accountant)
old_inv = old_functions("exactdp/accounting/inversion.py",
                        {"ProfileInversion._solve_piece", "ProfileInversion._finish", "ProfileInversion._below",
                         "ProfileInversion._target", "_floor_log"}, inversion,
                        {"_bounds": curve._bounds, "_mp": curve._mp, "floor_exact": old_lat["floor_exact"]})
old_lat_ns = old_lat["LatticeSum.delta_thresholds"].__globals__
old_lat_ns["floor_exact"] = old_lat["floor_exact"]

SWAPS = [(A, "_assemble", old_acc["ExactAccountant._assemble"]), (A, "_query", old_acc["ExactAccountant._query"]),
         (A, "_piece_eps", old_acc["ExactAccountant._piece_eps"]), (A, "delta", old_acc["ExactAccountant.delta"]),
         (P, "_solve_piece", old_inv["ProfileInversion._solve_piece"]),
         (P, "_finish", old_inv["ProfileInversion._finish"]), (P, "_below", old_inv["ProfileInversion._below"]),
         (P, "_target", old_inv["ProfileInversion._target"]), (inversion, "_floor_log", old_inv["_floor_log"]),
         (inversion, "floor_exact", old_lat["floor_exact"]),
         (L, "delta_thresholds", old_lat["LatticeSum.delta_thresholds"])]
NEW = [(o, n, getattr(o, n) if not isinstance(o, type) else o.__dict__[n]) for o, n, _ in SWAPS]


def use(which):
    for o, n, f in (SWAPS if which == "old" else NEW):
        setattr(o, n, f)


alloc = load_allocation("dhc-persons-2020")
s = SweepSettings()
pairs = list(alloc.pairs())[::STEP]
use("new")
compute_pair(1, 1, alloc.pair_rhos(13, 13), s)  # warm-up (kernels loaded)
tot = {"old": {}, "new": {}}
cpu = {"old": 0.0, "new": 0.0}
bad = 0
prof = {"old": cProfile.Profile(), "new": cProfile.Profile()}
for rnd in range(ROUNDS):
    for i, j in pairs:
        got = {}
        for which in (("old", "new") if rnd % 2 == 0 else ("new", "old")):
            use(which)
            t = time.process_time()
            r = compute_pair(i, j, alloc.pair_rhos(i, j), s)
            cpu[which] += time.process_time() - t
            if CALLS and rnd == 0:
                prof[which].enable()
                compute_pair(i, j, alloc.pair_rhos(i, j), s)
                prof[which].disable()
            for k, v in r.seconds.items():
                tot[which][k] = tot[which].get(k, 0.0) + v
            got[which] = (r.curve_csv, r.tradeoff_csv, r.grid_csv)
        bad += got["old"] != got["new"]
use("new")
n = len(pairs) * ROUNDS
print(f"{len(pairs)} pairs x {ROUNDS} rounds (base {BASE}); outputs differ: {bad}")
for which in ("old", "new"):
    st = ", ".join(f"{k} {1000 * v / n:.1f}" for k, v in tot[which].items())
    print(f"{which}: cpu {1000 * cpu[which] / n:.1f} ms/pair; stages (wall, ms/pair): {st}")
print(f"new/old cpu: {cpu['new'] / cpu['old']:.3f}")
if CALLS:
    calls = {w: pstats.Stats(prof[w]).total_calls / len(pairs) for w in prof}
    print(f"Python function calls a pair: old {calls['old']:.0f}, new {calls['new']:.0f} "
          f"(new/old {calls['new'] / calls['old']:.3f})")
