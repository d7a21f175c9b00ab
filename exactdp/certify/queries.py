"""Enclosures of δ(ε), ε(δ) and β(α) for one design, from ball-arithmetic tails.

With ``S`` the design's lattice sum, ``K`` its shift and ``c = ρ`` (:mod:`exactdp.engine.lattice`),
``F_k(ε) = P[S ≥ k] − e^ε P[S ≥ k + K]`` is ``P(A) − e^ε Q(A)`` for the event
``A = {statistic ≥ k}``, hence ``F_k(ε) ≤ δ(ε)`` for every k, with equality on the piece
``ε ∈ [e_{k−1}, e_k]``, ``e_k = c + k/scale``.  So ``δ(ε) = max_k F_k(ε)``, and:

* **δ(ε)** is the ball ``F_{k1}(ε)`` (``k1 = ⌊scale(ε − c)⌋ + 1``); when ε is given by a
  ball straddling breakpoints, the max of ``F_k`` over the pieces it meets.
* **ε(δ)**: on piece k, ``ε_k = log((P[S≥k] − δ)/P[S≥k+K])`` solves ``F_k(ε_k) = δ``; since
  ``F_k ≤ δ(·)`` and δ(·) decreases, ``ε_k ≤ ε(δ)`` — the ball's lower end is a lower
  bound.  If the ball's upper end ``u`` lies in ``[e_{k−1}, e_k]``, then
  ``δ(u) = F_k(u) ≤ F_k(ε_k) = δ``, so ``ε(δ) ≤ u``.  The piece is found by a search on
  ball midpoints (or a caller's hint) and then *checked*; a wrong hint costs time only.
* **β(α)**: the trade-off curve is the piecewise-linear interpolation of the
  Neyman–Pearson vertices ``(α_k, β_k) = (P[S ≥ k], P[S ≥ K − k + 1])``: for
  ``α ∈ [α_k, α_{k−1}]``, ``β = β_{k−1} + (β_k − β_{k−1})·t`` with
  ``t = (α_{k−1} − α)/(α_{k−1} − α_k) ∈ [0, 1]`` (so the ball of t is clamped to [0, 1];
  an unresolvably small atom leaves all of [0, 1]).  With ``α ∈ [α_{k+1}, α_{k−1}]``
  checked on the balls, β is in the union of the (at most two) segments α may be on.

Every tail is a ball from :class:`~exactdp.certify.tails.BallTails`.  A query runs at
increasing precision levels (bits, log₂(1/η)) until the enclosure is narrower than
``rel_width`` relative.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from exactdp.certify.balls import (
    BallReal,
    BeyondExactRange,
    as_ball_real,
    ball,
    bureau_epsilon,
    endpoints,
    floor_ball,
    interval,
    precision,
)
from exactdp.certify.offlattice import MitmCertifier
from exactdp.certify.result import Enclosure
from exactdp.certify.tails import BallTails
from exactdp.engine.lattice import LatticeSum, lattice_of, weights_exceed
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import InputError, UncertifiedError
from exactdp.numerics.exact import fraction_str, to_fraction
from exactdp.numerics.search import expand, first_true

__all__ = ["Certifier", "certifier_for", "certify_delta", "certify_epsilon", "certify_tradeoff", "LEVELS"]

#: (Arb precision in bits, log₂(1/η)) of the successive attempts
LEVELS = ((128, 64), (224, 120), (416, 230))
_LN2 = math.log(2.0)


class Certifier:
    """Ball-arithmetic enclosures for one design (tail oracles cached per level).

    Parameters
    ----------
    design : Composition or LatticeSum
    rel_width : float
        Target relative width of each enclosure (default 1e-18); higher levels are tried
        until it is met, the last enclosure is returned otherwise (still rigorous).
    method : str, optional
        Force a tail method (``"enumeration"``, ``"conditioned"``, ``"tilted-trapezoid"``).
    levels : tuple of (int, int)
        (precision bits, log₂ 1/η) of the successive attempts.

    Notes
    -----
    Method: Arb ball arithmetic (python-flint) throughout, see :mod:`exactdp.certify`.
    Error bound: none to add — every rounding and every discarded term is inside the ball.
    Reference: Johansson, Arb: efficient arbitrary-precision midpoint-radius interval
    arithmetic (IEEE Trans. Computers 2017).
    """

    def __init__(self, design, *, rel_width: float = 1e-18, method: str | None = None, levels=LEVELS):
        if isinstance(design, LatticeSum):
            self.lattice = design
        elif isinstance(design, Composition):
            self.lattice = lattice_of(design)
        else:
            raise InputError("design", design, "expected an exactdp.Composition or LatticeSum")
        self.rel_width = float(rel_width)
        self.method = method
        self.levels = tuple(levels)
        self._oracles: dict = {}
        lat = self.lattice
        self.sd = math.sqrt(sum(m * a * a * float(s2) for a, m, s2 in zip(lat.weights, lat.counts, lat.sigma2)))

    def finest(self) -> Certifier:
        """The same design's certifier that runs every level and returns the narrowest
        enclosure (``rel_width`` 0), sharing this one's tail oracles."""
        other = Certifier(self.lattice, rel_width=0.0, method=self.method, levels=self.levels)
        other._oracles = self._oracles
        return other

    @property
    def tail_method(self) -> str:
        """The tail method of the first level (builds it; ValueError if a forced method is
        not feasible for the design)."""
        return self._oracle(0).method

    # -- machinery ----------------------------------------------------------------------
    def _oracle(self, i: int) -> BallTails:
        if i not in self._oracles:
            prec, bits = self.levels[i]
            with precision(prec):
                self._oracles[i] = BallTails(self.lattice, bits * _LN2, method=self.method)
        return self._oracles[i]

    def _run(self, compute) -> Enclosure:
        """The first level's enclosure that is narrow enough (else the narrowest); a level
        that cannot certify (e.g. a ball too wide to decide a piece) passes to the next."""
        best: Enclosure | None = None
        error: ArithmeticError | None = None
        for i, (prec, bits) in enumerate(self.levels):
            try:
                orc = self._oracle(i)
                with precision(prec):
                    enc = compute(orc, prec, bits)
            except BeyondExactRange:
                raise
            except ArithmeticError as exc:
                error = exc
                continue
            if enc.relative_width <= self.rel_width:
                return enc
            if best is None or enc.relative_width < best.relative_width:
                best = enc
        if best is None:
            assert error is not None  # every level failed
            raise error
        return best

    def _enclosure(self, quantity, argument, x: arb, orc, prec, bits, clip=(0, 1), **extra) -> Enclosure:
        lo, hi = endpoints(x)
        if clip is not None:
            lo, hi = max(lo, Fraction(clip[0])), min(hi, Fraction(clip[1]))
        params = tuple(sorted({**orc.parameters(), **extra}.items()))
        return Enclosure(quantity, argument, lo, hi, "arb/" + orc.method, prec, params)

    def _plausible(self, hint) -> bool:
        """Whether a hint is worth trying (a threshold within 40 sd of the lattice's range)."""
        return hint is not None and abs(int(hint)) <= 40 * self.sd + abs(self.lattice.shift) + 2

    def _breakpoint(self, k: int) -> Fraction:
        return self.lattice.c + Fraction(k) / self.lattice.scale

    # -- tails --------------------------------------------------------------------------
    def tail(self, threshold: int) -> Enclosure:
        """Enclosure of ``P[S ≥ threshold]`` for the design's lattice sum S."""
        s = int(threshold)
        return self._run(lambda orc, prec, bits: self._enclosure("tail", f"threshold={s}", orc.tail(s), orc, prec,
                                                                 bits, thresholds=(s,)))

    # -- δ(ε) ---------------------------------------------------------------------------
    def delta(self, epsilon) -> Enclosure:
        """Enclosure of δ(ε) (ε an exact rational or a :class:`BallReal`)."""
        e = as_ball_real(epsilon, "epsilon")
        text = e.text if isinstance(e, BallReal) else fraction_str(e)
        lat = self.lattice

        def compute(orc, prec, bits):
            eb, ks = self._eps_pieces(e, prec)
            best = None
            for k1 in ks:
                v = orc.tail(k1) - eb.exp() * orc.tail(k1 + lat.shift)
                best = v if best is None else best.max(v)
            return self._enclosure("delta", f"epsilon={text}", best, orc, prec, bits,
                                   thresholds=tuple((k, k + lat.shift) for k in ks))

        return self._run(compute)

    def _eps_pieces(self, e, prec):
        lat = self.lattice
        if isinstance(e, Fraction):
            return ball(e), [lat.delta_thresholds(e)[0]]
        for p in (prec, 2 * prec, 8 * prec):
            with precision(p):
                eb = e(p)
                y = (eb - ball(lat.c)) * ball(lat.scale)
                lo, hi = floor_ball(arb(y.lower())), floor_ball(arb(y.upper()))
                if lo is not None and hi is not None and hi - lo <= 2:
                    with precision(prec):
                        return e(prec), list(range(lo + 1, hi + 2))
        raise UncertifiedError(f"epsilon {e.text}: ball too wide to locate its lattice piece")

    # -- ε(δ) ---------------------------------------------------------------------------
    def epsilon(self, delta, hint: int | None = None) -> Enclosure:
        """Enclosure of ε(δ) = min{ε : δ(ε) ≤ delta}; ``hint`` is a guess of the lattice
        piece (e.g. the fast path's), checked before use."""
        dt = to_fraction(delta, "delta")
        if not 0 < dt < 1:
            raise InputError("delta", delta, "must lie in (0, 1)")
        lat = self.lattice

        def compute(orc, prec, bits):
            db = ball(dt)
            k = hint if self._plausible(hint) else self._search_piece(orc, dt, prec)
            for attempt in range(8):
                if attempt == 1 and self._plausible(hint):  # a wrong hint: search after all
                    k = self._search_piece(orc, dt, prec)
                p1, p2 = orc.tail(k), orc.tail(k + lat.shift)
                diff = p1 - db
                if not diff > 0:
                    k -= 1
                    continue
                sol = (diff / p2).log()
                lo, hi = endpoints(sol)
                if hi > self._breakpoint(k):
                    k += 1
                    continue
                if hi < self._breakpoint(k - 1):
                    k -= 1
                    continue
                return self._enclosure("epsilon", f"delta={fraction_str(dt)}", sol, orc, prec, bits, clip=None,
                                       piece=k, thresholds=(k, k + lat.shift))
            raise UncertifiedError(f"delta={fraction_str(dt)}: could not certify the lattice piece of epsilon")

        return self._run(compute)

    def _search_piece(self, orc, dt: Fraction, prec: int) -> int:
        lat = self.lattice
        db = ball(dt)
        vals: dict = {}

        def g(k):
            if k not in vals:
                vals[k] = orc.tail(k) - ball(self._breakpoint(k)).exp() * orc.tail(k + lat.shift)
            return vals[k]

        def below(k):
            return g(k).mid() <= db.mid()

        e_hi = endpoints(bureau_epsilon(lat.c, dt)(prec))[1]
        k_hi = max(math.floor((e_hi - lat.c) * lat.scale) + 1, 1)
        step = max(1, int(self.sd))
        # the zCDP bound holds, so the first expansion only guards rounding
        _, k_hi = expand(below, k_hi, step)
        prev, k_lo = expand(lambda k: not below(k), min(0, k_hi - 1), -step)
        if prev is not None:
            k_hi = prev
        ltarget = math.log(float(dt)) if dt > Fraction(1, 10**300) else float(db.log().mid())

        def probe(a, b):
            ga, gb = g(a).mid(), g(b).mid()
            if ga > 0 and gb > 0:
                la, lb = float(ga.log()), float(gb.log())
                if la != lb:
                    return int(round(a + (b - a) * (la - ltarget) / (la - lb)))
            return None

        return first_true(below, k_lo, k_hi, probe=probe)

    # -- β(α) ---------------------------------------------------------------------------
    def tradeoff(self, alpha, hint: int | None = None) -> Enclosure:
        """Enclosure of β = f(α), the optimal type-II error at type-I error α;
        ``hint`` is a guess of the vertex index k (α_k ≤ α < α_{k−1}), checked before use."""
        af = to_fraction(alpha, "alpha")
        if not 0 <= af <= 1:
            raise InputError("alpha", alpha, "must lie in [0, 1]")
        K = self.lattice.shift
        arg = f"alpha={fraction_str(af)}"

        def compute(orc, prec, bits):
            if af in (0, 1):
                return self._enclosure("beta", arg, ball(1 - af), orc, prec, bits)
            ab = ball(af)
            k = hint if self._plausible(hint) else self._search_vertex(orc, ab)
            for attempt in range(8):
                if attempt == 1 and self._plausible(hint):  # a wrong hint: search after all
                    k = self._search_vertex(orc, ab)
                a0, a1, a2 = orc.tail(k - 1), orc.tail(k), orc.tail(k + 1)
                if not a2 <= ab:
                    k += 1
                    continue
                if not ab <= a0:
                    k -= 1
                    continue
                b0, b1, b2 = orc.tail(K - k + 2), orc.tail(K - k + 1), orc.tail(K - k)
                pieces = []
                if not ab < a1:  # α ≥ α_k is possible: segment k
                    pieces.append(b0 + (b1 - b0) * _unit_clamp((a0 - ab) / (a0 - a1)))
                if not ab > a1:  # α ≤ α_k is possible: segment k + 1
                    pieces.append(b1 + (b2 - b1) * _unit_clamp((a1 - ab) / (a1 - a2)))
                beta = pieces[0] if len(pieces) == 1 else interval(pieces[0], pieces[1])
                return self._enclosure("beta", arg, beta, orc, prec, bits, vertex=k,
                                       thresholds=(k - 1, k, k + 1, K - k + 2, K - k + 1, K - k))
            raise UncertifiedError(f"{arg}: could not certify the trade-off vertex")

        return self._run(compute)

    def _search_vertex(self, orc, ab: arb) -> int:
        sd = max(1, int(self.sd))

        def below(k):
            return orc.tail(k).mid() <= ab.mid()

        prev, lo = expand(lambda k: not below(k), -sd, -4 * sd)
        _, hi = expand(below, sd if prev is None else prev, 4 * sd)
        return first_true(below, lo, hi)


def _unit_clamp(t: arb) -> arb:
    """The interpolation parameter, known to lie in [0, 1]: the ball clamped to it (all of
    [0, 1] when the ball is not finite, e.g. a vertex atom too small to resolve)."""
    if not t.is_finite():
        return interval(arb(0), arb(1))
    return t.max(arb(0)).min(arb(1))


#: a design whose integer lattice weights stay below this is tried on the lattice certificate
#: first; beyond it, meet in the middle is tried first (deciding a large lattice's tail method
#: can take minutes), and the lattice certificate only when enumeration is beyond reach
SMALL_LATTICE = 2**24
#: lattice weights at or beyond this are never tried on the lattice certificate
LATTICE_WEIGHT_LIMIT = 2**62


def certifier_for(design, **options):
    """The certificate for a design: a :class:`Certifier` when its lattice is small and fits
    one of its tail methods (or a tail ``method`` is forced, or a LatticeSum is given), else
    the meet-in-the-middle enumeration over its incommensurate weights
    (:class:`~exactdp.certify.offlattice.MitmCertifier`; ``rel_width`` passes on) where it is
    within reach, else the lattice certificate after all.  Both are rigorous on their own;
    ``Enclosure.method`` says which made an enclosure.

    A :class:`~exactdp.kinds.Mixture` (a design mixing mechanism kinds) gets the exact
    enumeration of its kinds' loss atoms, :class:`~exactdp.certify.kinds.KindsCertifier`
    (``rel_width`` passes on).

    Parameters
    ----------
    design : Composition, LatticeSum or Mixture
    **options
        Options of :class:`Certifier`.

    Returns
    -------
    Certifier, MitmCertifier or KindsCertifier
    """
    from exactdp.kinds.mixture import Mixture

    if isinstance(design, Mixture):
        from exactdp.certify.kinds import KindsCertifier

        return KindsCertifier(design, **{k: v for k, v in options.items() if k == "rel_width"})
    if isinstance(design, LatticeSum) or options.get("method") is not None or not isinstance(design, Composition):
        return Certifier(design, **options)
    mitm = MitmCertifier(design, **{k: v for k, v in options.items() if k == "rel_width"})
    if not weights_exceed(design, SMALL_LATTICE):
        cert = Certifier(design, **options)
        try:
            _ = cert.tail_method  # builds the first level's tail oracle: OverflowError if none fits
        except OverflowError:
            return mitm
        return cert
    if mitm.within_reach() or weights_exceed(design, LATTICE_WEIGHT_LIMIT):
        return mitm
    return Certifier(design, **options)


def _certifier(design, options: dict):
    return certifier_for(design, **options)


def certify_delta(design, epsilon, **options) -> Enclosure:
    """Rigorous enclosure of δ(ε) by Arb ball arithmetic (see :class:`Certifier`; a design
    whose lattice fits none of its tail methods gets the meet-in-the-middle enumeration,
    :mod:`exactdp.certify.offlattice`, and ``Enclosure.method`` says so).

    Parameters
    ----------
    design : Composition or LatticeSum
    epsilon : exact rational (``"26.3405888527"``, Fraction) or BallReal
    **options
        ``rel_width``, ``method``, ``levels`` of :class:`Certifier`.

    Returns
    -------
    Enclosure

    Notes
    -----
    Method: ``δ = P[S ≥ k1] − e^ε P[S ≥ k1 + K]`` with both tails as Arb balls
    (:mod:`exactdp.certify`).  Error bound: the enclosure itself (every rounding and
    every discarded term inside).  Reference: Johansson (2017), Arb.
    """
    return _certifier(design, options).delta(epsilon)


def certify_epsilon(design, delta, hint=None, **options) -> Enclosure:
    """Rigorous enclosure of ε(δ) = min{ε : δ(ε) ≤ delta} by Arb ball arithmetic.

    Parameters
    ----------
    design : Composition or LatticeSum
    delta : exact rational in (0, 1)
    hint : int, optional
        A guess of the lattice piece (checked; a wrong one only costs time).
    **options
        ``rel_width``, ``method``, ``levels`` of :class:`Certifier`.

    Returns
    -------
    Enclosure

    Notes
    -----
    Method: closed-form solve on the lattice piece, ``ε = log((P[S≥k] − δ)/P[S≥k+K])`` with
    the tails as Arb balls; the piece is checked on the ball.  Error bound: the enclosure
    (lower end: ``F_k ≤ δ(·)``; upper end: inside the piece).  Reference: Johansson (2017).
    """
    return _certifier(design, options).epsilon(delta, hint=hint)


def certify_tradeoff(design, alpha, hint=None, **options) -> Enclosure:
    """Rigorous enclosure of the trade-off β = f(α) by Arb ball arithmetic.

    Parameters
    ----------
    design : Composition or LatticeSum
    alpha : exact rational in [0, 1]
    hint : int, optional
        A guess of the vertex index k (checked).
    **options
        ``rel_width``, ``method``, ``levels`` of :class:`Certifier`.

    Returns
    -------
    Enclosure

    Notes
    -----
    Method: linear interpolation between the Neyman–Pearson vertices
    ``(P[S ≥ k], P[S ≥ K − k + 1])``, the tails as Arb balls, the interpolation parameter
    clamped to [0, 1].  Error bound: the enclosure.  Reference: Dong, Roth & Su, Gaussian
    differential privacy (JRSS-B 2022); Johansson (2017).
    """
    return _certifier(design, options).tradeoff(alpha, hint=hint)
