"""The whole 2020 release, one pair at a time: what one release task of the sweep costs.

A release task (``exactdp sweep --with-pl94``, :func:`exactdp.sweep.pair.compute_pair` on the
DHC pair's ρ followed by the P.L. 94-171 persons chain's) is: a fresh accountant (the
lattice-free route: the composed lattice's scale is ≈ 1.6e23), δ at the Bureau's ε of the
sweep's 42 target δ, ε(δ) at the same 42 targets, and β = f(α) on the 401-point common α
grid.  For each pair this prints, after one warm-up pair (the JIT cache loaded):

* the CPU seconds (``time.process_time``, min of ``--reps``) of the whole task and of its
  stages (construction, δ, ε, β), with the count of δ-oracle points β spent;
* the widest certified bracket of each kind, as a relative *width* ``(upper − lower)/upper``
  (δ, ε and β alike; the sweep's files give δ's and β's half-widths).

``--widths N`` then checks the widths on N pairs spread over the 946 (every δ, ε, β of each).
CPU seconds, not wall time: the machine may be shared (the load average is printed).

Run:  python bench/bench_release.py [--reps 3] [--pairs 13-13,6-6,1-43] [--widths 41]
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.census.allocations import load_allocation
from exactdp.census.designs import PL94_ALLOCATION
from exactdp.mechanisms import Composition
from exactdp.sweep.pair import SweepSettings, grid_alphas

DEFAULT_PAIRS = "13-13,6-6,1-43,6-10,2-2,20-31,43-43"


def _width(lo, hi) -> float:
    with mpmath.workdps(40):
        return float((hi - lo) / hi) if hi > 0 else 0.0


def release_task(rhos, settings: SweepSettings, alphas) -> dict:
    """One release task, timed by stage; the widest relative widths; β's oracle points."""
    clock = time.process_time
    t0 = clock()
    acc = ExactAccountant(Composition.from_rhos(rhos), rel_tol=settings.rel_tol)
    t1 = clock()
    deltas = [Fraction(d) for d in settings.deltas]
    dpts = acc.delta([bun_steinke_epsilon(acc.rho, d) for d in deltas])
    t2 = clock()
    epts = acc.epsilon(deltas)
    t3 = clock()
    seen = [0]
    inner = acc.log_delta_at

    def counting(e_dn, e_up):
        seen[0] += len(e_dn)
        return inner(e_dn, e_up)

    acc.log_delta_at = counting
    tpts = acc.tradeoff(alphas)
    t4 = clock()
    return {"total": t4 - t0, "build": t1 - t0, "delta": t2 - t1, "epsilon": t3 - t2, "tradeoff": t4 - t3,
            "points": seen[0], "method": acc.method,
            "w_delta": max(_width(p.lower, p.upper) for p in dpts),
            "w_eps": max(_width(p.lower, p.upper) for p in epts),
            "w_beta": max(_width(p.lower, p.upper) for p in tpts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pairs", default=DEFAULT_PAIRS)
    ap.add_argument("--widths", type=int, default=0, help="check the widths on this many pairs (spread over all)")
    args = ap.parse_args()
    alloc = load_allocation("dhc-persons-2020")
    pl = load_allocation(PL94_ALLOCATION)
    settings = SweepSettings()
    alphas = [Fraction(t) for t in grid_alphas(settings)[0]]
    n = alloc.n_paths

    def rhos(i, j):
        return tuple(alloc.pair_rhos(i, j)) + tuple(pl.pair_rhos(1, 1))

    print(f"load average at start: {os.getloadavg()}")
    release_task(rhos(13, 13), settings, alphas)  # warm-up
    print(f"| pair | CPU-s (min of {args.reps}) | build | 42 δ | 42 ε(δ) | 401 β | β oracle points | widest δ | "
          "widest ε | widest β |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec in args.pairs.split(","):
        i, j = (int(v) for v in spec.split("-"))
        runs = [release_task(rhos(i, j), settings, alphas) for _ in range(args.reps)]
        best = min(runs, key=lambda r: r["total"])
        print(f"| {i}-{j} | {best['total']:.3f} | {best['build']:.3f} | {best['delta']:.3f} | {best['epsilon']:.3f} | "
              f"{best['tradeoff']:.3f} | {best['points']} | {best['w_delta']:.3g} | {best['w_eps']:.3g} | "
              f"{best['w_beta']:.3g} |", flush=True)
    if args.widths:
        pairs = [(i, j) for i in range(1, n + 1) for j in range(i, n + 1)]
        step = max(1, len(pairs) // args.widths)
        picked = pairs[::step][:args.widths]
        worst = {"w_delta": 0.0, "w_eps": 0.0, "w_beta": 0.0}
        cpu = []
        for i, j in picked:
            r = release_task(rhos(i, j), settings, alphas)
            cpu.append(r["total"])
            for k in worst:
                worst[k] = max(worst[k], r[k])
        print(f"\n{len(picked)} pairs (every {step}th of {len(pairs)}): widest δ {worst['w_delta']:.3g}, "
              f"ε {worst['w_eps']:.3g}, β {worst['w_beta']:.3g} (relative widths); CPU-s per pair "
              f"min {min(cpu):.3f}, median {sorted(cpu)[len(cpu) // 2]:.3f}, max {max(cpu):.3f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
