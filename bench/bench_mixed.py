"""Mixed designs (discrete Laplace, randomized response, (ε, δ) blocks, discrete Gaussians):
exactdp's certified answers against dp_accounting's PLD on the same work, in one process.

Run: ``python bench/bench_mixed.py`` (writes nothing; the table it prints is recorded in
``bench/mixed.md``).  Times are CPU seconds (``time.process_time``), the minimum of
``REPEAT`` runs (one when it takes over 5 s), each a fresh accountant answering δ at the design's ε values (and, in the
second column, also 1 ε(δ) and 1 β(α)), after one untimed run of each design (the first load of the
discrete-Gaussian route's Numba kernels is not the design's cost).  PLD: ``value_discretization_interval = 1e-4``,
pessimistic, composed group by group with ``self_compose``.
"""

from __future__ import annotations

import math
import sys
import time
from fractions import Fraction

from exactdp import ApproxDP, DiscreteGaussian, DiscreteLaplace, ExactAccountant, Mixture, RandomizedResponse

REPEAT = 3

PURE10 = ((DiscreteLaplace(10, 1), 100), (DiscreteLaplace(20, 1), 100), (DiscreteLaplace(5, 2), 100),
          (DiscreteLaplace(40, 3), 100), (RandomizedResponse("1/10"), 100), (RandomizedResponse("1/5", 4), 100),
          (RandomizedResponse("1/2"), 100), (RandomizedResponse("1/4", 3), 100), (ApproxDP("1/10", "1e-10"), 100),
          (ApproxDP("1/20"), 100))
DESIGNS = {
    "10 pure/approx kinds x100 (1000 mechanisms)": (PURE10, ["10", "20", "40", "60"]),
    "8 kinds x100 + 2 discrete Gaussians x100 (1000; Gaussian route as oracle)": (
        PURE10[:8] + ((DiscreteGaussian(100), 100), (DiscreteGaussian(400), 100)), ["10", "20", "40", "60"]),
    "daily DLap count x365 + zCDP discrete Gaussians x12": (((DiscreteLaplace(50, 1), 365),
                                                             (DiscreteGaussian(25), 12)), ["1", "3", "8", "12"]),
    "small mix (tests' design)": (((DiscreteLaplace("5/2", 1), 2), (RandomizedResponse("1/2"), 1),
                                   (DiscreteGaussian(2), 2), (ApproxDP("1/4", "1e-7"), 1)), ["0", "1", "3", "7"]),
    "decimal-variance Gaussians beside DLap (Gaussian route as oracle)": (((DiscreteLaplace("5/2", 1), 4),
                                                                           (RandomizedResponse("1/2"), 4),
                                                                           (DiscreteGaussian("2429.62"), 3),
                                                                           (DiscreteGaussian("174.9"), 1)),
                                                                          ["0.5", "1", "2"]),
    "daily DLap x365 beside decimal discrete Gaussians 5/2, 37/10 x20 (grid 1/185)": (
        ((DiscreteLaplace(10, 1), 365), (DiscreteGaussian("5/2"), 1), (DiscreteGaussian("37/10"), 20)),
        ["1", "3", "8", "12"]),
}


def exact_side(groups, eps, more: bool, beta: bool = True) -> tuple:
    acc = ExactAccountant(Mixture(groups))
    pts = acc.delta(eps)
    if more:
        acc.epsilon(["1e-6"])
        if beta:
            acc.tradeoff(["1/10"])
    return acc, pts


def pld_side(groups, eps, more: bool = False) -> list:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for m, c in groups:
        if isinstance(m, DiscreteLaplace):
            one = pld.from_discrete_laplace_mechanism(float(1 / m.scale), sensitivity=abs(m.shift))
        elif isinstance(m, RandomizedResponse):
            noise = m.k / (math.exp(float(m.epsilon)) + m.k - 1)
            one = pld.from_randomized_response(noise, m.k)
        elif isinstance(m, ApproxDP):
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(float(m.epsilon), float(m.delta)))
        else:
            one = pld.from_discrete_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=abs(m.shift))
        block = one.self_compose(c) if c > 1 else one
        total = block if total is None else total.compose(block)
    assert total is not None
    out = [total.get_delta_for_epsilon(float(Fraction(e))) for e in eps]
    if more:
        total.get_epsilon_for_delta(1e-6)
    return out


def timed(f, *args, repeat: int = REPEAT) -> tuple:
    """``(least CPU seconds of repeat runs, the last run's output)`` (also used by the other
    side-by-side benches: ``bench_gaussian_beside.py``, ``bench_laplace_beside.py``)."""
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.process_time()
        out = f(*args)
        best = min(best, time.process_time() - t)
        if best > 5:  # a slow side is timed once
            break
    return best, out


def main() -> None:
    print("| design | exactdp δ (CPU s) | + ε(δ) | + ε(δ), β(α) | PLD δ (CPU s) | PLD + ε(δ) | route/method, atoms "
          "| δ at the last ε: exactdp [lower, upper] / PLD |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for name, (groups, eps) in DESIGNS.items():
        if only not in name:
            continue
        exact_side(groups, eps, True)  # untimed: the kernels' first load (Numba cache) is not the design's cost
        t_ex, (acc, pts) = timed(exact_side, groups, eps, False)
        t_eps = timed(exact_side, groups, eps, True, False)[0]
        t_more = timed(exact_side, groups, eps, True)[0]
        t_pld, pld_vals = timed(pld_side, groups, eps)
        t_pld_eps = timed(pld_side, groups, eps, True)[0]
        p = pts[-1]
        print(f"| {name} | {t_ex:.3f} | {t_eps:.3f} | {t_more:.3f} | {t_pld:.3f} | {t_pld_eps:.3f} | "
              f"{acc.route}/{acc.method}, "
              f"{acc.answerer.finite.size} | [{float(p.lower):.10g}, {float(p.upper):.10g}] / {pld_vals[-1]:.10g} |",
              flush=True)


if __name__ == "__main__":
    main()
