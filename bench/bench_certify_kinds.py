"""The mixed-kinds certificate (``--certify`` on a Mixture, :mod:`exactdp.certify.kinds`) beside the
mixed route, in one process: CPU seconds (``time.process_time``) of the engine's query (a fresh
``ExactAccountant``; δ includes construction) and of ``certify_points`` on its point (building the
atoms, the enclosure and the side check), the enclosure's relative width and the atoms enumerated.

Run: ``python bench/bench_certify_kinds.py`` (writes nothing; the table is recorded in
``bench/certify.md``).  The designs are ``bench/bench_mixed.py``'s and one with continuous Gaussians.

``python bench/bench_certify_kinds.py --envelope``: the reach of the meet in the middle
(:mod:`exactdp.certify.kinds_mitm`).  Designs growing by one group at a time, each query certified
twice in the same process: *before* with ``kinds.USE_MITM = False`` (the full enumeration only, as
before the meet in the middle) and *after* (one certifier per design for its three queries, passed to
``certify_points`` with the engine's points: the first query's time includes building the atoms).

``python bench/bench_certify_kinds.py --reach [--only TEXT]``: four to eight decimal-variance Gaussian
groups beside other kinds (the pruned halves), randomized response by its noise parameter; run it with
``PYTHONPATH`` at a checkout of the base for the before.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mixed import DESIGNS  # noqa: E402

from exactdp import (  # noqa: E402
    ApproxDP,
    DiscreteGaussian,
    DiscreteLaplace,
    ExactAccountant,
    Gaussian,
    Mixture,
    RandomizedResponse,
)
from exactdp.certify import certify_points, kinds  # noqa: E402
from exactdp.certify.kinds import KindsCertifier  # noqa: E402
from exactdp.kinds import RandomizedResponseNoise  # noqa: E402
from exactdp.numerics.errors import InputError, UncertifiedError  # noqa: E402

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


#: DLap, RR and (ε, δ) blocks on a short grid (the engine enumerates them) beside discrete Gaussians of
#: decimal variances (no short common grid with them): one more Gaussian group per design
BASE = ((DiscreteLaplace("5/2", 1), 4), (RandomizedResponse("1/2"), 4), (ApproxDP("1/4", "1e-9"), 2))
DGS = ((DiscreteGaussian("2429.62"), 3), (DiscreteGaussian("174.9"), 1), (DiscreteGaussian("33.7"), 2),
       (DiscreteGaussian("517.3"), 1), (DiscreteGaussian("81.13"), 1))
QUERIES = (("delta", "2"), ("epsilon", "1e-6"), ("tradeoff", "1/10"))


def _certified(mix, kind, value, pts, cert) -> tuple[float, str]:
    t0 = time.process_time()
    try:
        enc = certify_points(mix, kind, [Fraction(value)], pts, certifier=cert)[0]
    except UncertifiedError as exc:
        return time.process_time() - t0, f"refused: {str(exc)[:110]}…"
    p = enc.params
    size = p.get("halves", p["atoms"])
    return time.process_time() - t0, f"{enc.method}, {size} atoms, width {enc.relative_width:.1e}, passes"


def envelope() -> None:
    print("| design | query | engine CPU-s | before: CPU-s | before | after: CPU-s | after |")
    print("|---|---|---:|---:|---|---:|---|")
    for k in range(1, len(DGS) + 1):
        mix = Mixture(BASE + DGS[:k])
        name = "DLap ×4, RR ×4, (ε,δ) ×2 + σ² " + ", ".join(f"{float(m.sigma2):g}×{c}" for m, c in DGS[:k])
        certs = {}
        for kind, value in QUERIES:
            t0 = time.process_time()
            pts = getattr(ExactAccountant(mix), kind)([value])
            t_eng = time.process_time() - t0
            cells = []
            for use in (False, True):
                kinds.USE_MITM = use
                cert = certs.setdefault(use, KindsCertifier(mix))
                cells.extend(_certified(mix, kind, value, pts, cert))
            kinds.USE_MITM = True
            print(f"| {name} | {kind}({value}) | {t_eng:.2f} | {cells[0]:.2f} | {cells[1]} | {cells[2]:.2f} | "
                  f"{cells[3]} |", flush=True)


#: the reach of the pruned halves (issues 33, 35): four to eight groups of decimal-variance discrete
#: Gaussians beside BASE; the certificate only (the engine's points checked on the conservative side)
SMALL_DGS = tuple((DiscreteGaussian(v), 1) for v in ("2.51", "3.07", "4.4", "3.93", "2.77", "4.13", "3.31", "2.93"))
REACH = {
    "BASE + 174.9, 33.7×2, 517.3": BASE + DGS[1:4],
    "BASE + 174.9, 33.7×2, 517.3, 81.13": BASE + DGS[1:],
    "BASE + 4 σ² in [2.5, 4.4]": BASE + SMALL_DGS[:4],
    "BASE + 6 σ² in [2.5, 4.4]": BASE + SMALL_DGS[:6],
    "BASE + 8 σ² in [2.5, 4.4]": BASE + SMALL_DGS,
    "continuous Gaussian σ² = 4 + 4 σ² in [2.5, 4.4]": ((Gaussian(4), 1),) + SMALL_DGS[:4],
    "RR noise (p 1/2, k 3) ×40, DLap 5/2 ×4, RR 1/3 ×4": (
        (RandomizedResponseNoise("1/2", 3), 40), (DiscreteLaplace("5/2", 1), 4), (RandomizedResponse("1/3"), 4)),
}


def reach() -> None:
    print("| design | query | engine CPU-s | certificate CPU-s | certificate |")
    print("|---|---|---:|---:|---|")
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for name, groups in REACH.items():
        if only not in name:
            continue
        mix = Mixture(groups)
        try:
            cert = KindsCertifier(mix)
        except UncertifiedError as exc:
            print(f"| {name} | all | — | 0.00 | refused: {str(exc)[:110]}… |", flush=True)
            continue
        for kind, value in QUERIES:
            t0 = time.process_time()
            try:
                pts = getattr(ExactAccountant(mix), kind)([value])
            except (UncertifiedError, InputError) as exc:
                print(f"| {name} | {kind}({value}) | refused | — | (the engine refuses it: {str(exc)[:80]}…) |",
                      flush=True)
                continue
            t_eng = time.process_time() - t0
            t_cert, what = _certified(mix, kind, value, pts, cert)
            print(f"| {name} | {kind}({value}) | {t_eng:.2f} | {t_cert:.2f} | {what} |", flush=True)


def main() -> None:
    if "--envelope" in sys.argv:
        envelope()
        return
    if "--reach" in sys.argv:
        reach()
        return
    print("| design | query | engine CPU-s | certificate CPU-s | rel. width | atoms | check |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, (groups, eps) in {**DESIGNS, **EXTRA}.items():
        for kind, value in (("delta", eps[len(eps) // 2]), ("epsilon", "1e-6"), ("tradeoff", "1/10")):
            print(row(name, groups, kind, value), flush=True)


if __name__ == "__main__":
    main()
