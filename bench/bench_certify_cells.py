"""--certify beside continuous Gaussians when the discrete part is beyond the full enumeration:
the cells (exactdp.certify.kinds_cells) against the refusal before them, CPU seconds.

    python bench/bench_certify_cells.py        # one process; bench/certify.md has the table
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction as F

from exactdp import ExactAccountant
from exactdp.certify import certify_points, kinds
from exactdp.certify.kinds import KindsCertifier
from exactdp.kinds import Gaussian, Mixture
from exactdp.mechanisms import DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError


def dg(v, n=1):
    return (DiscreteGaussian(F(v), 1), n)


DESIGNS = {
    "Gaussian(4) + DG 2.51, 3.07, 4.4, 3.93": Mixture((dg("2.51"), dg("3.07"), dg("4.4"), dg("3.93"),
                                                        (Gaussian(F(4), 1), 1))),
    "Gaussian(4) + DG 2.51, 3.07, 4.4, 3.93, 2.77": Mixture((dg("2.51"), dg("3.07"), dg("4.4"), dg("3.93"),
                                                              dg("2.77"), (Gaussian(F(4), 1), 1))),
}
QUERIES = [("tradeoff", F(1, 10)), ("delta", F(1)), ("epsilon", F(1, 10**6))]


def main() -> None:
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    print("| design | query | engine CPU-s | before (cells off) | after: certificate CPU-s | after |")
    print("|---|---|---:|---|---:|---|")
    for name, design in DESIGNS.items():
        if only not in name:
            continue
        acc = ExactAccountant(design)
        certs = {}
        for kind, arg in QUERIES:
            t = time.process_time()
            point = getattr(acc, kind)([arg])[0]
            t_engine = time.process_time() - t
            row = []
            for mode in ("never", "auto"):
                kinds.CELLS = mode
                cert = certs.setdefault(mode, KindsCertifier(design))
                t = time.process_time()
                try:
                    (enc,) = certify_points(design, kind, [arg], [point], certifier=cert)
                    res = (f"{enc.method}, {dict(enc.params).get('atoms')} cells, "
                           f"rel. width {enc.relative_width:.1e}, passes")
                except UncertifiedError as exc:
                    res = "refused: " + str(exc)[:60] + "…"
                row.append((time.process_time() - t, res))
            kinds.CELLS = "auto"
            print(f"| {name} | {kind}({arg}) | {t_engine:.2f} | {row[0][1]} | {row[1][0]:.2f} | {row[1][1]} |",
                  flush=True)


if __name__ == "__main__":
    main()
