"""A huge ``mμ`` beside a tiny continuous-Gaussian ρ_N and few discrete Gaussians (issue 35):
exactdp's certified answers (the atom sum of accounting/laplace_atoms.py on the branch, the
Gaussian-smoothed inversion before) against dp_accounting's PLD, in one process.

Run: ``cd bench && python bench_laplace_gauss_atoms.py`` (``PYTHONPATH=<base checkout>`` for the
base).  CPU seconds (``time.process_time``), the minimum of ``REPEAT`` runs of a fresh accountant
after one untimed run; a refusal prints its time and message.  PLD: ``value_discretization_interval
= 1e-4``, pessimistic (``bench_laplace_beside.pld_side``).
"""

from __future__ import annotations

import time

from bench_laplace_beside import pld_side

import exactdp
from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, Mixture
from exactdp.kinds.laplace import Laplace
from exactdp.numerics.errors import UncertifiedError

REPEAT = 3
DESIGNS = {
    "Laplace(1/50) + Gaussian(10⁴) + DG(1/2) x2": (((Laplace("1/50"), 1), (Gaussian(10**4), 1),
                                                    (DiscreteGaussian("1/2"), 2)), ["0", "10", "97"]),
    "Laplace(1, 2) x2 + Gaussian(10⁶) + DG(1/2) + DG(1/2, 2)": (
        ((Laplace(1, 2), 2), (Gaussian(10**6), 1), (DiscreteGaussian("1/2"), 1), (DiscreteGaussian("1/2", 2), 1)),
        ["0", "3", "41"]),
}


def _run(groups, what, args):
    acc = ExactAccountant(Mixture(groups))
    t = time.process_time()
    try:
        out = getattr(acc, what)(args)
    except UncertifiedError as exc:
        return time.process_time() - t, f"refused: {str(exc)[:120]}"
    return time.process_time() - t, out


def main() -> None:
    print("exactdp from", exactdp.__file__)
    for name, (groups, eps) in DESIGNS.items():
        print(name, ExactAccountant(Mixture(groups)).diagnostics().method)
        for what, args in (("delta", eps), ("epsilon", ["1e-9"]), ("tradeoff", ["1/10"])):
            _run(groups, what, args)
            best, out = min((_run(groups, what, args) for _ in range(REPEAT if what != "tradeoff" else 1)),
                            key=lambda r: r[0])
            shown = out if isinstance(out, str) else [f"[{float(p.lower):.12g}, {float(p.upper):.12g}]"
                                                      if hasattr(p, "lower") else p for p in out]
            print(f"  {what}{args}: {best:.3f} CPU s  {shown}", flush=True)
        pld_side(groups, eps)
        t = time.process_time()
        vals = pld_side(groups, eps)
        t1 = time.process_time()
        print(f"  PLD delta{eps}: {t1 - t:.3f} CPU s  {vals}", flush=True)
        pe = pld_total(groups).get_epsilon_for_delta(1e-9)
        print(f"  PLD build + epsilon(1e-9): {time.process_time() - t1:.3f} CPU s  {pe}", flush=True)


def pld_total(groups):
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for m, c in groups:
        if isinstance(m, Laplace):
            one = pld.from_laplace_mechanism(float(m.scale), sensitivity=float(abs(m.shift)),
                                             value_discretization_interval=1e-4)
        elif isinstance(m, Gaussian):
            one = pld.from_gaussian_mechanism(float(m.sigma2) ** 0.5, sensitivity=float(abs(m.shift)),
                                              value_discretization_interval=1e-4)
        else:
            one = pld.from_discrete_gaussian_mechanism(float(m.sigma2) ** 0.5, sensitivity=abs(m.shift),
                                                       value_discretization_interval=1e-4)
        block = one.self_compose(c) if c > 1 else one
        total = block if total is None else total.compose(block)
    return total


if __name__ == "__main__":
    main()
