"""Benchmark: δ(ε) at 42 points for the DHC full-chain pair (13, 13), 160 mechanisms.

Compares exactdp's certified fast path (and one multiprecision verification) with
dp_accounting's PLD accountant at its default settings (pessimistic estimate,
value_discretization_interval=1e-4), composing the 12 distinct discrete Gaussians with
their multiplicities.  Reference values: exactdp's independent multiprecision
recomputation (``verify_delta``: its own finer rule, nodes and arithmetic) at every point.

Run:  pip install -e '.[bench]' && python bench/bench_delta.py
"""

from __future__ import annotations

import math
import platform
import time
from collections import Counter

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.accounting.verification import verify_delta
from exactdp.census.allocations import load_allocation
from exactdp.mechanisms import Composition
from exactdp.sweep.pair import DEFAULT_DELTAS


def main() -> None:
    alloc = load_allocation("dhc-persons-2020")
    rhos = alloc.pair_rhos(13, 13)
    comp = Composition.from_rhos(rhos)
    eps_list = [bun_steinke_epsilon(comp.rho, d) for d in DEFAULT_DELTAS]

    acc = ExactAccountant(comp)
    acc.delta(eps_list[:2])  # JIT warm-up (kernels are cached on disk after the first run)
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        acc = ExactAccountant(comp)
        pts = acc.delta(eps_list)
    t_fast = (time.perf_counter() - t0) / reps
    worst_rel = max(p.relative_error for p in pts)

    t0 = time.perf_counter()
    v = verify_delta(acc, eps_list[19])  # δ_target = 1e-10
    t_verify = time.perf_counter() - t0

    refs = [verify_delta(acc, e) for e in eps_list]
    dev_fast = max(float(abs(p.estimate / r.value - 1)) for p, r in zip(pts, refs))

    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    print(f"exactdp fast path: 42 points in {t_fast * 1e3:.1f} ms (one core), worst certified rel. error "
          f"{worst_rel:.2e}, max deviation from the 60-digit twin {dev_fast:.2e}")
    print(f"exactdp multiprecision verification of one point (δ≈{mpmath.nstr(v.value, 6)}): {t_verify:.1f} s, "
          f"agrees={v.agrees}")

    try:
        from dp_accounting.pld import privacy_loss_distribution as pld_mod
    except ImportError:
        print("dp_accounting not installed (pip install -e '.[bench]'): PLD comparison skipped")
        return
    t0 = time.perf_counter()
    pld = None
    for rho, count in Counter(rhos).items():
        sigma = math.sqrt(float(1 / rho))
        one = pld_mod.from_discrete_gaussian_mechanism(sigma, sensitivity=1)
        block = one.self_compose(count)
        pld = block if pld is None else pld.compose(block)
    pld_deltas = [pld.get_delta_for_epsilon(float(e(30))) for e in eps_list]
    t_pld = time.perf_counter() - t0
    print(f"dp_accounting PLD (defaults): build + 42 points in {t_pld:.2f} s")
    print(f"{'delta_target':>12} {'exact delta (60-digit)':>24} {'exactdp fast':>22} {'PLD':>12} {'PLD/exact':>10}")
    for d, r, p, q in zip(DEFAULT_DELTAS, refs, pts, pld_deltas):
        ratio = q / float(r.value) if r.value > 0 else float("nan")
        print(f"{d:>12} {mpmath.nstr(r.value, 15):>24} {mpmath.nstr(p.estimate, 15):>22} {q:>12.4e} {ratio:>10.3g}")


if __name__ == "__main__":
    main()
