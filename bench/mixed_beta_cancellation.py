"""β(α) of mixed designs where G = 1 − δ − e^ε α cancels (bench/audit.md, 2026-12-07 mixbeta).

Run one query per fresh process (CPU seconds of the query alone, the accountant's build apart):

    python bench/mixed_beta_cancellation.py dlmix3        # audit4 FOUND 3, β(1e-9)
    python bench/mixed_beta_cancellation.py dlmix11       # audit4 FOUND 3, β(1e-9)
    python bench/mixed_beta_cancellation.py design4       # second audit design 4, β(1e-12)
    python bench/mixed_beta_cancellation.py dlmix3 --pld  # dp_accounting's PLD: the dual on its δ

(base: ``PYTHONPATH=<main checkout>``).  ``--pld`` maximises ``1 − δ(ε) − e^ε α`` over a grid of
ε around the maximiser with dp_accounting's optimistic and pessimistic PLD (interval 1e-4):
an estimate pair, not a certified bracket.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from fractions import Fraction

DESIGNS = {
    "dlmix3": ([("dlap", "0.37", 3, 5), ("dg", "25.06", 3, 2), ("rr", "1", 5, 3)], "1e-9", 7.3475),
    "dlmix11": ([("dlap", "1/2", 2, 20), ("dg", "45.80", 3, 6), ("dg", "27.67", 2, 1), ("rr", "0.7", 2, 10)],
                "1e-9", None),
    "design4": ([("dg", "0.1125", 8, 38), ("rrn", "1/2", 2, 5), ("rr", "1/1000", 2, 1), ("dlap", "0.37", 2, 4)],
                "1e-12", None),
}


def _mixture(groups):
    from exactdp import DiscreteGaussian
    from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse, RandomizedResponseNoise

    make = {"dlap": lambda a, b: DiscreteLaplace(a, b), "dg": lambda a, b: DiscreteGaussian(a, b),
            "rr": lambda a, b: RandomizedResponse(a, b), "rrn": lambda a, b: RandomizedResponseNoise(a, b)}
    return Mixture(tuple((make[k](a, b), c) for k, a, b, c in groups))


def exact(name: str) -> None:
    from exactdp import ExactAccountant

    groups, alpha, _ = DESIGNS[name]
    t0 = time.process_time()
    acc = ExactAccountant(_mixture(groups))
    t1 = time.process_time()
    try:
        pt = acc.tradeoff([alpha])[0]
        lo, hi = pt.lower, pt.upper
        out = f"[{lo}, {hi}] relative width {float((hi - lo) / hi):.2g}"
    except Exception as ex:  # (a refusal is a result here)
        out = f"refused: {ex}"
    t2 = time.process_time()
    print(f"{name} β({alpha}) {out}; build {t1 - t0:.2f} CPU-s, query {t2 - t1:.2f} CPU-s")


def pld(name: str) -> None:
    from dp_accounting.pld import privacy_loss_distribution as p

    groups, alpha, centre = DESIGNS[name]
    t0 = time.process_time()
    res = []
    for pess in (False, True):
        acc = None
        for k, a, b, c in groups:
            kw = dict(pessimistic_estimate=pess, value_discretization_interval=1e-4)
            if k == "dg":
                one = p.from_discrete_gaussian_mechanism(math.sqrt(float(Fraction(a))), sensitivity=b, **kw)
            elif k == "dlap":
                one = p.from_discrete_laplace_mechanism(1 / float(Fraction(a)), sensitivity=b, **kw)
            elif k == "rr":
                e0 = float(Fraction(a))
                one = p.from_randomized_response(b / (math.exp(e0) + b - 1), b, **kw)
            else:
                one = p.from_randomized_response(float(Fraction(a)), b, **kw)
            one = one.self_compose(c) if c > 1 else one
            acc = one if acc is None else acc.compose(one)
        al = float(Fraction(alpha) if "/" in alpha else float(alpha))
        grid = [centre + j * 1e-3 for j in range(-200, 201)] if centre else [j * 0.01 for j in range(-3000, 3001)]
        ds = acc.get_delta_for_epsilon(grid)
        res.append(max(1 - d - math.exp(e) * al for e, d in zip(grid, ds)))
    t1 = time.process_time()
    print(f"{name} PLD β({alpha}) optimistic/pessimistic dual: {res[0]:.10g} / {res[1]:.10g}; {t1 - t0:.2f} CPU-s")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))
    (pld if "--pld" in sys.argv else exact)(sys.argv[1])
