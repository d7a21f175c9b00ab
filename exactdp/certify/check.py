"""Certificates beside the fast path's results: enclose each point, check its side.

The float64 engine reports a *conservative* value per point — an upper bound for δ and
ε, a lower bound for β.  :func:`certify_points` encloses each point independently by
ball arithmetic and checks that the fast value lies on the conservative side of the
whole enclosure (δ, ε: value ≥ upper end; β: value ≤ lower end).  A point that fails
raises :class:`~exactdp.numerics.errors.UncertifiedError`: the two computations
disagree, and neither number should be used until that is understood.

The certificate is the lattice one (:class:`~exactdp.certify.queries.Certifier`) where one
of its tail methods fits the design's lattice, else the meet-in-the-middle enumeration over
the design's incommensurate weights (:class:`~exactdp.certify.offlattice.MitmCertifier`);
:func:`~exactdp.certify.queries.certifier_for` decides, and ``Enclosure.method`` says which.

The fast path's lattice piece (ε) or vertex (β) is passed on as a *hint*: it only tells
the certificate where to look first; the certificate checks the piece itself.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from exactdp.certify.offlattice import MitmCertifier
from exactdp.certify.queries import Certifier, certifier_for
from exactdp.certify.result import Enclosure
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import DPS_LOW, to_mpf, workdps

__all__ = ["certify_points", "on_conservative_side", "DIGITS"]

#: significant digits of the decimal enclosure strings
DIGITS = 22

_NAMES = {"delta": ("δ", "epsilon"), "epsilon": ("ε", "delta"), "tradeoff": ("β", "alpha")}


def _exact(x) -> Fraction | None:
    """The binary number x exactly (None when it is not finite)."""
    if isinstance(x, Fraction):
        return x
    x = mpmath.mpf(x) if not isinstance(x, mpmath.mpf) else x
    if not mpmath.isfinite(x):
        return None
    m, e = x.man_exp
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _short(value) -> str:
    """A query value for a message (15 significant digits)."""
    try:
        q = Fraction(value)
    except (TypeError, ValueError):
        return str(value)
    if q.denominator == 1 or len(str(q.denominator)) < 12:
        return str(q)
    with workdps(DPS_LOW):
        return mpmath.nstr(to_mpf(q), 15)


def _inside(fast_value, enc: Enclosure) -> bool:
    """Whether the finite ``fast_value`` lies inside the enclosure (its side undecided)."""
    v = _exact(fast_value)
    return v is not None and enc.lower_exact <= v <= enc.upper_exact


def on_conservative_side(kind: str, fast_value, enc: Enclosure) -> bool:
    """Whether ``fast_value`` (exactly, as the binary number it is) is ≥ the enclosure's
    upper end (kind ``"delta"``/``"epsilon"``) or ≤ its lower end (``"tradeoff"``); never
    for a value that is not finite."""
    v = _exact(fast_value)
    if v is None:
        return False
    if kind == "tradeoff":
        return v <= enc.lower_exact
    return v >= enc.upper_exact


def certify_points(design, kind: str, values, fast_points, certifier=None):
    """Enclosures of the query points of a design, each checked against the fast value.

    Parameters
    ----------
    design : Composition or Mixture
    kind : {"delta", "epsilon", "tradeoff"}
    values : sequence
        The query arguments (ε, δ or α; exact rationals).
    fast_points : sequence
        The fast path's points (``DeltaPoint``, ``EpsilonPoint``, ``TradeoffPoint``) for
        the same arguments, in the same order.

    Returns
    -------
    list of Enclosure

    Raises
    ------
    UncertifiedError
        When a fast value is not on the conservative side of its enclosure.
    """
    if kind not in _NAMES:
        raise ValueError(f"kind must be one of {sorted(_NAMES)}")
    cert = certifier or certifier_for(design)
    sym, arg = _NAMES[kind]
    out = []
    for value, point in zip(values, fast_points):
        try:
            enc = _enclose(cert, kind, value, point)
        except OverflowError as exc:  # the lattice certificate's methods do not fit: meet in the middle
            if isinstance(cert, MitmCertifier) or not isinstance(design, Composition):
                raise _beyond(exc) from None
            cert = MitmCertifier(design)
            try:
                enc = _enclose(cert, kind, value, point)
            except OverflowError as exc2:
                raise _beyond(exc2) from None
        if not on_conservative_side(kind, point.value, enc) and _inside(point.value, enc):
            # the fast value is sharper than this enclosure: decide its side on the finest one
            enc = _enclose(cert.finest(), kind, value, point)
        if not on_conservative_side(kind, point.value, enc):
            lo, hi = enc.decimal(DIGITS)
            side = "at or below the lower" if kind == "tradeoff" else "at or above the upper"
            if _inside(point.value, enc):
                lo, hi = enc.decimal(_digits_apart(point.value, enc))
                raise UncertifiedError(
                    f"certificate inconclusive at {arg}={_short(value)}: fast {sym} = "
                    f"{mpmath.nstr(point.value, len(lo.split('e')[0]) + 2)} lies inside the finest Arb "
                    f"enclosure [{lo}, {hi}], so its side cannot be checked")
            raise UncertifiedError(
                f"fast path and certificate disagree at {arg}={_short(value)}: fast {sym} = "
                f"{mpmath.nstr(point.value, 20)} is not {side} end of the Arb enclosure [{lo}, {hi}]")
        out.append(enc)
    return out


def _beyond(exc: Exception) -> UncertifiedError:
    return UncertifiedError(
        f"--certify: no independent Arb certificate is feasible for this design (the lattice certificate's "
        f"methods do not fit its lattice, and meet in the middle over its distinct weights is beyond reach: "
        f"{exc}); run the command without --certify: its numbers are the engine's certified brackets")


def _enclose(cert, kind: str, value, point) -> Enclosure:
    if kind == "delta":
        return cert.delta(value)
    if not isinstance(cert, (Certifier, MitmCertifier)):  # a mixed design's certificate searches itself
        return cert.epsilon(value) if kind == "epsilon" else cert.tradeoff(value)
    if isinstance(cert, MitmCertifier):  # hints are lattice pieces: the enumeration searches itself
        return cert.epsilon(value, hint=point.value) if kind == "epsilon" else cert.tradeoff(value)
    if kind == "epsilon":
        return cert.epsilon(value, hint=point.piece)
    return cert.tradeoff(value, hint=point.threshold if 0 < value < 1 else None)


def _digits_apart(fast_value, enc: Enclosure) -> int:
    """Enough significant digits to show the enclosure's ends apart (capped at 60)."""
    if enc.lower_exact == 0 or enc.width == 0:
        return DIGITS
    rel = enc.width / abs(enc.lower_exact)
    return min(60, max(DIGITS, 3 + int(mpmath.ceil(-mpmath.log10(mpmath.mpf(rel.numerator) / rel.denominator)))))
