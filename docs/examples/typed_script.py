"""A user's script on exactdp's package face, checked by ``mypy --strict`` in CI.

Run it (``python docs/examples/typed_script.py``): it prints the certified δ of 20
queries with σ² = 10000/11 at ε = 1, the certified ε at δ = 1e-10 and a certified
lower bound on the trade-off β at α = 0.05.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath  # type: ignore[import-untyped]  # mpmath ships no type information

import exactdp
from exactdp import Composition, DeltaPoint, EpsilonPoint, ExactAccountant, TradeoffPoint


def privacy_of(sigma2: str, count: int) -> tuple[DeltaPoint, EpsilonPoint, TradeoffPoint]:
    """The three certified numbers of ``count`` unit-shift queries with variance ``sigma2``."""
    acc: ExactAccountant = ExactAccountant(Composition.from_sigma2([sigma2] * count))
    d: DeltaPoint = acc.delta(["1"])[0]
    e: EpsilonPoint = acc.epsilon(["1e-10"])[0]
    t: TradeoffPoint = exactdp.tradeoff(acc.composition, [Fraction(1, 20)]).points[0]
    return d, e, t


def main() -> None:
    d, e, t = privacy_of("10000/11", 20)
    rho: Fraction = Composition.from_sigma2(["10000/11"] * 20).rho
    print(f"exactdp {exactdp.__version__}: ρ = {rho}")
    print(f"δ(ε = 1)       ≤ {mpmath.nstr(d.value, 12)}  (certified error bound {mpmath.nstr(d.error_bound, 3)})")
    print(f"ε(δ = 1e-10)   ≤ {mpmath.nstr(e.value, 12)}  (bracket [{mpmath.nstr(e.lower, 12)}, …])")
    print(f"β(α = 0.05)    ≥ {mpmath.nstr(t.value, 12)}")
    try:
        Composition.from_sigma2([0.1])  # a binary float where an exact value is meant
    except exactdp.InputError as err:
        print(f"refused, as it should be: {str(err)[:60]}…")


if __name__ == "__main__":
    main()
