"""The mixed-kinds certificate (``--certify`` on a Mixture, :mod:`exactdp.certify.kinds`) beside the
mixed route, in one process: CPU seconds (``time.process_time``) of the engine's query (a fresh
``ExactAccountant``; δ includes construction) and of ``certify_points`` on its point (building the
atoms, the enclosure and the side check), the enclosure's relative width and the atoms enumerated.

Run: ``python bench/bench_certify_kinds.py`` (writes nothing; the table is recorded in
``bench/certify.md``).  The designs are ``bench/bench_mixed.py``'s and one with continuous Gaussians.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mixed import DESIGNS  # noqa: E402

from exactdp import DiscreteLaplace, ExactAccountant, Gaussian, Mixture, RandomizedResponse  # noqa: E402
from exactdp.certify import certify_points  # noqa: E402
from exactdp.numerics.errors import UncertifiedError  # noqa: E402

EXTRA = {
    "DLap x3, RR, continuous Gaussians x2 (σ² = 4)": (((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1),
                                                       (Gaussian(4), 2)), ["1"]),
}


def row(name, groups, kind, value) -> str:
    mix = Mixture(groups)
    t0 = time.process_time()
    acc = ExactAccountant(mix)
    pts = getattr(acc, kind)([value])
    t1 = time.process_time()
    try:
        enc = certify_points(mix, kind, [Fraction(value)], pts)[0]
    except UncertifiedError as exc:
        return f"| {name} | {kind}({value}) | {t1 - t0:.2f} | {time.process_time() - t1:.2f} | — | — | {exc} |"
    t2 = time.process_time()
    p = enc.params
    return (f"| {name} | {kind}({value}) | {t1 - t0:.2f} | {t2 - t1:.2f} | {enc.relative_width:.1e} | "
            f"{p['atoms']} | passes ({enc.method}) |")


def main() -> None:
    print("| design | query | engine CPU-s | certificate CPU-s | rel. width | atoms | check |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, (groups, eps) in {**DESIGNS, **EXTRA}.items():
        for kind, value in (("delta", eps[len(eps) // 2]), ("epsilon", "1e-6"), ("tradeoff", "1/10")):
            print(row(name, groups, kind, value), flush=True)


if __name__ == "__main__":
    main()
