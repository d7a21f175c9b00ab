"""Issue 35 before/after: δ, ε, β of a continuous Laplace beside strong continuous Gaussians
(bench/laplace_beside.md)."""

import time

from exactdp import DiscreteGaussian as DG
from exactdp import ExactAccountant
from exactdp.kinds import Gaussian, Laplace, Mixture

DESIGNS = {
    "rho100": Mixture(((Laplace("1/3", "1/2"), 1), (Gaussian("1/10", "1"), 20), (DG("0.172", -1), 1))),
    "rho1000": Mixture(((Laplace("1/3", "1/2"), 1), (Gaussian("1/100", "1"), 20), (DG("0.172", -1), 1))),
    "rho3285": Mixture(((Laplace("1/3", "1/2"), 1), (Gaussian("0.0137", "3"), 10), (DG("0.172", -1), 1))),
}
QUERIES = ([("delta", e) for e in ["0", "5", "700", "800"]] + [("epsilon", x) for x in ["0.99", "1/2", "1e-10"]]
           + [("tradeoff", x) for x in ["1e-9", "1/2"]])


def show(x):
    lo = getattr(x, "lower", None)
    if lo is None:
        lo, hi = x.estimate - x.error_bound, x.estimate + x.error_bound
    else:
        hi = x.upper
    return f"[{float(lo):.12g}, {float(hi):.12g}]"


for name, d in DESIGNS.items():
    a = ExactAccountant(d)
    for kind, q in QUERIES:
        t = time.process_time()
        try:
            s = show(getattr(a, kind)([q])[0])
        except Exception as ex:  # (refusals are the measurement)
            s = f"{type(ex).__name__}: {str(ex)[:90]}"
        print(f"{name} {kind}({q}) {s}  {time.process_time() - t:.2f}s", flush=True)
