"""Continuous Gaussians beside discrete Gaussians too fine for exact windows (issue 35), side by side
with dp_accounting's PLD in one process (CPU seconds, min of REPEAT runs on a fresh accountant).

    python bench/bench_gaussian_beside.py [--only NAME]

Before this route these designs were refused (InputError "continuous Gaussians beside discrete
Gaussians whose common grid is too fine for exact windows"); the numbers in
bench/gaussian_beside_oracle.md come from this script.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from bench_mixed import timed as _timed  # (bench/ is the script's path)

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import ApproxDP, DiscreteLaplace, Gaussian, Mixture

REPEAT = 2

DESIGNS = {
    "audit: DG(670.8489, -3)x25, DLap(0.37, 2)x3, Gaussian(2.25, 1/2)x3": (
        ((DiscreteGaussian("670.8489", -3), 25), (DiscreteLaplace("0.37", 2), 3), (Gaussian("2.25", "1/2"), 3)),
        ["1", "3", "8"]),
    "DG(7.3129, 1)x2, approx(0.37, 1e-9), Gaussian(2.25, 1/2)x3": (
        ((DiscreteGaussian("7.3129", 1), 2), (ApproxDP("0.37", "1e-9"), 1), (Gaussian("2.25", "1/2"), 3)),
        ["1/2", "3", "6"]),
    "DG(45.8263, -6)x34, DG(3.1416, 1)x7, DLap(5/2, 1)x10, Gaussian(4, 1)x5": (
        ((DiscreteGaussian("45.8263", -6), 34), (DiscreteGaussian("3.1416", 1), 7), (DiscreteLaplace("5/2", 1), 10),
         (Gaussian("4", 1), 5)),
        ["2", "6", "12"]),
}


def exact_side(groups, eps, more: bool) -> tuple:
    acc = ExactAccountant(Mixture(groups))
    pts = acc.delta(eps)
    if more:
        acc.epsilon(["1e-6"])
        acc.tradeoff(["1/10"])
    return acc, pts


def pld_side(groups, eps) -> list:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for m, c in groups:
        if isinstance(m, DiscreteLaplace):
            one = pld.from_discrete_laplace_mechanism(float(1 / m.scale), sensitivity=abs(m.shift))
        elif isinstance(m, ApproxDP):
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(float(m.epsilon), float(m.delta)))
        elif isinstance(m, Gaussian):
            one = pld.from_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=float(abs(m.shift)))
        else:
            one = pld.from_discrete_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=abs(m.shift))
        block = one.self_compose(c) if c > 1 else one
        total = block if total is None else total.compose(block)
    assert total is not None
    out = [total.get_delta_for_epsilon(float(Fraction(e))) for e in eps]
    total.get_epsilon_for_delta(1e-6)
    return out


def timed(f, *args) -> tuple:
    return _timed(f, *args, repeat=REPEAT)


def main() -> None:
    print("| design | exactdp δ at 3 ε (CPU s) | + ε(1e-6), β(1/10) | PLD δ at 3 ε + ε(1e-6) (CPU s) "
          "| method | δ at the last ε: exactdp [lower, upper] / PLD (pessimistic) |")
    print("|---|---|---|---|---|---|", flush=True)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for name, (groups, eps) in DESIGNS.items():
        if only not in name:
            continue
        exact_side(groups, eps, True)  # untimed: the kernels' first load (Numba cache)
        t_ex, (acc, pts) = timed(exact_side, groups, eps, False)
        t_more = timed(exact_side, groups, eps, True)[0]
        t_pld, pld_vals = timed(pld_side, groups, eps)
        p = pts[-1]
        print(f"| {name} | {t_ex:.3f} | {t_more:.3f} | {t_pld:.3f} | {acc.method} | "
              f"[{float(p.lower):.12g}, {float(p.upper):.12g}] / {pld_vals[-1]:.12g} |", flush=True)


if __name__ == "__main__":
    main()
