"""Certified maxima over neighbour pairs: the sweep's headline δ and ε at each target δ.

The overall guarantee of a release is the maximum over neighbour pairs p of δ_p(ε_BS)
(resp. ε_p(δ)).  Given every pair's fast-path bracket ``[ℓ_p, u_p]`` (certified by the
float64 engine), the maximum is enclosed as follows:

1. ``L = max_p ℓ_p``; the *candidates* are the pairs with ``u_p ≥ L·(1 − margin)``
   (margin 0 by default: the pairs the fast path's own bounds cannot exclude);
2. each candidate is enclosed by Arb, ``[a_p, b_p]``; then ``max_p x_p ≥ max a_p =: A``
   and, over the candidates, ``max x_p ≤ max b_p =: B``;
3. every other pair is *excluded* once ``u_p < A`` (then ``x_p ≤ u_p < A``); a pair with
   ``u_p ≥ A`` is enclosed too and the step repeats, so ``[A, B]`` encloses the maximum
   over all pairs.

Step 3 uses the fast path's certified upper bound of the excluded pairs (the number and
the smallest relative gap ``(A − u_p)/A`` are recorded); the enclosure of the maximum
itself, and of each candidate, is Arb's.  The fast headline upper bound must be ≥ B
(else :class:`~exactdp.numerics.errors.UncertifiedError`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from exactdp.certify.balls import bureau_epsilon, decimal_outward
from exactdp.certify.check import DIGITS
from exactdp.certify.queries import Certifier
from exactdp.mechanisms import Composition
from exactdp.numerics.bracket import RationalBracket
from exactdp.numerics.errors import UncertifiedError

__all__ = ["PairBracket", "certify_maximum", "HeadlineCertifier"]

MARGIN = Fraction(0)


@dataclass(frozen=True)
class PairBracket(RationalBracket):
    """A pair's fast-path bracket ``[lower, upper]`` of one number (exact rationals): a
    :class:`~exactdp.numerics.bracket.Bracket` reporting its upper end, ``error_bound`` its
    half-width."""

    pair: tuple
    lower: Fraction
    upper: Fraction
    estimate: Fraction


def certify_maximum(brackets, enclose, margin: Fraction = MARGIN) -> dict:
    """Enclose ``max_p x_p`` given fast brackets and an Arb enclosure function.

    Parameters
    ----------
    brackets : list of PairBracket
    enclose : callable
        ``enclose(pair, bracket) -> Enclosure`` of that pair's exact value.
    margin : Fraction
        Relative slack of the candidate selection.

    Returns
    -------
    dict
        ``enclosure`` (decimal strings, outward), ``certified_pairs`` (pair → enclosure
        strings), ``argmax`` (pair with the largest certified upper end),
        ``excluded_pairs`` and ``min_exclusion_gap``.
    """
    L = max(b.lower for b in brackets)
    todo = [b for b in brackets if b.upper >= L * (1 - margin)]
    done: dict = {}
    while True:
        for b in todo:
            if b.pair not in done:
                done[b.pair] = enclose(b.pair, b)
        A = max(e.lower_exact for e in done.values())
        todo = [b for b in brackets if b.pair not in done and b.upper >= A]
        if not todo:
            break
    B = max(e.upper_exact for e in done.values())
    fast_upper = max(b.upper for b in brackets)
    if fast_upper < B:
        raise UncertifiedError(f"fast headline upper bound {float(fast_upper):.17g} is below the Arb "
                               f"enclosure's upper end {float(B):.17g}: the two disagree")
    excluded = [b for b in brackets if b.pair not in done]
    gap = min(((A - b.upper) / A for b in excluded), default=None)
    argmax = max(done, key=lambda p: (done[p].upper_exact, p))
    return {
        "enclosure": [decimal_outward(A, DIGITS, "floor"), decimal_outward(B, DIGITS, "ceil")],
        "certificate": "arb",
        "argmax": f"{argmax[0]}-{argmax[1]}",
        "certified_pairs": {f"{p[0]}-{p[1]}": list(e.decimal(DIGITS)) for p, e in sorted(done.items())},
        "excluded_pairs": len(excluded),
        "min_exclusion_gap": None if gap is None else f"{float(gap):.3e}",
        "fast_upper": decimal_outward(fast_upper, DIGITS, "ceil"),
    }


class HeadlineCertifier:
    """Per-pair certifiers (cached across targets) for the sweep's headline.

    Parameters
    ----------
    pair_rhos : dict
        ``(i, j) → rhos`` (``Allocation.pair_rhos``; unit-shift mechanisms σ² = 1/ρ).
    """

    def __init__(self, pair_rhos: dict):
        self.pair_rhos = dict(pair_rhos)
        self._cert: dict = {}

    def certifier(self, pair) -> Certifier:
        if pair not in self._cert:
            self._cert[pair] = Certifier(Composition.from_rhos(tuple(self.pair_rhos[pair])))
        return self._cert[pair]

    def delta_at_bureau(self, pair, delta):
        cert = self.certifier(pair)
        return cert.delta(bureau_epsilon(cert.lattice.c, delta))

    def epsilon(self, pair, delta, estimate: Fraction | None = None):
        cert = self.certifier(pair)
        lat = cert.lattice
        hint = None if estimate is None else math.ceil((estimate - lat.c) * lat.scale)
        return cert.epsilon(delta, hint=hint)

    def target(self, delta, delta_brackets, eps_brackets) -> dict:
        """The certified headline at one target δ: ``delta_overall`` (max over pairs of δ at
        the Bureau's ε) and ``eps_overall`` (max over pairs of ε(δ))."""
        return {
            "delta_overall": certify_maximum(delta_brackets, lambda p, b: self.delta_at_bureau(p, delta)),
            "eps_overall": certify_maximum(eps_brackets, lambda p, b: self.epsilon(p, delta, b.estimate)),
        }
