"""Any design a user types: exactdp beside dp_accounting's PLD, in one run.

For each design of the list below — the rows of the "any design" issue (decimal variances
that share no small lattice, many distinct variances, ρ in the hundreds), DHC pair 6-10 and
the README's generic design — it times, in the same process and after one warm-up (the
JIT cache loaded):

* exactdp: a fresh ``ExactAccountant`` (its planner picks the route: the int64 lattice or
  the lattice-free one), δ at the Bureau's ε of 20 targets (δ = 10⁻¹ … 10⁻²⁰), ε(δ) at 3
  targets (10⁻², 10⁻⁶, 10⁻¹⁰) and β(α) at 3 points (0.01, 0.5, 0.9); every number certified;
  the widest certified relative bracket of each kind is printed;
* dp_accounting's PLD at its defaults (pessimistic, discretisation 1e-4): build the
  composed PLD, the same 20 δ and 3 ε (its trade-off has no query).

The issue's target: exactdp's total ≤ max(PLD's total, 0.5 s).  Times are CPU seconds of
the process (``time.process_time``: fair on a shared machine, where wall times are not); the
load average is printed.  Where PLD raises (dp_accounting fails on near-deterministic σ²),
its column says so and the target is 0.5 s.

With ``--products`` the rows are the built-in products' cases (``exactdp product``; the
first and the last case of each, every case with ``--all-cases``) under ``--budget-rule``
(default ``tumult-float``, the production floats), each timed the same way.

Run:  pip install -e '.[bench]' && python bench/bench_designs.py [--reps 3] [--only NAME]
      python bench/bench_designs.py --products [--all-cases] [--budget-rule decimal]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections import Counter
from fractions import Fraction

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.census.allocations import load_allocation
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError

TARGETS = [Fraction(1, 10**k) for k in range(1, 21)]
EPS_TARGETS = ["1e-2", "1e-6", "1e-10"]
ALPHAS = ["0.01", "0.5", "0.9"]


def _design(spec) -> Composition:
    """``spec``: [(σ² text, count, shift)] → Composition."""
    return Composition(tuple((DiscreteGaussian(s2, shift), count) for s2, count, shift in spec))


def designs() -> list:
    """(name, Composition) of the benchmark designs."""
    two = [f"{100 + 37.13 * j:.2f}" for j in range(10)]
    three = [f"{100 + 37.137 * j:.3f}" for j in range(20)]
    alloc = load_allocation("dhc-persons-2020")
    return [
        ("5 one-decimal σ² (174.9, 1522.8, 113.4, 1301.5, 210.5)",
         _design([(v, 1, 1) for v in ("174.9", "1522.8", "113.4", "1301.5", "210.5")])),
        ("5 two-decimal σ² (778.26 … 2811.13)",
         _design([(v, 1, 1) for v in ("778.26", "2077.87", "2869.59", "1342.24", "2811.13")])),
        ("3 three-decimal σ² ×10 (2588.462, 1361.867, 1018.116)",
         _design([(v, 10, 1) for v in ("2588.462", "1361.867", "1018.116")])),
        ("10 distinct two-decimal σ² ×10", _design([(v, 10, 1) for v in two])),
        ("20 distinct three-decimal σ² ×10", _design([(v, 10, 1) for v in three])),
        ("12 two-decimal σ² (1.21 … 42.42)",
         _design([(v, 1, 1) for v in ("1.21", "19.66", "485.92", "1214.81", "2429.62", "3.17", "77.7", "5.55",
                                      "12.34", "250.01", "999.99", "42.42")])),
        ("60 distinct σ² = (50 + 83j)/11", _design([(str(Fraction(50 + 83 * j, 11)), 1, 1) for j in range(60)])),
        ("ρ ≈ 400: 33.3333×2 s8, 485.92 s−8, 9.8696×11 s7, 1.21×36 s−5",
         _design([("33.3333", 2, 8), ("485.92", 1, -8), ("9.8696", 11, 7), ("1.21", 36, -5)])),
        ("3 groups, 3-digit denominators, counts 2–6",
         _design([("1234/567", 2, 1), ("9876/543", 4, 1), ("4567/891", 6, 1)])),
        ("1,000 distinct σ² = (1000 + 7j)/13", _design([(str(Fraction(1000 + 7 * j, 13)), 1, 1) for j in range(1000)])),
        ("4 small decimal σ² (1.1, 2.37, 3.14159, 7/3)",
         _design([(v, 1, 1) for v in ("1.1", "2.37", "3.14159", "7/3")])),
        ("DHC pair 6-10 (coarse)", Composition.from_rhos(alloc.pair_rhos(6, 10))),
        ("generic 10000/11×20 + 2.5025", _design([("10000/11", 20, 1), ("2.5025", 1, 1)])),
        ("30 near-deterministic σ² in [0.001, 0.004], shifts 1–3",
         _design([(str(Fraction(1000 + (97 * j) % 3000, 10**6)), 1, 1 + j % 3) for j in range(30)])),
        ("ρ ≈ 375: 1.7×38 s3, 2.35×20 s−5, 0.613×12 s2, 3.1×30 s3, 5.27×25 s6",
         _design([("1.7", 38, 3), ("2.35", 20, -5), ("0.613", 12, 2), ("3.1", 30, 3), ("5.27", 25, 6)])),
        ("tiny + large: 0.05, 0.37, 1.0 s−1, 2429.62×10, 485.92×20",
         _design([("0.05", 1, 1), ("0.37", 1, 1), ("1.0", 1, -1), ("2429.62", 10, 1), ("485.92", 20, 1)])),
        ("3 groups: 0.63, 11.7×2 s8, 27.3 s12",
         _design([("0.63", 1, 1), ("11.7", 2, 8), ("27.3", 1, 12)])),
        ("8 distinct two-decimal σ² in [2.5, 4.5]",
         _design([(v, 1, 1) for v in ("2.91", "3.14", "3.47", "3.02", "2.58", "4.12", "3.77", "2.83")])),
        ("10 distinct three-decimal σ² in [10, 12]",
         _design([(f"{10 + 0.213 * j + 0.001 * (j * j % 7):.3f}", 1, 1) for j in range(10)])),
        *[(f"10 distinct three-decimal σ² near {b} ({b} + {step}j + 0.001(j² mod 7))",
           _design([(f"{b + step * j + 0.001 * (j * j % 7):.3f}", 1, 1) for j in range(10)]))
          for b, step in ((5, 0.1), (7, 0.15), (8, 0.15), (20, 0.2))],
        ("9 distinct two-decimal σ² in [0.5, 0.9]",
         _design([(v, 1, 1) for v in ("0.51", "0.57", "0.62", "0.66", "0.71", "0.74", "0.79", "0.83", "0.88")])),
        ("8 distinct two-decimal σ² in [40, 45]",
         _design([(v, 1, 1) for v in ("40.17", "40.83", "41.29", "42.06", "42.71", "43.38", "44.02", "44.91")])),
        *[(f"10 distinct two-decimal σ² in [2.5, 4.5], shift {shift}",
           _design([(v, 1, shift) for v in ("2.53", "2.71", "2.96", "3.18", "3.37", "3.59", "3.82", "4.03", "4.26",
                                            "4.47")]))
          for shift in (2, 3)],
        ("10 distinct σ² in [1.18, 1.28] ×2, shift 1 (ρ ≈ 8)",
         _design([(v, 2, 1) for v in ("1.21", "1.28", "1.20", "1.23", "1.25", "1.27", "1.19", "1.24", "1.26",
                                      "1.18")])),
        ("10 distinct σ² in [1.18, 1.28] ×1–3, shift 2 (audit4 narrow #2)",
         _design([("1.21", 3, 2), ("1.28", 2, 2), ("1.20", 1, 2), ("1.23", 2, 2), ("1.25", 3, 2), ("1.27", 3, 2),
                  ("1.19", 3, 2), ("1.24", 3, 2), ("1.26", 1, 2), ("1.18", 2, 2)])),
    ]


#: the built-in products (``exactdp product``), each timed per case under ``--products``
PRODUCTS = ("safetab-p-2020-us", "safetab-p-2020-pr", "safetab-h-2020-us", "safetab-h-2020-pr", "phsafe-2020-us",
            "phsafe-2020-pr")


def product_designs(rule: str = "tumult-float", all_cases: bool = False) -> list:
    """(name, Composition) of each built-in product's cases under the budget rule ``rule``:
    the first and the last case (every case with ``all_cases``), each a design of its own
    (a product's answer is the worst over its cases; the issue times each case's work)."""
    from exactdp.census.products import load_product

    out = []
    for name in PRODUCTS:
        prod = load_product(name)
        cases = range(1, prod.n_cases + 1) if all_cases else sorted({1, prod.n_cases})
        for i in cases:
            out.append((f"{name} case {i}/{prod.n_cases} ({rule})", prod.case_composition(i, rule)))
    return out


def run_exactdp(comp: Composition) -> tuple:
    """(seconds, route, worst δ, ε, β relative widths) of one fresh accountant and its queries."""
    t0 = time.process_time()
    acc = ExactAccountant(comp)
    rho = acc.rho  # once (Composition.rho sums every group again: seconds for 10,000 distinct σ²)
    d = acc.delta([bun_steinke_epsilon(rho, t) for t in TARGETS])
    e = acc.epsilon(EPS_TARGETS)
    b = acc.tradeoff(ALPHAS)
    t = time.process_time() - t0

    def width(p):
        return float((p.upper - p.lower) / p.upper) if p.upper > 0 else 0.0

    route = getattr(acc, "method", None) or acc.diagnostics().method
    return t, route, max(map(width, d)), max(map(width, e)), max(map(width, b))


def run_pld(comp: Composition) -> float:
    """Seconds of dp_accounting's PLD (defaults): compose, 20 δ, 3 ε."""
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    t0 = time.process_time()
    blocks = Counter()
    for m, c in comp.groups:  # ±shift are the same mechanism to PLD: merge their counts
        if m.shift:
            blocks[(m.sigma2, abs(m.shift))] += c
    pld = None
    for (s2, shift), count in blocks.items():
        one = pld_mod.from_discrete_gaussian_mechanism(math.sqrt(float(s2)), sensitivity=shift)
        block = one.self_compose(count) if count > 1 else one
        pld = block if pld is None else pld.compose(block)
    rho = comp.rho  # once, as on exactdp's side
    for t in TARGETS:
        pld.get_delta_for_epsilon(float(bun_steinke_epsilon(rho, t)(30)))
    for d in EPS_TARGETS:
        pld.get_epsilon_for_delta(float(d))
    return time.process_time() - t0


def _pld_or_none(comp: Composition):
    """PLD's seconds, or None where dp_accounting fails on the design (an exception)."""
    try:
        return run_pld(comp)
    except Exception:  # noqa: BLE001 - dp_accounting's own failure (e.g. IndexError on near-deterministic σ²)
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="exactdp runs per design (min and median reported)")
    ap.add_argument("--only", help="run the designs whose name contains this text")
    ap.add_argument("--products", action="store_true",
                    help="the built-in products' cases (first and last; --budget-rule) instead of the designs")
    ap.add_argument("--all-cases", action="store_true", help="with --products: every case")
    ap.add_argument("--budget-rule", default="tumult-float", help="with --products (default tumult-float)")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(f"{'design':<58} {'route':<34} {'exactdp min':>11} {'median':>8} {'PLD':>8} {'target':>7} "
          f"{'δ width':>8} {'ε width':>8} {'β width':>8}")
    rows = product_designs(args.budget_rule, args.all_cases) if args.products else designs()
    for name, comp in rows:
        if args.only and args.only not in name:
            continue
        try:
            run_exactdp(comp)  # warm-up: kernels loaded
        except UncertifiedError as exc:  # a refusal is a row of the table too
            print(f"{name:<58} refused (exit 3): {str(exc)[:90]}  PLD {_pld_or_none(comp)}", flush=True)
            continue
        runs = [run_exactdp(comp) for _ in range(args.reps)]
        times = [r[0] for r in runs]
        _, route, wd, we, wb = runs[-1]
        tp = _pld_or_none(comp)
        target = max(tp or 0.0, 0.5)
        ok = "ok" if min(times) <= target else "SLOW"
        pld_text = f"{tp:>7.3f}s" if tp is not None else " failed"
        print(f"{name:<58} {route:<34} {min(times):>10.3f}s {statistics.median(times):>7.3f}s {pld_text} "
              f"{ok:>7} {wd:>8.1e} {we:>8.1e} {wb:>8.1e}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
