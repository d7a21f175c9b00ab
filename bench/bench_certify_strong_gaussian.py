"""--certify of audit5 certcells #1 (a large enumerated discrete part beside strong continuous Gaussians):
CPU seconds of the engine's point and of certify_points for each query, in one process.

    python bench/bench_certify_strong_gaussian.py      # bench/certify.md has the table
"""

from __future__ import annotations

import time
from fractions import Fraction as F

from exactdp import ExactAccountant
from exactdp.certify import certify_points
from exactdp.kinds import Gaussian, Mixture
from exactdp.mechanisms import DiscreteGaussian as DG

DESIGN = Mixture(((DG(F("5.2871"), 5), 11), (DG(F("8.968"), -4), 23), (Gaussian(F("0.0137"), 2), 3),
                  (Gaussian(F("2.25"), F(1, 2)), 5)))
QUERIES = [("delta", "1"), ("delta", "13.7"), ("epsilon", "1e-10"), ("epsilon", "1e-60")]


def main() -> None:
    acc = ExactAccountant(DESIGN)
    print("| query | engine CPU-s | certify_points CPU-s | enclosure | method, atoms |")
    print("|---|---:|---:|---|---|")
    for kind, value in QUERIES:
        t = time.process_time()
        point = getattr(acc, kind)([value])[0]
        t_engine = time.process_time() - t
        t = time.process_time()
        (enc,) = certify_points(DESIGN, kind, [F(value)], [point])
        t_cert = time.process_time() - t
        lo, hi = enc.decimal(14)
        print(f"| {kind}({value}) | {t_engine:.2f} | {t_cert:.2f} | [{lo}, {hi}] | {enc.method}, "
              f"{dict(enc.params).get('atoms')} |", flush=True)


if __name__ == "__main__":
    main()
