"""A certified privacy profile as Python floats rounded outward.

Other libraries exchange privacy parameters as binary floats.  This module is where
exactdp's certified results (mpmath numbers, exact rationals) become such floats and
back, without giving up the certificate:

* an incoming float (an ε or a δ target handed over by dp_accounting or OpenDP) is
  taken **exactly**, as the binary rational it is (:func:`exact_real`);
* an outgoing value is the conservative side of the certified result rounded
  **outward** to the nearest float on the safe side (:func:`float_up`), so the float
  returned is itself a certified upper bound on δ(ε) or on ε(δ).

:class:`CertifiedProfile` answers both queries for one
:class:`~exactdp.mechanisms.Composition` or :class:`~exactdp.kinds.Mixture` (or for no
mechanism at all).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.mixed_balls import to_mpf
from exactdp.kinds import Mixture
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, to_fraction

__all__ = ["CertifiedProfile", "exact_real", "float_up"]

#: (ε−ρ)²/(4ρ) beyond this makes the zCDP bound e^{−(ε−ρ)²/(4ρ)} smaller than the
#: smallest positive float (e^{−745.2} ≈ 2^{−1075})
_UNDERFLOW_EXPONENT = 746
#: the smallest positive float, 2^−1074, exactly
_SMALLEST_FLOAT = mpmath.ldexp(mpmath.mpf(1), -1074)


def exact_real(value, field: str):
    """An exact rational from an interface value; a binary float is taken exactly.

    Parameters
    ----------
    value : float, int, Fraction, str, ...
        A float is the binary rational it denotes (``Fraction(0.1)``, not one tenth);
        ``math.inf`` is returned as ``math.inf``; every other type goes through
        :func:`exactdp.numerics.exact.to_fraction` (decimal strings digit for digit).
    field : str
        Name used in error messages.

    Returns
    -------
    Fraction or float
        A Fraction, or ``math.inf``.

    Raises
    ------
    InputError
        NaN, ``-inf`` or a value ``to_fraction`` refuses.
    """
    if isinstance(value, float) or type(value).__name__ in ("float16", "float32", "float64", "longdouble"):
        x = float(value)
        if math.isnan(x) or x == -math.inf:
            raise InputError(field, value, "must be a number (not NaN or -inf)")
        return math.inf if x == math.inf else Fraction(x)
    return to_fraction(value, field)


def float_up(x) -> float:
    """The smallest float ≥ ``x`` (``x`` an mpmath number, a Fraction or an int).

    Notes
    -----
    Exact: each candidate float is compared with ``x`` exactly (as a Fraction, or as an
    mpmath number, which holds any float without rounding), so the result is the least
    float not below ``x``; values beyond the float range give ``inf``, positive values
    below it the smallest subnormal, never 0.
    """
    if isinstance(x, (Fraction, int)):
        x = Fraction(x)

        def below(f):
            return f == -math.inf or (f != math.inf and Fraction(f) < x)
    else:
        if not isinstance(x, mpmath.mpf):
            raise InputError("value", x, "expected an mpmath number, a Fraction or an int")
        if mpmath.isnan(x):  # (mpmath.mpf(x) would round x to the working precision)
            raise UncertifiedError("the accountant returned NaN; no certified bound is available")

        def below(f):
            return mpmath.mpf(f) < x

    try:
        f = float(x)
    except OverflowError:
        f = math.inf if x > 0 else -math.inf
    while below(f):
        f = math.nextafter(f, math.inf)
    while f != -math.inf and not below(math.nextafter(f, -math.inf)):
        f = math.nextafter(f, -math.inf)
    return f


class CertifiedProfile:
    """Certified δ(ε) and ε(δ) of one composition, as floats rounded outward.

    Parameters
    ----------
    composition : Composition, Mixture or None
        The mechanisms; ``None`` means no privacy loss at all (δ = 0, ε = 0).
    rel_tol : float
        Certified relative accuracy of each tail (see :class:`exactdp.ExactAccountant`).

    Notes
    -----
    Method: a fresh :class:`exactdp.ExactAccountant` (exact lattice thresholds, sieved
    tilted-contour quadrature) answers each query, so an answer is the same as the CLI's
    for the same design and query, whatever was asked before; the conservative side
    (``value``) is rounded up to a float, and answers are memoised per exact query.  For ε
    so large that the composition's ρ-zCDP bound ``δ ≤ exp(−(ε−ρ)²/(4ρ))`` is below the
    smallest positive float, the smallest positive float is returned without running the
    engine; likewise where the mixed route refuses a bracket too wide whose certified upper
    end lies below that float (deep tails beside window deficits).  Error bound: the returned
    float is a certified upper bound on the exact δ(ε) (on the exact ε(δ)); the engine's
    certified relative accuracy is ``rel_tol`` per tail.  Reference: Canonne, Kamath &
    Steinke (2020), the discrete Gaussian is ρ-zCDP with ρ = Δ²/(2σ²); Bun & Steinke
    (2016), Proposition 1.3 for the zCDP bound.
    """

    def __init__(self, composition: Composition | Mixture | None, rel_tol: float = 1e-10):
        if composition is not None and not isinstance(composition, (Composition, Mixture)):
            raise InputError("composition", composition, "expected an exactdp.Composition, a Mixture or None")
        self.composition = composition
        self.rel_tol = rel_tol
        self._deltas: dict = {}
        self._epsilons: dict = {}

    def _accountant(self) -> ExactAccountant:
        """A fresh exact accountant for each query, so that every answer is a function of
        the composition and the query alone (an accountant's quadrature state is tuned by
        the queries it has seen, which can move a certified bound in its last digits)."""
        assert self.composition is not None  # the callers answer None themselves
        design: Any = self.composition  # ExactAccountant takes a Mixture too (route "mixed")
        return ExactAccountant(design, rel_tol=self.rel_tol)

    def delta(self, epsilon) -> float:
        """Certified upper bound on δ(ε), rounded up to a float (in [0, 1])."""
        eps = exact_real(epsilon, "epsilon")
        if eps < 0:
            raise InputError("epsilon", epsilon, "must be >= 0")
        if self.composition is None or eps == math.inf:
            return 0.0
        pure = getattr(self.composition, "pure_epsilon", None)  # a Mixture of pure-DP parts: δ = 0 beyond its ε
        if pure is not None and eps >= pure:
            return 0.0
        if isinstance(self.composition, Composition):
            rho = self.composition.rho
            if eps > rho and (eps - rho) ** 2 > 4 * rho * _UNDERFLOW_EXPONENT:
                return math.ulp(0.0)
        if eps not in self._deltas:
            self._deltas[eps] = min(1.0, float_up(self._delta_upper(eps)))
        return self._deltas[eps]

    def _delta_upper(self, eps: Fraction) -> mpmath.mpf:
        """The accountant's certified upper end of δ(eps); where it refuses a bracket too wide
        (the mixed route deep in the tail: [0, 2e-360] beside the windows' deficit), the upper end of
        its certified ball when that lies below the smallest positive float (the float answer is then
        that float, as a discrete-Gaussian composition's zCDP shortcut gives; OpenDP's ε search
        probes such ε)."""
        acc = self._accountant()
        try:
            return acc.delta([eps])[0].value
        except UncertifiedError:
            ball = getattr(acc, "delta_ball", None)  # (the mixed route's certified ball, however wide)
            if ball is None:
                raise
            upper = to_mpf(ball(eps), True)
            if not upper < _SMALLEST_FLOAT:
                raise
            return max(upper, mpmath.mpf(0))

    def epsilon(self, delta) -> float:
        """Certified upper bound on the smallest ε ≥ 0 with δ(ε) ≤ ``delta``, rounded up.

        ``inf`` for ``delta = 0`` (a discrete Gaussian is not pure DP; a Mixture of pure-DP
        parts: its basic-composition ε, which is exact at δ = 0) and for a δ at or below the
        floor ``1 − Π(1 − δ_i)`` of its (ε, δ) parts, ``0`` for ``delta ≥ 1``.
        """
        d = exact_real(delta, "delta")
        if d < 0:
            raise InputError("delta", delta, "must be >= 0")
        if d >= 1 or self.composition is None:
            return 0.0
        if d == 0:
            pure = getattr(self.composition, "pure_epsilon", None)
            return math.inf if pure is None else float_up(pure)
        if d not in self._epsilons:
            try:
                upper = self._accountant().epsilon([d])[0].value
            except InputError as exc:  # a mixture's (ε, δ) parts: no finite ε at or below their δ floor
                if exc.field != "delta" or isinstance(self.composition, Composition):
                    raise
                self._epsilons[d] = math.inf
                return math.inf
            self._epsilons[d] = 0.0 if upper <= 0 else float_up(upper)
        return self._epsilons[d]
