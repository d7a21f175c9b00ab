"""``1 − δ(t)`` of a :class:`~exactdp.kinds.Mixture` as a sum of positive terms.

The trade-off's dual ``G = 1 − δ(ε) − e^ε α`` (:mod:`exactdp.accounting.mixed_queries`) is a
small difference of terms near 1 where β is small: δ(ε) ≈ 1 − 3e-6 at the maximiser of β(1e-9)
= 1.4e-6, and a ball of δ that is 1e-14 absolute (the pruned rest of the Gaussian oracle's sum,
a thousandth of δ's 1e-11 width) leaves G 7e-9 relative.  Every part being symmetric, ``c(t) =
1 − δ(t) = E_P[min(1, e^{t − L})]`` and, for one part of curve δ_G, ``c_G(s) = 1 − δ_G(s)`` for
s ≥ 0 and ``c_G(s) = e^s c_G(−s)`` for s < 0 (``δ_G(s) = 1 − e^s + e^s δ_G(−s)``); with
``δ_G(|s|) ≤ δ_G(0) < 1`` no term cancels.  So, over the finite part's atoms ``(v_i, p_i)``:

* **beside the discrete Gaussians' oracle** (:func:`oracle_complement`): ``c(t) ∈ [S, S + D]``,
  ``S = Σ_i p_i c_G(t − v_i)`` (D the windows' deficit, p_∞ adds nothing).  With A chosen so that
  the zCDP bound ``e^{−(A−ρ)²/(4ρ)} ≤ ζ = 2^−80``, the atoms with ``t − v_i ≥ A`` give ``P[L ≤ t −
  A]·[1 − ζ, 1]`` (prefix sums), those with ``t − v_i < −A`` give ``e^t·Σ p_i e^{−v_i}·[1 − ζ, 1]
  = e^t P[L < −t − A]·[1 − ζ, 1]`` (``p_i e^{−v_i}`` is the mass at ``−v_i``), and those between
  one by one from the oracle's balls of ``δ_G(|t − v_i|)`` (cached by threshold, as the δ sum's).
  Each part is off by at most ζ of itself, so the sum is too, whatever its size.  Where δ_G(0) is
  within the oracle's width of 1 (a near-deterministic Gaussian part, ρ in the thousands) this
  is no better than the ball of δ: the caller keeps the narrower;
* **beside randomized responses by noise parameter** (:func:`complement_ball`): ``c(t) = Σ_b P[b]
  c_rest(t − Σ b log R)``, the rest's c nondecreasing, so bracketed at the exact ends of each
  threshold's ball (rounded outward to 2^−100 beside the oracle, whose values are cached by
  threshold).

The continuous Gaussians' closed form is :func:`smooth_complement` (moved here from
:mod:`~exactdp.accounting.mixed_queries`).  Reference: Dong, Roth & Su (2022), Prop. 2.12 (the
dual), and the symmetry identity of the hockey-stick divergence (their Prop. 2.5 / Lemma A.2).
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import flint

from exactdp.accounting.finite_tradeoff import exact_ball as _q
from exactdp.engine.finite_loss import prec_ctx

__all__ = ["complement_ball", "oracle_complement", "smooth_complement", "COMPLEMENT_ATOMS"]

#: the most atoms taken one by one (beyond: None, the ball of δ instead)
COMPLEMENT_ATOMS = 4000
#: the relative error ζ = 2^−ZETA_BITS left by the atoms far from t (the zCDP bound)
ZETA_BITS = 80
#: the grain of the thresholds at which the oracle is asked beside randomized responses
_GRAIN = 2**100


def complement_ball(acc, t: Fraction, prec: int) -> flint.arb | None:
    """A ball of ``1 − δ(t)`` (t ≥ 0 exact) as positive terms, or None where no form applies
    (continuous Laplaces; randomized responses by noise parameter beside a rest without the oracle,
    whose ball of δ climbs in precision instead; more than :data:`COMPLEMENT_ATOMS` atoms near t)."""
    if acc.laplace is not None:
        return None
    if acc.rr is None:
        return oracle_complement(acc, t, prec) if acc.gauss is not None else smooth_complement(acc, t, prec)
    if acc.gauss is None:
        return None
    with prec_ctx(prec):
        eb = flint.arb(flint.fmpq(t.numerator, t.denominator))
    failed: list[bool] = []

    def at(lo: Fraction, hi: Fraction, _tb: flint.arb) -> flint.arb:
        got = _rest_complement(acc, lo, hi, prec) if not failed else None
        if got is None:
            failed.append(True)
            return flint.arb(0)
        return got

    total = acc.rr.delta(eb, prec, at)
    return None if failed else total


def _rest_complement(acc, lo: Fraction, hi: Fraction, prec: int) -> flint.arb | None:
    """A ball of ``1 − δ_rest(s)`` for every s in ``[lo, hi]`` beside the oracle (δ_rest: the design
    without its randomized responses by noise parameter; ``1 − δ_rest`` is nondecreasing in s, so
    its values at the ends, rounded outward to multiples of 2^−100, bound it; ``c(x) = e^x c(−x)``
    for x < 0, the rest being symmetric), or None (no oracle: the ball of δ climbs in precision)."""
    if acc.gauss is None:
        return None
    lo, hi = Fraction(math.floor(lo * _GRAIN), _GRAIN), Fraction(math.ceil(hi * _GRAIN), _GRAIN)
    ends = []
    for x in dict.fromkeys((lo, hi)):
        c = oracle_complement(acc, abs(x), prec)
        if c is None:
            return None
        if x < 0:
            with prec_ctx(prec):
                c = _q(x).exp() * c
        ends.append(c)
    with prec_ctx(prec):
        return ends[0] if len(ends) == 1 else ends[0].union(ends[1])


def _reach(rho: float, bits: int) -> Fraction:
    """A with ``(A − ρ)²/(4ρ) ≥ bits·log 2`` (a margin of 1)."""
    return Fraction(math.ceil(rho + 2 * math.sqrt(rho * bits * math.log(2)) + 1))


def oracle_complement(acc, t: Fraction, prec: int) -> flint.arb | None:
    """``1 − δ(t)`` (t ≥ 0) beside the discrete Gaussians' oracle, as positive terms (module
    docstring), or None (no grid, no curve, more than :data:`COMPLEMENT_ATOMS` atoms near t)."""
    fin = acc.finite
    rho = acc.curve_rho
    if acc.gauss is None or fin.step == 0 or rho <= 0:
        return None
    a = _reach(float(rho), ZETA_BITS)
    idx, ms = fin.atoms(prec)
    i_lo, i_hi = fin.first_above(t - a), fin.first_above(t + a)  # near: i_lo ≤ i < i_hi
    k_lo, k_hi = bisect.bisect_left(idx, i_lo), bisect.bisect_left(idx, i_hi)
    if k_hi - k_lo > COMPLEMENT_ATOMS:
        return None
    ss = [t - fin.value(i) for i in idx[k_lo:k_hi]]
    keys = [acc._key(abs(s)) for s in ss]
    cache = acc._g_cache
    new = {k: abs(s) for k, s in zip(keys, ss) if k not in cache}
    if new:
        acc._fill(new, cache)
    _, prefix, _, _ = fin.tables(prec)
    with prec_ctx(prec):
        r = _q(rho)
        zeta = (-((_q(a) - r) ** 2) / (4 * r)).exp()  # δ_G(s) ≤ ζ for s ≥ A
        keep = (1 - zeta).union(flint.arb(1))
        et = _q(t).exp()
        total = prefix[i_lo] * keep + et * prefix[fin.size - i_hi] * keep
        for s, k, m in zip(ss, keys, ms[k_lo:k_hi]):
            c = 1 - cache[k]
            if c.lower() < 0:  # (c_G ≥ 0)
                c = c.nonnegative_part() if c.upper() > 0 else flint.arb(0)
            total += m * (c if s >= 0 else _q(s).exp() * c)
        return total + fin.deficit(prec)


def smooth_complement(acc, t: Fraction, prec: int) -> flint.arb | None:
    """A ball of ``1 − δ(t)`` (t > 0) for a finite loss beside continuous Gaussians alone, as a
    sum of positive terms (no cancellation where δ is within 1e-12 of 1, which the ball of δ
    cannot resolve), or None where that does not apply (Laplaces, the discrete Gaussians'
    oracle, randomized responses by noise p, t < 0).

    ``1 − δ(t) ∈ [S, S + D]`` with ``S = Σ_i p_i c_N(t − v_i)``, ``c_N(s) = 1 − δ_N(s) =
    ½erfc((μ − s)/(2√μ)) + ½e^s erfc((s + μ)/(2√μ))`` (the Gaussians' loss N(μ, 2μ)) and D the
    windows' deficit: ``1 = p_∞ + Σ p_i + D_true`` and the left-out mass adds at most D_true to
    δ.  The atoms with ``s ≥ A`` (A ≥ μ) come from the prefix sums, ``c_N ∈ [1 − e^{−(A−μ)²/(4μ)},
    1]`` (erfc(x) ≤ e^{−x²}); those with ``s < −B`` are bounded by ``c_N(s) ≤ 2e^s`` (the erfc
    term is ≤ e^{−(μ−s)²/(4μ)} ≤ e^s), so by ``2e^{−B}·P[L > t + B]``, B doubled until that is
    2^−80 of the rest; the atoms between one by one."""
    if acc.gauss is not None or acc.laplace is not None or not acc.mu or t < 0:
        return None
    fin = acc.finite
    if fin.step == 0:
        return None
    _, prefix, suffix, _ = fin.tables(prec)
    mu_f = float(acc.mu)
    a = Fraction(math.ceil(mu_f + 2 * math.sqrt(mu_f * (prec + 40) * math.log(2)) + 1))
    with prec_ctx(prec):
        mu = _q(acc.mu)
        root = 2 * mu.sqrt()
        near = (-((_q(a) - mu) ** 2) / (4 * mu)).exp()  # δ_N(s) ≤ this for s ≥ A
        i_lo = fin.first_above(t - a)  # atoms below: s ≥ A
        total = prefix[i_lo] * (1 - near).union(flint.arb(1))
        idx, ms = fin.atoms(prec)  # (the atoms of positive mass, in grid order)
        b, i, k = Fraction(64), i_lo, bisect.bisect_left(idx, i_lo)
        while True:
            i_hi = max(fin.first_above(t + b), i)  # atoms from i_hi on: s < −B
            k_hi = bisect.bisect_left(idx, i_hi)
            if k_hi - k > COMPLEMENT_ATOMS:
                return None  # (too many atoms one by one: the ball of δ instead)
            for j, m in zip(idx[k:k_hi], ms[k:k_hi]):
                sv = _q(t - fin.value(j))
                total += m * ((((mu - sv) / root).erfc() + sv.exp() * ((sv + mu) / root).erfc()) / 2)
            i, k = i_hi, k_hi
            tail = 2 * (-_q(b)).exp() * suffix[i_hi] if i_hi < fin.size else flint.arb(0)
            if tail.upper() <= total.lower() * flint.arb(2) ** -80 or i_hi >= fin.size or b > 1 << 20:
                break
            b *= 2
        total += flint.arb(0).union(tail.upper())
        return total + fin.deficit(prec)
