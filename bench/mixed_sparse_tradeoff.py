"""β(α) of finite kinds beside discrete Gaussians: the fifth audit's "sparse" designs (FOUND 3 (d))
and designs where the discrete Gaussians' factor is large (the split's cost), CPU seconds.

    python bench/mixed_sparse_tradeoff.py                 # every row, min of 3 (fresh accountant + one β)
    python bench/mixed_sparse_tradeoff.py S1 S0 --reps 1  # some rows

Side by side with another checkout: ``PYTHONPATH=/path/to/other python bench/mixed_sparse_tradeoff.py``
(the rows import ``exactdp`` from there).  Each row prints the CPU seconds (``time.process_time``), the
bracket and its relative width, or the refusal.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import mpmath

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import ApproxDP, DiscreteLaplace, Mixture, RandomizedResponse


def _dg(s2, shift, n):
    return (DiscreteGaussian(s2, shift), n)


ROWS = {
    "S1": ((_dg("0.6282", 6, 17), (ApproxDP("1/10", "1e-9"), 3), (RandomizedResponse(3, 5), 19)), "1e-12"),
    "S3": ((_dg("0.295", -2, 17), _dg("0.177", -4, 23), (ApproxDP(2, "1e-300"), 2), (RandomizedResponse(1, 5), 21),
            (DiscreteLaplace(2, 3), 1)), "1e-3"),
    "S7": ((_dg("0.066", -8, 36), (RandomizedResponse(3), 18), (RandomizedResponse("1/1000", 5), 4)), "1e-3"),
    "S7near1": ((_dg("0.066", -8, 36), (RandomizedResponse(3), 18), (RandomizedResponse("1/1000", 5), 4)),
                1 - Fraction(1, 10**40)),
    "S0": ((_dg("1.0316", 6, 35), (ApproxDP(1, 0), 1), (RandomizedResponse(5), 8), (RandomizedResponse("1/2", 3), 6)),
           "1e-3"),
    "S8": ((_dg("0.8294", -2, 34), (ApproxDP(0, "1e-9"), 3), (RandomizedResponse("1/2"), 4)), "1e-3"),
    "dlmix3": (((DiscreteLaplace("0.37", 3), 5), _dg("25.06", 3, 2), (RandomizedResponse(1, 5), 3)), "1e-9"),
    "large39k": ((_dg("100.37", 1, 50), (RandomizedResponse("1/2"), 5), (ApproxDP("1/10", "1e-10"), 2)), "1/10"),
    "large120k": ((_dg("300.37", 1, 90), (RandomizedResponse("1/2"), 5)), "1/10"),
}


def run(name: str, reps: int) -> str:
    groups, alpha = ROWS[name]
    mix = Mixture(groups)
    best, res = None, ""
    for _ in range(reps):
        t = time.process_time()
        try:
            pt = ExactAccountant(mix).tradeoff([alpha])[0]
            rel = (pt.upper - pt.lower) / pt.upper if pt.upper else 0
            res = f"[{mpmath.nstr(pt.lower, 15)}, {mpmath.nstr(pt.upper, 15)}] rel {mpmath.nstr(rel, 3)}"
        except Exception as exc:  # noqa: BLE001  (a refusal is a result here)
            res = f"{type(exc).__name__}: {str(exc)[:90]}"
        dt = time.process_time() - t
        best = dt if best is None else min(best, dt)
    return f"{name:10s} {best:7.2f} CPU-s  {res}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="*", default=list(ROWS))
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    for name in a.rows:
        print(run(name, a.reps), flush=True)


if __name__ == "__main__":
    main()
