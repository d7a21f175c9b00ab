"""Side by side in one process: the accountant of today against the accountant of BASE
(session 8, acct8: MPFR arithmetic in ``_assemble``, the bisected ``_narrow``).

usage: python bench/acct8_ab.py [STEP] [ROUNDS] [BASE]
       (default: every 10th DHC pair — the 95-pair sample —, 2 rounds, 083cc26)

``exactdp/accounting/inversion.py`` and ``accountant.py`` of BASE are read from git
(``git show``) and loaded as modules of their own (the old accountant on the old
inversion; every other module is today's).  Every pair runs the sweep's three stages —
``delta`` at the Bureau's ε of the 42 targets, ``epsilon`` of the targets,
``tradeoff_vertices`` — with a fresh accountant of each version, old and new alternately
(the order flips each round), summing the CPU time (``time.process_time``) per stage; every
returned number (all fields of every point, as raw mpf tuples) must be the same.

Stage times move little (the accounting arithmetic is a small part of a stage and the
machine is shared), so the profiles the new runs assemble are also kept and re-assembled
by both ``_assemble`` versions alternately (``REPEAT`` times each): µs per profile, and
every field the same tuple.
"""
import math
import subprocess
import sys
import time
import types
from pathlib import Path

from exactdp.accounting import accountant as new_accountant
from exactdp.accounting.accountant import bun_steinke_epsilon
from exactdp.census.allocations import load_allocation
from exactdp.accounting.curve import _DPS
from exactdp.mechanisms import Composition
from exactdp.numerics.precision import workdps
from exactdp.sweep.pair import SweepSettings, tradeoff_thresholds

ROOT = Path(__file__).resolve().parents[1]
STEP = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
BASE = sys.argv[3] if len(sys.argv) > 3 else "083cc26"


def load_old(path: str, name: str, replace: dict | None = None) -> types.ModuleType:
    """The module at ``path`` as it was at BASE, loaded as ``name`` (``replace``: modules
    it imports that are swapped for old ones while it loads)."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{BASE}:{path}"], check=True, capture_output=True,
                         text=True).stdout
    mod = types.ModuleType(name)
    mod.__file__ = f"{BASE}:{path}"
    sys.modules[name] = mod
    saved = {k: sys.modules[k] for k in (replace or {})}
    sys.modules.update(replace or {})
    try:
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    finally:
        sys.modules.update(saved)
    return mod


old_inversion = load_old("exactdp/accounting/inversion.py", "_old_inversion")
old_accountant = load_old("exactdp/accounting/accountant.py", "_old_accountant",
                          {"exactdp.accounting.inversion": old_inversion})
VERSIONS = {"old": old_accountant.ExactAccountant, "new": new_accountant.ExactAccountant}


def bits(x):
    """Every number of a result as raw tuples (mpf → ``_mpf_``), recursively."""
    if hasattr(x, "_mpf_"):
        return x._mpf_
    if isinstance(x, (tuple, list)):
        return tuple(bits(v) for v in x)
    if hasattr(x, "__dataclass_fields__"):
        return tuple(bits(getattr(x, f)) for f in x.__dataclass_fields__)
    return x


alloc = load_allocation("dhc-persons-2020")
s = SweepSettings()
pairs = list(alloc.pairs())[::STEP]
deltas = list(s.deltas)
cpu = {w: {"delta": 0.0, "epsilon": 0.0, "tradeoff": 0.0} for w in VERSIONS}
bad = 0


def run(cls, rhos):
    acc = cls(Composition.from_rhos(tuple(rhos)), rel_tol=s.rel_tol)
    eng = acc.engine
    if hasattr(eng, "lam_step") and getattr(eng, "var", 0) > 0:
        eng.lam_step = float(s.lam_step_sd) / math.sqrt(eng.var)
    t0 = time.process_time()
    d = acc.delta([bun_steinke_epsilon(acc.rho, x) for x in deltas])
    t1 = time.process_time()
    e = acc.epsilon(deltas)
    t2 = time.process_time()
    v = acc.tradeoff_vertices(tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min))
    t3 = time.process_time()
    return (t1 - t0, t2 - t1, t3 - t2), bits((d, e, v))


records = []
_new_assemble = new_accountant.ExactAccountant._assemble


def keep(self, r):
    records.append((self, r))
    return _new_assemble(self, r)


new_accountant.ExactAccountant._assemble = keep
run(VERSIONS["new"], alloc.pair_rhos(13, 13))  # warm-up (kernels loaded)
records.clear()
for rnd in range(ROUNDS):
    for i, j in pairs:
        got = {}
        for which in (("old", "new") if rnd % 2 == 0 else ("new", "old")):
            times, got[which] = run(VERSIONS[which], alloc.pair_rhos(i, j))
            for k, t in zip(("delta", "epsilon", "tradeoff"), times):
                cpu[which][k] += t
        bad += got["old"] != got["new"]
n = len(pairs) * ROUNDS
print(f"{len(pairs)} pairs x {ROUNDS} rounds (base {BASE}); results differ: {bad}")
for which in VERSIONS:
    st = ", ".join(f"{k} {1000 * v / n:.2f}" for k, v in cpu[which].items())
    print(f"{which}: CPU ms/pair {st}; sum {1000 * sum(cpu[which].values()) / n:.2f}")
print("new/old: " + ", ".join(f"{k} {cpu['new'][k] / cpu['old'][k]:.3f}" for k in cpu["new"]))

new_accountant.ExactAccountant._assemble = _new_assemble
REPEAT = 3
FIELDS = ("d", "d_lo", "d_hi", "c", "c_lo", "c_hi", "p1", "p2")
asm = {"old": old_accountant.ExactAccountant._assemble, "new": _new_assemble}
us = {"old": 0.0, "new": 0.0}
with workdps(_DPS):
    same = all(bits([getattr(asm["old"](a, r), f) for f in FIELDS]) == bits([getattr(asm["new"](a, r), f) for f in FIELDS])
               for a, r in records)
    for rep in range(REPEAT):
        for which in (("old", "new") if rep % 2 == 0 else ("new", "old")):
            t = time.process_time()
            for a, r in records:
                asm[which](a, r)
            us[which] += time.process_time() - t
m = len(records) * REPEAT
print(f"_assemble on {len(records)} profiles x {REPEAT}: old {1e6 * us['old'] / m:.1f} µs, new {1e6 * us['new'] / m:.1f} µs "
      f"(new/old {us['new'] / us['old']:.3f}); same bits: {same}")
