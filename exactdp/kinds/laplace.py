"""The continuous Laplace mechanism ``x + Lap(scale)``, composed exactly in closed form.

The loss of one Laplace.  With ``μ = |shift|/b``, the loss ``L = (|x − s| − |x|)/b`` under
``P = Lap(0, b)`` is ``μ`` with mass 1/2 (``x ≤ 0``), ``−μ`` with mass ``e^{−μ}/2``
(``x ≥ s``), and on ``(−μ, μ)`` it has the density ``e^{(l−μ)/2}/4``; under Q the mirror
image.  All three parts are ``e^{l/2}`` times one symmetric measure,

    P_L = (e^{−μ/2}/2) · e^{l/2} · ν,    ν = δ_μ + δ_{−μ} + ½·1_{(−μ, μ)}(l) dl,

so ``m`` copies compose into ``(e^{−μ/2}/2)^m e^{l/2} ν^{*m}``.  Expanding ``ν^{*m}`` by the
number ``c`` of continuous pieces and writing the ``c``-fold convolution of the box as
truncated powers (the B-spline), ``ν^{*m}`` is a signed sum of ``(A_j − l)_+^{c−1}`` with knots
``A_j = (2j − m)μ``, ``j = 0..m``, and integer coefficients

    Γ_{c,j} = C(m, c) · [z^j] (1 + z)^{m−c} (z − 1)^c     (c = 0: the atoms, C(m, j) at A_j).

The hockey-stick ``D(t) = E_P[(1 − e^{t−L})_+]`` then integrates each piece in closed form
(``(e^{l/2} − e^{t−l/2})`` against ``(A − l)_+^{c−1}`` is a sinh series with positive terms):

    D(t) = 2 e^{(t − mμ)/2} 2^{−m} Σ_{j: A_j > t} Σ_c Γ_{c,j} W_c((A_j − t)/2),
    W_c(y) = Σ_{k > c, k ≡ c+1 (mod 2)} y^k/k!,

and ``D(t) = 1 − e^t + e^t D(−t)`` (symmetry) for ``t < 0``.  Single Laplace:
``D(t) = 1 − e^{(t−μ)/2}`` on ``[0, μ]``.  The ``Γ`` alternate in sign: the sum cancels, by
more bits as ``m`` grows; it is evaluated in balls (:mod:`flint`) at a working precision
raised until the result has the precision asked (:meth:`LaplaceLoss.delta`), never guessed.

Several μ.  Writing ``T_c(y) = 2^{−c} y_+^{c−1}/(c−1)!`` (``T_0 = δ``), the box of density ½ on
``(−μ, μ)`` is ``T_1(μ − l) − T_1(−μ − l)`` and ``ν^{*m} = Σ_{c,j} Γ_{c,j} T_c(A_j − l)``.  Since
``T_a * T_b = T_{a+b}`` (convolution of truncated powers) and every P-law is a constant times
``e^{l/2}`` times its ν, groups of ``m_k`` Laplaces of ``μ_k`` compose into
``K e^{l/2} Σ Γ_{c,A} T_c(A − l)`` with ``K = Π(e^{−μ_k/2}/2)^{m_k} = e^{−E/2}2^{−m}`` (``E = Σ m_kμ_k``,
``m = Σ m_k``), knots ``A = Σ_k (2j_k − m_k)μ_k`` and ``Γ_{c,A} = Σ Π_k Γ^{(k)}_{c_k,j_k}`` over
``Σc_k = c`` and the ``j_k`` of that knot (exact integers, coinciding knots merged): the same
``D(t) = 2e^{t/2}K Σ_{A > t} Σ_c Γ_{c,A} W_c((A − t)/2)``, one group being the formula above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint

from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, parse_exact, positive_fraction

__all__ = ["Laplace", "LaplaceLoss", "MAX_LAPLACE_COUNT", "MAX_TERMS", "laplace_part"]

#: the most continuous Laplaces one design composes (the closed form's cancellation and its
#: O(count²) terms per threshold grow with the count)
MAX_LAPLACE_COUNT = 256
#: the largest working precision (bits) the closed form is evaluated at
MAX_BITS = 1 << 16
#: Laplaces of several μ: the most closed-form terms (distinct knots × (count + 1)) per design
#: (one μ: at most (MAX_LAPLACE_COUNT + 1)², the same order)
MAX_TERMS = 70_000


@dataclass(frozen=True, order=True)
class Laplace:
    """``Lap(0, scale)`` against ``Lap(shift, scale)`` (density ``e^{−|x|/b}/(2b)``; real
    sensitivity ``shift``, an exact rational).  It is ε-DP with ``ε = |shift|/scale``; its
    loss and its exact composition: module docstring."""

    scale: Fraction
    shift: Fraction = Fraction(1)
    kind = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "scale", positive_fraction(self.scale, "scale"))
        object.__setattr__(self, "shift", parse_exact(self.shift, "shift", lo=-10**12, hi=10**12))

    @property
    def epsilon(self) -> Fraction:
        """``μ = |shift|/scale``: the largest loss (the ε of pure ε-DP)."""
        return abs(self.shift) / self.scale

    @property
    def pure_epsilon(self) -> Fraction:
        return self.epsilon


def laplace_part(groups) -> LaplaceLoss | None:
    """The composed loss of the ``(Laplace, count)`` groups of a design (None without one).

    Laplaces of several ``μ = |shift|/scale`` compose in the same closed form, their knots the
    sums of every group's (module docstring, "Several μ").

    Raises
    ------
    InputError
        More than :data:`MAX_LAPLACE_COUNT` Laplaces, or several μ whose knots and pieces are more
        than :data:`MAX_TERMS` (naming ``approx_dp``, a pure ε-DP dominating pair, as the remedy).
    """
    lap = [(m, c) for m, c in groups if isinstance(m, Laplace) and m.shift != 0]
    if not lap:
        return None
    by_mu: dict = {}
    for mech, c in lap:
        by_mu[mech.epsilon] = by_mu.get(mech.epsilon, 0) + c
    m = sum(by_mu.values())
    if m > MAX_LAPLACE_COUNT:
        raise InputError("laplace count", m, f"at most {MAX_LAPLACE_COUNT} continuous Laplaces per design (the exact "
                                             f"closed form's cost and cancellation grow with the count)")
    parts = sorted(by_mu.items())
    n = math.prod(c + 1 for _, c in parts)  # (an upper bound of the distinct knots)
    if len(parts) > 1 and n * (m + 1) > MAX_TERMS and _knot_count(parts) * (m + 1) > MAX_TERMS:
        raise InputError("laplace", ", ".join(str(u) for u, _ in parts[:4]),
                         f"continuous Laplaces of {len(parts)} values of |shift|/scale have more than {MAX_TERMS} "
                         "closed-form terms (knots × pieces); for a certified upper bound give some as "
                         "kind = \"approx_dp\", epsilon = |shift|/scale, delta = 0 (a pure ε-DP dominating pair)")
    return LaplaceLoss(parts)


def _knot_count(parts) -> int:
    """The number of distinct knots ``Σ_k (2j_k − m_k)μ_k`` (exact rationals)."""
    knots = {Fraction(0)}
    for mu, c in parts:
        knots = {a + (2 * j - c) * mu for a in knots for j in range(c + 1)}
        if len(knots) > MAX_TERMS:
            break
    return len(knots)


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _gamma_one(m: int) -> list:
    """``Γ_{c,j}`` of ``m`` Laplaces of one μ (module docstring), ``[c][j]``."""
    one_plus, z_minus = flint.fmpz_poly([1, 1]), flint.fmpz_poly([-1, 1])
    gam = []
    for c in range(m + 1):
        coeffs = [int(x) for x in (one_plus ** (m - c) * z_minus**c).coeffs()] + [0] * (m + 1)
        bc = math.comb(m, c)
        gam.append([bc * coeffs[j] for j in range(m + 1)])
    return gam


class LaplaceLoss:
    """The composed loss of continuous Laplaces: ``m`` of one ``μ``, or several groups (module
    docstring).

    Parameters
    ----------
    mu : Fraction or sequence of (Fraction, int)
        ``|shift|/scale`` (> 0); or, with ``m`` None, the groups ``(μ_k, m_k)``.
    m : int, optional
        The number of Laplaces of the one ``μ``.

    Attributes
    ----------
    parts : tuple of (Fraction, int)
        The groups ``(μ_k, m_k)``, μ increasing, counts merged.
    m : int
        The number of Laplaces ``Σ m_k`` (the pieces c = 0 … m).
    mu : Fraction
        Half the knots' spacing: the largest rational dividing every ``μ_k`` (``μ`` itself for one
        group); every knot is ``−extent + 2μ·k``, k an integer.
    knots : list of Fraction
        The distinct knots ``A_j``, increasing.
    gamma : list of list of int
        ``Γ_{c,j}`` (``[c][j]``).
    zcdp : Fraction
        ``Σ m_k μ_k²/2`` (pure ε-DP is ε²/2-zCDP, Bun & Steinke 2016).
    """

    def __init__(self, mu, m: int | None = None):
        parts: dict = {}
        for u, c in ([(mu, m)] if m is not None else mu):
            u, c = Fraction(u), int(c)
            if u <= 0 or c < 0:
                raise ValueError("Laplace parts must have μ > 0 and a count ≥ 0")
            if c:
                parts[u] = parts.get(u, 0) + c
        if not parts:
            raise ValueError("no Laplace")
        self.parts = tuple(sorted(parts.items()))
        self.m = sum(c for _, c in self.parts)
        self.extent = sum((u * c for u, c in self.parts), Fraction(0))  # the loss lies in [−extent, extent]
        self.zcdp = sum((c * u * u / 2 for u, c in self.parts), Fraction(0))
        num = math.gcd(*(u.numerator for u, _ in self.parts))
        den = math.lcm(*(u.denominator for u, _ in self.parts))
        self.mu = Fraction(num, den)
        # convolve the groups' expansions: knot → [Γ_{c, knot} for c = 0 … m] (T_a * T_b = T_{a+b})
        table: dict = {Fraction(0): [1]}
        for u, c in self.parts:
            g = _gamma_one(c)
            new: dict = {}
            for a, row in table.items():
                for j in range(c + 1):
                    k = a + (2 * j - c) * u
                    out = new.setdefault(k, [0] * (self.m + 1))
                    for c0, v in enumerate(row):
                        if v:
                            for c1 in range(c + 1):
                                if g[c1][j]:
                                    out[c0 + c1] += v * g[c1][j]
            table = new
        self.knots = sorted(table)
        self.gamma = [[table[k][c] if c < len(table[k]) else 0 for k in self.knots] for c in range(self.m + 1)]
        self._cache: dict = {}

    @property
    def n_knots(self) -> int:
        return len(self.knots)

    def prefactor(self, tb: flint.arb) -> flint.arb:
        """``2e^{t/2}K``, K = ``Π(e^{−μ_k/2}/2)^{m_k} = e^{−extent/2}2^{−m}`` (the prefactor of D), a ball."""
        return 2 * ((tb - _q(self.extent)) / 2).exp() / flint.arb(2) ** self.m

    def knot(self, j: int) -> Fraction:
        return self.knots[j]

    # ------------------------------------------------------------------ W_c(y)
    def _w(self, y: flint.arb, prec: int) -> list:
        """``[W_0(y), …, W_m(y)]`` for a ball ``y ≥ 0`` (module docstring), from ``W_m`` and
        ``W_{m−1}`` down by ``W_c = y^{c+1}/(c+1)! + W_{c+2}`` (positive terms)."""
        m = self.m
        pw = [flint.arb(1)]
        for k in range(1, m + 2):
            pw.append(pw[-1] * y / k)  # y^k/k!
        top = [self._w_top(y, c, pw, prec) for c in (m - 1, m) if c >= 0]
        w: list = [flint.arb(0)] * (m + 1)
        if m >= 1:
            w[m - 1] = top[0]
        w[m] = top[-1]
        for c in range(m - 2, -1, -1):
            w[c] = pw[c + 1] + w[c + 2]
        return w

    @staticmethod
    def _w_top(y: flint.arb, c: int, pw: list, prec: int) -> flint.arb:
        """``W_c(y)`` by its series (``y ≤ c + 1``, with a certified tail) or its closed form
        ``(R_c(y) − (−1)^c R_c(−y))/2``, ``R_c(y) = e^y − Σ_{k≤c} y^k/k!`` (``y > c + 1``: the
        exponential dominates; no catastrophic cancellation)."""
        if y.upper() > c + 1:
            even = sum((pw[k] for k in range(0, c + 1, 2)), flint.arb(0))
            odd = sum((pw[k] for k in range(1, c + 1, 2)), flint.arb(0))
            r_plus = y.exp() - (even + odd)
            r_minus = (-y).exp() - (even - odd)
            return (r_plus - r_minus) / 2 if c % 2 == 0 else (r_plus + r_minus) / 2
        yu = flint.arb(y.upper())
        term = pw[c + 1] if c + 1 < len(pw) else pw[-1] * y / (c + 1)
        k, s = c + 1, flint.arb(0)
        eps = flint.arb(2) ** (-prec - 8)
        while True:
            s += term
            ratio = yu * yu / ((k + 1) * (k + 2))
            term = term * y * y / ((k + 1) * (k + 2))
            k += 2
            if ratio < 0.5 and (term < s * eps or k > c + 4 * prec):  # the rest: below twice the next term
                return s + flint.arb(0).union(2 * flint.arb(term.upper()))

    # ------------------------------------------------------------------ D(t)
    def delta(self, t_lo: Fraction, t_hi: Fraction, tb: flint.arb | None, prec: int) -> flint.arb:
        """A ball of ``D(t) = E_P[(1 − e^{t−L})_+]`` for the real ``t ∈ [t_lo, t_hi]`` (``tb`` a ball
        containing it), with a relative radius about ``2^{−prec}`` (wider only where the ball of
        t is).

        Raises
        ------
        UncertifiedError
            When the cancellation would need more than :data:`MAX_BITS` bits.
        """
        key = (t_lo, t_hi, prec) if t_lo == t_hi else None
        if key is not None and key in self._cache:
            return self._cache[key]
        old = flint.ctx.prec
        try:
            extra = 32 + 2 * self.m
            while True:
                flint.ctx.prec = prec + extra
                ball = _q(t_lo) if key is not None else tb
                if ball is None:
                    raise TypeError("LaplaceLoss.delta: a ball of t is needed where t_lo < t_hi")
                d = self._delta_at(t_lo, t_hi, ball)
                if d.is_zero() or d.rad() <= d.upper() * flint.arb(2) ** (-prec + 4) or t_lo != t_hi:
                    break
                if prec + extra > MAX_BITS:
                    raise UncertifiedError(f"the continuous Laplaces' closed form at t = {float(t_lo):.6g} needs more "
                                           f"than {MAX_BITS} bits")
                extra *= 2
            flint.ctx.prec = prec
            d = +d
        finally:
            flint.ctx.prec = old
        if key is not None:
            self._cache[key] = d
        return d

    def _delta_at(self, t_lo: Fraction, t_hi: Fraction, tb: flint.arb) -> flint.arb:
        if t_lo >= self.extent:
            return flint.arb(0)
        if t_hi <= -self.extent:  # L > t almost surely: E_P[1 − e^{t−L}] = 1 − e^t
            return -tb.expm1()
        if t_hi <= 0:  # the symmetry D(t) = 1 − e^t + e^t D(−t), on the side with fewer knots
            return -tb.expm1() + tb.exp() * self._direct(-t_hi, -t_lo, -tb)
        return self._direct(t_lo, t_hi, tb)

    def _direct(self, t_lo: Fraction, t_hi: Fraction, tb: flint.arb) -> flint.arb:
        m = self.m
        total = flint.arb(0)
        for j in range(self.n_knots - 1, -1, -1):
            a = self.knot(j)
            if a <= t_lo:
                break
            straddle = a <= t_hi  # t may lie on either side of the knot: the term is in [0, its value at t_lo]
            y = (_q(a) - tb) / 2 if not straddle else (_q(a) - _q(t_lo)) / 2
            if straddle:
                y = flint.arb(y.upper())
            w = self._w(y.nonnegative_part() if y.lower() < 0 else y, flint.ctx.prec)
            s = sum((self.gamma[c][j] * w[c] for c in range(m + 1) if self.gamma[c][j]), flint.arb(0))
            total += flint.arb(0).union(s) if straddle else s
        d = self.prefactor(tb) * total
        if d.lower() < 0:
            d = d.nonnegative_part() if d.upper() > 0 else flint.arb(0)
        return d
