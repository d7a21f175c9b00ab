"""The accountant interface and the input checks every accountant shares.

:class:`Accountant` is what the package functions (:func:`exactdp.delta`, ...), the sweep,
the CLI and the interop adapters talk to.  Two routes implement it:

* :class:`exactdp.accounting.lattice_route.LatticeAccountant` — the int64 lattice engine
  (certified point values);
* :class:`exactdp.accounting.lattice_free.LatticeFreeAccountant` — any design, whatever its
  lattice (certified brackets).

``ExactAccountant(composition)`` is one class for every design: the planner
(:mod:`exactdp.accounting.plan`) picks the route, the accountant delegates to it, so callers
need not know which one answers; ``certification`` and ``diagnostics().route`` say it.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath

from exactdp.numerics.arith import (
    FTWO,
    dps_to_prec,
    from_int,
    from_rational,
    make,
    mpf_abs,
    mpf_add,
    mpf_le,
    mpf_mul,
    mpf_sqrt,
    round_nearest,
)
from exactdp.numerics.errors import InputError
from exactdp.numerics.exact import MemoReal, to_fraction
from exactdp.numerics.precision import DPS_FLOAT64, DPS_GUARD, DPS_LOW, to_mpf, workdps

if TYPE_CHECKING:
    from exactdp.mechanisms import Composition

__all__ = ["Accountant", "bun_steinke_epsilon", "check_rel_tol", "check_epsilon_range", "sequence_values", "EPS_MAX"]

#: the largest |ε| answered (the engines' tested range); beyond it the refusal quotes the
#: zCDP bound, which there puts δ below 10^-(10^99/ρ) (or 1 − e^ε rounds to 1 for ε < 0)
EPS_MAX = Fraction(10) ** 50
_EPS_MAX_RAW = from_int(10**50)
_PREC_LOW = dps_to_prec(DPS_LOW)


class Accountant(abc.ABC):
    """δ(ε), ε(δ) and the trade-off β = f(α) of one composition, each with a certified bound.

    Attributes
    ----------
    composition : Composition
        The design.
    rho : Fraction
        Its zCDP parameter (the privacy-loss mean).

    Notes
    -----
    Every method takes a *sequence* of exact values (a lone string or number is refused
    with :class:`InputError`) and returns a tuple of points of
    :mod:`exactdp.accounting.results` (``estimate`` / ``error_bound`` / ``value`` on the
    conservative side / ``lower`` / ``upper``); a value that cannot be certified raises
    :class:`exactdp.numerics.errors.UncertifiedError`, never NaN.
    """

    #: ``"exact"`` (certified point values) or ``"bracket"`` (certified brackets)
    certification: str = "exact"
    composition: Composition
    rho: Fraction
    #: the certified relative accuracy asked of every tail
    rel_tol: float

    @abc.abstractmethod
    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (value = certified upper bound)."""

    @abc.abstractmethod
    def epsilon(self, deltas) -> tuple:
        """ε(δ) for each δ (value = certified upper bound)."""

    @abc.abstractmethod
    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α (value = certified lower bound)."""

    @abc.abstractmethod
    def diagnostics(self):
        """Which method answered and its size (:class:`~exactdp.accounting.results.Diagnostics`)."""


def bun_steinke_epsilon(rho, delta) -> Callable:
    """The Bureau's conversion ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` as an exact-real callable."""
    rho = to_fraction(rho, "rho")
    delta = to_fraction(delta, "delta")

    memo: dict = {}  # a value is a pure function of dps (callers ask the same ones)

    def eps(dps):
        v = memo.get(dps)
        if v is None:
            # ``r + 2·sqrt(r·L)`` at dps + DPS_GUARD digits on raw mpf tuples (the libmp calls of
            # the mpf operators and mpmath.sqrt, :mod:`exactdp.numerics.arith`)
            prec, rnd = dps_to_prec(dps + DPS_GUARD), mpmath.mp._prec_rounding[1]
            r = from_rational(rho.numerator, rho.denominator, prec, round_nearest)  # to_mpf(rho)
            x = mpf_mul(r, _log_inverse(delta, dps + DPS_GUARD)._mpf_, prec, rnd)
            if x[0]:  # a negative product (δ > 1): mpmath's complex square root
                with workdps(dps + DPS_GUARD):
                    v = memo[dps] = make(r) + 2 * mpmath.sqrt(make(x))
            else:
                v = memo[dps] = make(mpf_add(r, mpf_mul(mpf_sqrt(x, prec, rnd), FTWO, prec, rnd), prec, rnd))
        return v

    return eps


@functools.lru_cache(maxsize=4096)
def _log_inverse(delta: Fraction, dps: int):
    """``log(1/δ)`` at ``dps`` digits, as :func:`bun_steinke_epsilon` computes it (the
    sweep asks the same 42 targets of every pair)."""
    with workdps(dps):
        return mpmath.log(1 / to_mpf(delta))


def sequence_values(values, field: str) -> list:
    """The list of values of a sequence argument (a lone string or number is refused)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InputError(field, values, "expected a sequence of values, e.g. [\"1\", \"11/10\"] (not a lone value)")
    return list(values)


def check_epsilon_range(rho, values, field: str = "epsilon", shown=None) -> None:
    """Refuse |ε| > :data:`EPS_MAX` (exact values or ``f(dps)`` callables), quoting the
    zCDP bound ``δ(ε) ≤ exp(−(ε−ρ)²/(4ρ))`` there; ``shown`` are the values as the user
    gave them (for the message; default: the values)."""
    rho = Fraction(rho)
    for e, raw in zip(values, values if shown is None else shown):
        if callable(e):
            if isinstance(e, MemoReal) and mpmath.mp.dps <= DPS_LOW:
                # e(DPS_LOW) without a context: the same memoised value (need = DPS_LOW either way)
                x = e(DPS_LOW)
                if type(x) is mpmath.mpf and mpf_le(mpf_abs(x._mpf_, _PREC_LOW, round_nearest), _EPS_MAX_RAW):
                    continue  # abs(x) <= 10**50 at 30 digits, raw
            with mpmath.workdps(DPS_LOW):
                x = e(DPS_LOW)
            if abs(x) <= 10**50:
                continue
            e = Fraction(mpmath.nstr(x, 25))
        if abs(e) <= EPS_MAX:
            continue
        tail = ""
        if e > 0 and rho > 0:
            nats = (e - rho) ** 2 / (4 * rho)  # exact
            with mpmath.workdps(DPS_FLOAT64):  # 4 digits of a message
                digits = mpmath.nstr(mpmath.mpf(nats.numerator) / nats.denominator / mpmath.log(10), 4)
            tail = f" (there δ(ε) ≤ exp(−(ε−ρ)²/(4ρ)) ≈ 10^-{digits} by the zCDP bound)"
        elif e < 0:
            tail = " (there δ(ε) = 1 − e^ε + e^ε δ(−ε) rounds to 1)"
        raise InputError(field, raw if isinstance(raw, (str, int, Fraction)) else "a callable",
                         f"|ε| above 1e50 is not supported{tail}")


def check_rel_tol(value, field: str = "rel_tol") -> float:
    """The engine accuracy ``rel_tol`` as a float in [1e-15, 1e-2] (a tolerance, not a
    privacy parameter: floats, ints, rationals and decimal strings are accepted)."""
    try:
        if isinstance(value, (float, int)) and not isinstance(value, bool):
            x = float(value)
        else:
            x = float(to_fraction(value, field))
    except (InputError, TypeError, ValueError, OverflowError):
        raise InputError(field, value, "expected a number in [1e-15, 1e-2], e.g. 1e-10") from None
    if not (1e-15 <= x <= 1e-2):
        raise InputError(field, value, "must lie in [1e-15, 1e-2] (float64 arithmetic cannot certify below 1e-15)")
    return x
