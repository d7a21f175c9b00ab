"""Continuous Laplaces beside continuous Gaussians: exactdp's certified answers against
dp_accounting's PLD on the same work, in one process.

Run: ``python bench/bench_laplace_beside.py`` (writes nothing; the table it prints is recorded
in ``bench/laplace_beside.md``).  Times are CPU seconds (``time.process_time``), the minimum of
``REPEAT`` runs, each a fresh accountant answering δ at the design's ε values (then also one
ε(δ = 1e-6) and one β(α = 1/10)), after one untimed run.  PLD: ``value_discretization_interval
= 1e-4``, pessimistic, composed group by group with ``self_compose``.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from bench_mixed import timed as _timed  # (bench/ is the script's path)

from exactdp import DiscreteGaussian, DiscreteLaplace, ExactAccountant, Gaussian, Mixture
from exactdp.kinds.laplace import Laplace
from exactdp.numerics.errors import UncertifiedError

REPEAT = 3
REFUSED: dict = {}
DESIGNS = {
    "Laplace(5/2) + Gaussian(9/4, shift 1/2) x3": (((Laplace("5/2"), 1), (Gaussian("9/4", "1/2"), 3)),
                                                   ["0.5", "1", "2"]),
    "Laplace(10) x10 + Gaussian(25) x12": (((Laplace(10), 10), (Gaussian(25), 12)), ["0.5", "1", "2"]),
    "Laplace(1/2) x3 + Gaussian(4) x2 + DLap(5/2) x3": (((Laplace("1/2"), 3), (Gaussian(4), 2),
                                                        (DiscreteLaplace("5/2"), 3)), ["4", "6", "8"]),
    # beside discrete Gaussians too (the Laplaces' MGF a factor of the Gaussian-smoothed inversion)
    "audit design 12: Laplace(1, 2) + Gaussian(100) x2 + DG(42.0105, 3) x36": (
        ((Laplace(1, 2), 1), (Gaussian(100), 2), (DiscreteGaussian("42.0105", 3), 36)), ["0", "1", "40"]),
    "Laplace(1/2) + Gaussian(4) + DG(1/2) x2": (((Laplace("1/2"), 1), (Gaussian(4), 1), (DiscreteGaussian("1/2"), 2)),
                                               ["0", "1", "6"]),
    "Laplace(1) x2 + Gaussian(2) + DG(1/5) + DG(0.200001, -1) (too fine for windows)": (
        ((Laplace(1), 2), (Gaussian(2), 1), (DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1)),
        ["0", "1", "3"]),
    "Laplace(1/2) x3 + Gaussian(4) x2 + DLap(5/2) x3 + DG(7.82, 6) x21": (
        ((Laplace("1/2"), 3), (Gaussian(4), 2), (DiscreteLaplace("5/2"), 3), (DiscreteGaussian("7.82", 6), 21)),
        ["4", "6", "8"]),
    # no continuous Gaussian, discrete Gaussians too fine for windows (refused before): their joint atoms
    # summed against the Laplaces' closed form (accounting/laplace_atoms.py)
    "Laplace(1/2) x3 + DG(2.71828) x2 + DG(3.14159) x2 (no Gaussian)": (
        ((Laplace("1/2"), 3), (DiscreteGaussian("2.71828"), 2), (DiscreteGaussian("3.14159"), 2)), ["0", "1", "5"]),
    "Laplace(1) x2 + DG(1/5) + DG(0.200001, -1) (no Gaussian)": (
        ((Laplace(1), 2), (DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1)), ["0", "1", "4"]),
    "Laplace(10) x40 + DG(1/5) + DG(0.200001, -1) (no Gaussian)": (
        ((Laplace(10), 40), (DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1)),
        ["0.5", "1", "3"]),
    "Laplace(1, 2) + DG(42.0105, 3) x36 + DG(2.09, -6) (no Gaussian)": (
        ((Laplace(1, 2), 1), (DiscreteGaussian("42.0105", 3), 36), (DiscreteGaussian("2.09", -6), 1)),
        ["0", "1", "20"]),
    # Laplaces of several |shift|/scale (refused before): the closed form over their merged knots
    "Laplace(1) + Laplace(3) x2 (several μ)": (((Laplace(1), 1), (Laplace(3), 2)), ["0", "1", "3/2"]),
    "Laplace(1/2) x3 + Laplace(2) x2 + Laplace(5) x4 (several μ)": (
        ((Laplace("1/2"), 3), (Laplace(2), 2), (Laplace(5), 4)), ["0", "4", "7"]),
    "Laplace(1) + Laplace(3) x2 + Gaussian(4) (several μ)": (((Laplace(1), 1), (Laplace(3), 2), (Gaussian(4), 1)),
                                                             ["0", "1", "4"]),
    "Laplace(1) + Laplace(2) + DG(1/5) + DG(0.200001, -1) (several μ, no Gaussian)": (
        ((Laplace(1), 1), (Laplace(2), 1), (DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1)),
        ["0", "1", "4"]),
    "Laplace(1) + Laplace(2) + Gaussian(4) + DG(1/2) x2 (several μ)": (
        ((Laplace(1), 1), (Laplace(2), 1), (Gaussian(4), 1), (DiscreteGaussian("1/2"), 2)), ["0", "1", "6"]),
    # no continuous Gaussian, more than 200,000 joint atoms at 200 nats (refused before): enumerated from 80 or 40
    "Laplace(1) + DG(150) + DG(151.7) (no Gaussian, 245,021 atoms at 200 nats)": (
        ((Laplace(1), 1), (DiscreteGaussian("150"), 1), (DiscreteGaussian("151.7"), 1)), ["0", "1", "3/2"]),
    "Laplace(1) + DG(2.71828) x2 + DG(3.14159) x2 + DG(1.41421) x2 (no Gaussian, 723,135 atoms at 200 nats)": (
        ((Laplace(1), 1), (DiscreteGaussian("2.71828"), 2), (DiscreteGaussian("3.14159"), 2),
         (DiscreteGaussian("1.41421"), 2)), ["0", "1", "3"]),
}


def exact_side(groups, eps, more: bool):
    acc = ExactAccountant(Mixture(groups))
    pts = acc.delta(eps)
    if more:
        acc.epsilon(["1e-6"])
        try:
            acc.tradeoff(["1/10"])
        except UncertifiedError as exc:  # (a refusal is part of the measurement: printed once)
            if not REFUSED.get(id(groups)):
                REFUSED[id(groups)] = True
                print(f"(β(1/10) refused: {str(exc)[:100]})", flush=True)
    return acc, pts


def pld_side(groups, eps, more: bool = False):
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for m, c in groups:
        if isinstance(m, Laplace):
            one = pld.from_laplace_mechanism(float(m.scale), sensitivity=float(abs(m.shift)),
                                             value_discretization_interval=1e-4)
        elif isinstance(m, Gaussian):
            one = pld.from_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=float(abs(m.shift)),
                                              value_discretization_interval=1e-4)
        elif isinstance(m, DiscreteGaussian):
            one = pld.from_discrete_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=abs(m.shift),
                                                       value_discretization_interval=1e-4)
        else:
            one = pld.from_discrete_laplace_mechanism(float(1 / m.scale), sensitivity=abs(m.shift),
                                                      value_discretization_interval=1e-4)
        block = one.self_compose(c) if c > 1 else one
        total = block if total is None else total.compose(block)
    out = [total.get_delta_for_epsilon(float(Fraction(e))) for e in eps]
    if more:
        total.get_epsilon_for_delta(1e-6)
    return out


def timed(f, *args) -> tuple:
    return _timed(f, *args, repeat=REPEAT)


def main() -> None:
    print("| design | exactdp δ (CPU s) | + ε(δ), β(α) | PLD δ (CPU s) | PLD + ε(δ) | δ at the last ε: exactdp "
          "[lower, upper] / PLD |")
    print("|---|---|---|---|---|---|", flush=True)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for name, (groups, eps) in DESIGNS.items():
        if only not in name:
            continue
        exact_side(groups, eps, True)
        t_ex, (acc, pts) = timed(exact_side, groups, eps, False)
        t_more = timed(exact_side, groups, eps, True)[0]
        t_pld, vals = timed(pld_side, groups, eps)
        t_pld_more = timed(pld_side, groups, eps, True)[0]
        p = pts[-1]
        print(f"| {name} | {t_ex:.3f} | {t_more:.3f} | {t_pld:.3f} | {t_pld_more:.3f} | "
              f"[{float(p.lower):.12g}, {float(p.upper):.12g}] / {vals[-1]:.12g} |", flush=True)


if __name__ == "__main__":
    main()
