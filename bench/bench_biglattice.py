"""Benchmark: designs beyond the int64 lattice (issue 11).

* P.L. 94-171 persons full chain (130 mechanisms, lattice scale 1.1e14): δ at the 42
  Bureau ε (accountant construction included) and ε at the 42 targets, with the
  certified bracket widths; dp_accounting's PLD (default settings) on the same design in
  the same run;
* the whole release, pair 13-13 (DHC ∘ P.L. 94-171, 290 mechanisms, scale 1.6e23);
* the issue's refused generic designs.

Run:  pip install -e '.[bench]' && python bench/bench_biglattice.py
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections import Counter

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.census.allocations import load_allocation
from exactdp.census.designs import release_composition
from exactdp.mechanisms import Composition
from exactdp.sweep.pair import DEFAULT_DELTAS


def _rel(p):
    return float((p.upper - p.lower) / p.upper) if p.upper > 0 else 0.0


def main() -> None:
    print(f"machine: {platform.machine()} python {platform.python_version()} load {os.getloadavg()[0]:.2f}")
    rhos = load_allocation("pl94-persons-2020").pair_rhos(1, 1)
    comp = Composition.from_rhos(rhos)
    eps_list = [bun_steinke_epsilon(comp.rho, d) for d in DEFAULT_DELTAS]
    ExactAccountant(comp).delta(eps_list[:1])  # JIT warm-up and the sieve's arc cache
    t0 = time.perf_counter()
    acc = ExactAccountant(comp)
    t_build = time.perf_counter() - t0
    pts = acc.delta(eps_list)
    t_delta = time.perf_counter() - t0
    t0 = time.perf_counter()
    eps = acc.epsilon(DEFAULT_DELTAS)
    t_eps = time.perf_counter() - t0
    print(f"P.L. 94-171 persons: {acc.method} ({acc.certification}), {acc.tails.nodes_kept} nodes, "
          f"{acc.tails.n_windows} resonance windows below |u| = {acc.tails.u_max:.3g}")
    print(f"  42 δ at the Bureau's ε: {t_delta:.2f} s (construction {t_build:.2f} s); worst bracket "
          f"{max(_rel(p) for p in pts):.2e} relative")
    print(f"  42 ε(δ): {t_eps:.2f} s; worst bracket {max(_rel(e) for e in eps):.2e} relative")
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld_mod
    except ImportError:
        print("dp_accounting not installed (pip install -e '.[bench]'): PLD comparison skipped")
        pld_deltas = None
    else:
        t0 = time.perf_counter()
        pld = None
        for rho, count in Counter(rhos).items():
            one = pld_mod.from_discrete_gaussian_mechanism(math.sqrt(float(1 / rho)), sensitivity=1)
            block = one.self_compose(count)
            pld = block if pld is None else pld.compose(block)
        pld_deltas = [pld.get_delta_for_epsilon(float(e(30))) for e in eps_list]
        print(f"  dp_accounting PLD (defaults): build + 42 points in {time.perf_counter() - t0:.2f} s")
    print(f"  {'target δ':>8} {'ε_Bureau':>12} {'exact δ lower':>22} {'exact δ upper':>22} {'exact ε(δ) upper':>20}"
          + (f" {'PLD δ':>11} {'PLD/exact':>9}" if pld_deltas else ""))
    for k, (d, p, e) in enumerate(zip(DEFAULT_DELTAS, pts, eps)):
        if d not in ("1e-1", "1e-2", "1e-6", "1e-10", "1e-14", "1e-17", "1e-21"):
            continue
        line = (f"  {d:>8} {mpmath.nstr(p.epsilon, 10):>12} {mpmath.nstr(p.lower, 15):>22} "
                f"{mpmath.nstr(p.upper, 15):>22} {mpmath.nstr(e.upper, 14):>20}")
        if pld_deltas:
            line += f" {pld_deltas[k]:>11.4e} {pld_deltas[k] / float(p.upper):>9.3g}"
        print(line)

    comp = release_composition("dhc-persons-2020", 13, 13)
    t0 = time.perf_counter()
    acc = ExactAccountant(comp)
    (p,) = acc.delta([bun_steinke_epsilon(comp.rho, "1e-10")])
    (e,) = acc.epsilon(["1e-10"])
    print(f"whole release 13-13 ({acc.diagnostics().method}): δ(ε_Bureau = {mpmath.nstr(p.epsilon, 10)}) ∈ "
          f"[{mpmath.nstr(p.lower, 12)}, {mpmath.nstr(p.upper, 12)}] (rel. width {_rel(p):.2e}); ε(1e-10) ∈ "
          f"[{mpmath.nstr(e.lower, 14)}, {mpmath.nstr(e.upper, 14)}]; {time.perf_counter() - t0:.2f} s")

    for name, sig in (("121/100, 12148/25, 121481/100 at ε = 1", (("121/100", 1), ("12148/25", 1), ("121481/100", 1))),
                      ("1214.81x4, 2429.62x3, 485.92x2, 19.66, 1.21 at ε = 5",
                       (("1214.81", 4), ("2429.62", 3), ("485.92", 2), ("19.66", 1), ("1.21", 1)))):
        from fractions import Fraction

        from exactdp.mechanisms import DiscreteGaussian

        c = Composition(tuple((DiscreteGaussian(Fraction(s)), m) for s, m in sig))
        t0 = time.perf_counter()
        acc = ExactAccountant(c)
        (p,) = acc.delta([Fraction(1) if "ε = 1" in name else Fraction(5)])
        print(f"{name}: δ = {mpmath.nstr(p.value, 15)} ({acc.certification}, {acc.diagnostics().method}, "
              f"rel. bound {float(p.error_bound / p.estimate):.1e}); {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        eps = acc.epsilon(list(DEFAULT_DELTAS))
        trade = acc.tradeoff(["1e-6", "1e-3", "1/10", "1/2", "9/10"])
        print(f"  then 42 ε(δ) + 5 β(α): {time.perf_counter() - t0:.2f} s; worst ε bracket "
              f"{max(_rel(e) for e in eps):.1e}, worst β bracket {max(_rel(t) for t in trade):.1e} relative")

    # beyond the single split: five incommensurate groups (meet in the middle), and a
    # near-deterministic σ² = 1/500 group (shifted thresholds, staircase ε(δ))
    from fractions import Fraction

    from exactdp.mechanisms import DiscreteGaussian

    F = Fraction
    for name, design in (
            ("5 incommensurate groups (scale > 1e30)",
             ((F(71234567, 9999991), 1, 1), (F(39182731, 9999973), 1, 2), (F(13010111, 9999937), 1, 1),
              (F(50000017, 9999943), 2, 1), (F(27182819, 9999929), -1, 3))),
            ("σ² = 1/500 (shift 1) with 12130437/9999991 ×2 (shift 2), 37186674/9999991 ×3",
             ((F(1, 500), 1, 1), (F(12130437, 9999991), 2, 2), (F(37186674, 9999991), 1, 3)))):
        c = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in design))
        t0 = time.perf_counter()
        acc = ExactAccountant(c)
        dl = acc.delta([bun_steinke_epsilon(c.rho, d) for d in DEFAULT_DELTAS])
        t1 = time.perf_counter()
        eps = acc.epsilon(list(DEFAULT_DELTAS))
        print(f"{name}: {acc.diagnostics().method} ({acc.certification}); 42 δ {t1 - t0:.2f} s "
              f"(worst {max(_rel(p) for p in dl):.1e} rel.), 42 ε(δ) {time.perf_counter() - t1:.2f} s "
              f"(worst {max(_rel(e) for e in eps):.1e})")


if __name__ == "__main__":
    main()
