"""What a certified (ε, δ) guarantee means for a person in the data: bounds an attacker obeys.

For two neighbouring datasets that differ in one person's record (the record as it is,
world P, and as it might have been, world Q), a mechanism with privacy profile δ(ε) —
certified pairs (ε_i, δ_i) with δ(ε_i) ≤ δ_i — obeys, for every attacker:

* **Likelihood ratio.**  For every set S of outputs, P(S) ≤ e^ε·Q(S) + δ.
* **Rare large ratios.**  With L = log(dP/dQ) of the output, for every t > 0
  ``P[L > ε + t] ≤ δ(ε)/(1 − e^{−t})`` (from ``δ(ε) = E_P[(1 − e^{ε−L})₊] ≥
  P[L > ε + t]·(1 − e^{−t})``): outside an event of at most that probability, an
  attacker's odds on "P rather than Q" grow by at most e^{ε+t}, so a prior p becomes a
  posterior of at most ``p·e^{ε+t} / (p·e^{ε+t} + 1 − p)``.
* **Bayes attacker.**  An attacker who knows everything but which of the two records was
  used, with prior p on P, guesses right with probability at most
  ``1 − min_α [(1 − p)·α + p·f(α)]`` for the trade-off curve f (the type II error of the
  best test at type I error α); every certified pair gives
  ``f(α) ≥ max(0, 1 − δ_i − e^{ε_i}α, e^{−ε_i}(1 − δ_i − α))`` (Kairouz, Oh & Viswanath
  2015; Dong, Roth & Su 2022), and f is at least the maximum of these — the bound below
  uses all pairs given, so the exact profile at many δ gives the near-exact attacker bound.

Every number here is a rational computed exactly, with e^ε replaced by a rational upper
bound (a larger e^ε only loosens each statement), so each returned bound is certified
given certified inputs: ε upper bounds, δ upper bounds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from mpmath.libmp import from_rational, mpf_exp, round_ceiling, to_rational

from exactdp.numerics.errors import InputError
from exactdp.numerics.exact import to_fraction

__all__ = ["exp_upper", "GuaranteeMeaning", "AttackerBound", "meaning", "bayes_success_bound", "tail_probability",
           "bayes_success_from_vertices"]

_PREC = 160


def exp_upper(x: Fraction) -> Fraction:
    """A rational ≥ e^x (libmp's exp rounded towards +∞ at 160 bits, then widened by
    2^-150 relative, which covers any last-bit error of the library)."""
    raw = mpf_exp(from_rational(x.numerator, x.denominator, _PREC + 20, round_ceiling), _PREC, round_ceiling)
    p, q = to_rational(raw)
    return Fraction(p, q) * (1 + Fraction(1, 2**150))


def _lines(pairs) -> list[tuple[Fraction, Fraction]]:
    """Lower lines ``a + b·α`` of f from certified pairs (ε, δ): ``1 − δ − e^ε·α`` and
    ``e^{−ε}(1 − δ − α)``, with e^ε replaced by an upper bound E (both lines only fall)."""
    out = [(Fraction(0), Fraction(0))]
    for eps, delta in pairs:
        big = exp_upper(eps)
        out.append((1 - delta, -big))
        out.append(((1 - delta) / big, -1 / big))
    return out


def _upper_envelope(lines) -> list[tuple[Fraction, Fraction]]:
    """The lines that form ``max_i (a_i + b_i·α)`` from left to right (exact)."""
    best: dict = {}
    for a, b in lines:
        if b not in best or a > best[b]:
            best[b] = a
    hull: list = []
    for b in sorted(best):
        a = best[b]
        while len(hull) >= 2:
            (a1, b1), (a2, b2) = hull[-2], hull[-1]
            # the middle line is never on top if the outer two cross left of where it starts
            if (a1 - a) * (b2 - b1) <= (a1 - a2) * (b - b1):
                hull.pop()
            else:
                break
        hull.append((a, b))
    return hull


def bayes_success_bound(pairs: Iterable, prior) -> Fraction:
    """Upper bound on the probability that the best attacker with prior ``prior`` on world P
    names the right world, from certified pairs (ε_i, δ_i) (see the module docstring).

    ``g(α) = (1 − p)·α + p·max_i line_i(α)`` is convex and piecewise linear on [0, 1]; its
    minimum is at 0, 1 or a breakpoint of the lines' upper envelope, each evaluated exactly.
    """
    p = to_fraction(prior, "prior")
    if not 0 <= p <= 1:
        raise InputError("prior", prior, "must be in [0, 1]")
    lines = _lines([_pair(e, d) for e, d in pairs])
    hull = _upper_envelope(lines)

    def g(x):
        return (1 - p) * x + p * max(a + b * x for a, b in hull)

    vals = [g(Fraction(0)), g(Fraction(1))]
    for (a1, b1), (a2, b2) in zip(hull, hull[1:]):
        x = (a1 - a2) / (b2 - b1)
        if 0 < x < 1:
            # x is where two neighbours of the exact upper envelope meet: the envelope (the
            # max over every line) is their common value there, exactly
            vals.append((1 - p) * x + p * (a1 + b1 * x))
    return min(Fraction(1), 1 - min(vals))


def _down(x):
    return np.nextafter(x, -np.inf)


def bayes_success_from_vertices(alpha_lower, beta_lower, prior: float) -> float:
    """Upper bound on the best attacker's success probability, prior ``prior`` on either
    record, from certified lower bounds of vertices (α_k, β_k) of the trade-off curve f.

    With prior p on the record as it is (P) the best test errs with probability
    ``min_α p·α + (1 − p)·f(α)`` (α = type I error under P, f(α) the type II error under Q);
    the bound takes both assignments of p (f need not be symmetric).  f is non-increasing,
    so on [α_k, α_{k+1}] (vertices sorted by α) ``w·α + (1 − w)·f(α) ≥ w·α_k + (1 − w)·β_{k+1}``;
    on [0, α_first] the same with α = 0, on [α_last, 1] with f ≥ 0.  The minimum of these
    lower bounds bounds the error from below, so one minus it bounds the success from
    above.  Float arithmetic, every product and sum stepped one float down (so each is ≤ its
    exact value) and the result one float up: certified, with the vertices' spacing as slack.
    """
    a = np.asarray(alpha_lower, dtype=np.float64)
    b = np.asarray(beta_lower, dtype=np.float64)
    order = np.argsort(a, kind="stable")
    a, b = np.maximum(a[order], 0.0), np.maximum(b[order], 0.0)
    left = np.concatenate(([0.0], a))  # interval starts
    right_beta = np.concatenate((b, [0.0]))  # f at the interval ends (f ≥ 0 beyond the last)
    err = np.inf
    p = float(prior)
    for w in (p, 1.0 - p):
        w_lo, rest_lo = _down(w), _down(1.0 - w)  # the weights rounded down (each ≤ its exact value)
        err = min(err, float(_down(_down(w_lo * left) + _down(rest_lo * right_beta)).min()))
    return float(min(1.0, np.nextafter(1.0 - err, np.inf)))


def _pair(eps, delta) -> tuple[Fraction, Fraction]:
    e, d = to_fraction(eps, "epsilon"), to_fraction(delta, "delta")
    if e < 0:
        raise InputError("epsilon", eps, "must be >= 0")
    if not 0 <= d <= 1:
        raise InputError("delta", delta, "must be in [0, 1]")
    return e, d


def tail_probability(eps, delta, t) -> Fraction:
    """Upper bound on ``P[L > ε + t]``: ``δ/(1 − e^{−t})`` (t > 0)."""
    t = to_fraction(t, "t")
    return to_fraction(delta, "delta") / (1 - exp_upper(-t))


@dataclass(frozen=True)
class AttackerBound:
    """For one prior: the best attacker's success probability (upper bound) and the posterior
    after one output (upper bound), except on outputs of probability at most
    ``GuaranteeMeaning.tail_probability``."""

    prior: Fraction
    success: Fraction
    posterior: Fraction


@dataclass(frozen=True)
class GuaranteeMeaning:
    """The readings of one certified (ε, δ) (and the extra profile points behind it).

    Attributes
    ----------
    epsilon, delta : Fraction
        The guarantee read (ε an upper bound at δ).
    likelihood_ratio : Fraction
        An upper bound on e^ε.
    t : Fraction
        The margin of the posterior reading (1 nat by default).
    tail_probability : Fraction
        Upper bound on the probability of an output whose likelihood ratio exceeds e^{ε+t}.
    attackers : tuple of AttackerBound
        One per prior.
    """

    epsilon: Fraction
    delta: Fraction
    likelihood_ratio: Fraction
    t: Fraction
    tail_probability: Fraction
    attackers: tuple


def meaning(epsilon, delta, *, profile: Iterable = (), priors=("1/2", "1/10", "1/100", "1/1000"),
            t="1") -> GuaranteeMeaning:
    """The readings of a certified (ε, δ) for a person in the data.

    Parameters
    ----------
    epsilon, delta
        A certified ε (upper bound) at δ: exact rationals (``"24.46"``, ``Fraction``).
    profile : iterable of (ε_i, δ_i), optional
        More certified points of the same profile (e.g. a sweep's ε at every target δ):
        they sharpen the attacker bound (the trade-off curve is at least every pair's).
    priors : sequence of rationals
        The attacker's prior probabilities of the true record.
    t : rational
        The margin of the posterior reading (> 0).

    Returns
    -------
    GuaranteeMeaning

    Notes
    -----
    Method: exact rational arithmetic, e^ε by an upper bound (module docstring).  Error
    bound: none beyond that outward rounding — each number is a certified upper bound.
    Reference: Kairouz, Oh & Viswanath (2015), Dong, Roth & Su (2022) for the trade-off of
    an (ε, δ) pair; the tail reading from the definition of the hockey-stick divergence.
    """
    eps, dl = to_fraction(epsilon, "epsilon"), to_fraction(delta, "delta")
    tt = to_fraction(t, "t")
    if tt <= 0:
        raise InputError("t", t, "must be > 0")
    pairs = [_pair(eps, dl)] + [_pair(e, d) for e, d in profile]
    ratio = exp_upper(eps)
    big = exp_upper(eps + tt)
    out = []
    for pr in priors:
        p = to_fraction(pr, "prior")
        out.append(AttackerBound(p, bayes_success_bound(pairs, p), p * big / (p * big + 1 - p)))
    return GuaranteeMeaning(eps, dl, ratio, tt, tail_probability(eps, dl, tt), tuple(out))
