"""The planner's designs beside dp_accounting's PLD, in one process (bench/planner.md).

Two design classes of the issue "One core that can grow": 10,000 distinct variances (the
lattice route does not fit; the planner decides that from a bound on the lattice weights
without building the lattice) and integer lattices with one decimal group.  For each, in the
same process, alternating, after one warm-up run (the JIT cache loaded):

* exactdp: a fresh ``ExactAccountant`` (the planner picks the route), δ at the Bureau's ε of
  20 targets (δ = 10⁻¹ … 10⁻²⁰), ε(δ) at 3 targets and β(α) at 3 points, every number
  certified; CPU seconds (``time.process_time``, fairer than wall time on a shared host)
  split into construction and queries, the route, the planner's estimate and the widest
  certified relative bracket;
* dp_accounting's PLD at its defaults (pessimistic, 1e-4): compose, the same 20 δ and 3 ε
  (it has no trade-off query); CPU seconds.

``--lattice-of N`` also times what the planner no longer does for a design of N distinct
variances: the exact lattice's gcds (``lattice_of``) beside the weight bound that replaces it.

Run:  pip install -e '.[bench]' && python bench/bench_planner.py [--reps 3] [--only TEXT]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from fractions import Fraction

# the same workload and the same PLD side as bench_designs.py (one definition of each)
from bench_designs import ALPHAS, EPS_TARGETS, TARGETS, _design, run_pld

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.engine.lattice import lattice_of, weights_exceed
from exactdp.mechanisms import Composition


def distinct(n: int) -> Composition:
    """n distinct variances (1000 + 7j)/13, shift 1, count 1."""
    return _design([(str(Fraction(1000 + 7 * j, 13)), 1, 1) for j in range(n)])


def designs() -> list:
    """(name, Composition, PLD runs) of the benchmark designs."""
    return [
        ("10,000 distinct σ² (1000 + 7j)/13", distinct(10_000), 1),
        ("integers 50 ×30, 80 ×30 + 3.3", _design([("50", 30, 1), ("80", 30, 1), ("3.3", 1, 1)]), 3),
        ("integers 10 ×100, 20 ×50 + 1.5 ×3", _design([("10", 100, 1), ("20", 50, 1), ("1.5", 3, 1)]), 3),
        ("integers 3 ×4, 5 ×3, 10 ×5 + 2.37", _design([("3", 4, 1), ("5", 3, 1), ("10", 5, 1), ("2.37", 1, 1)]), 3),
    ]


def run_exactdp(comp: Composition) -> tuple:
    """(CPU s total, CPU s construction, route, estimate, worst relative width)."""
    t0 = time.process_time()
    acc = ExactAccountant(comp)
    t1 = time.process_time()
    rho = acc.rho  # the design's ρ once (Composition.rho sums every group again)
    d = acc.delta([bun_steinke_epsilon(rho, t) for t in TARGETS])
    e = acc.epsilon(EPS_TARGETS)
    b = acc.tradeoff(ALPHAS)
    t2 = time.process_time()

    def width(p):
        return float((p.upper - p.lower) / p.upper) if p.upper > 0 else 0.0

    diag = acc.diagnostics()
    return t2 - t0, t1 - t0, f"{diag.route} ({diag.method})", diag.route_estimate, max(map(width, d + e + b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="exactdp runs per design (min reported)")
    ap.add_argument("--only", help="run the designs whose name contains this text")
    ap.add_argument("--lattice-of", type=int, default=0, metavar="N",
                    help="also time lattice_of and the weight bound for N distinct variances")
    ap.add_argument("--small-warmup", action="store_true",
                    help="warm up on 300 distinct variances (the same kernels) instead of the design itself")
    ap.add_argument("--no-pld", action="store_true", help="exactdp only")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.lattice_of:
        comp = distinct(args.lattice_of)
        t0 = time.process_time()
        exceeds = weights_exceed(comp)
        t1 = time.process_time()
        lattice_of(comp)
        t2 = time.process_time()
        print(f"{args.lattice_of} distinct σ²: weight bound {t1 - t0:.4f} CPU-s (beyond int64: {exceeds}), "
              f"lattice_of {t2 - t1:.2f} CPU-s")
    print(f"{'design':<38} {'route':<42} {'estimate':>9} {'exactdp CPU':>11} {'build':>7} {'PLD CPU':>8} "
          f"{'target':>7} {'worst width':>11}")
    for name, comp, pld_runs in designs():
        if args.only and args.only not in name:
            continue
        run_exactdp(distinct(300) if args.small_warmup else comp)  # warm-up: kernels loaded
        runs, plds = [], []
        for k in range(max(args.reps, pld_runs)):  # alternating, in one process
            if k < args.reps:
                runs.append(run_exactdp(comp))
                if k == 0:  # the first exactdp run, before PLD (which may take minutes)
                    print(f"{name:<38} {runs[0][2]:<42} {runs[0][3]:>9.2g} {runs[0][0]:>10.3f}s "
                          f"{runs[0][1]:>6.3f}s  (first run; PLD follows)", flush=True)
            if k < pld_runs and not args.no_pld:
                plds.append(run_pld(comp))
        best = min(runs)
        tp = min(plds) if plds else math.nan
        target = max(tp, 0.5)
        ok = "ok" if best[0] <= target else "SLOW"
        print(f"{name:<38} {best[2]:<42} {best[3]:>9.2g} {best[0]:>10.3f}s {best[1]:>6.3f}s {tp:>7.3f}s "
              f"{ok:>7} {best[4]:>11.1e}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
