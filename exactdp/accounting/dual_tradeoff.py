"""The trade-off curve β = f(α) from certified δ brackets, by convex duality.

For any pair (P, Q), ``f(α) = sup_{x>0} G(x)``, ``G(x) = 1 − H_x − x·α`` with
``H_x = E_P(dQ/dP − x)₊`` the hockey-stick divergence (Dong, Roth & Su 2022, Prop. 2.12;
a symmetric design has ``H_{e^ε} = δ(ε)``).  G is concave in x (H is convex), so:

* every evaluated point gives a certified **lower** bound ``G_lo(x) ≤ f(α)``;
* between evaluated points ``x_0 < … < x_n`` chords give a certified **upper** bound:
  on ``[x_i, x_{i+1}]``, ``G ≤ min(G(x_i) + s·(x − x_i), G(x_{i+1}) + t·(x − x_{i+1}))``
  with s the slope of the chord ``(x_{i−1}, x_i)`` and t of ``(x_{i+1}, x_{i+2})`` (taken at
  the ends of their certified ranges); left of x_0 and right of x_n the end chords bound G
  the same way.  The gap closes as the stencil around the maximiser shrinks.

G is formed without cancellation where it matters: for ε ≥ 0, ``1 − δ(ε) − e^ε α``; for
ε < 0 (α beyond the curve's fixed point, β small), ``e^ε((1 − α) − δ(−ε))`` with ``1 − α``
exact.

The search spends few oracle points (all α batched in one call per round):

1. **Propose.**  The maximiser of the *model* ``G_M``, G with ``log δ`` replaced by the
   Gaussian mechanism's ``log δ_G`` of the same ρ plus the discrepancy ``d = log δ_mid −
   log δ_G`` fitted at the evaluated points (constant, then linear through the last two),
   located by golden section in multiprecision (no oracle call); each round evaluates the
   proposal alone until the steps' contraction predicts an error below a quarter of the
   stencil spacing h.  Where δ > 1/2 the discrepancy is of ``log(1 − δ)`` instead
   (:class:`~exactdp.accounting.dual_model.AlphaSearch`: ``log δ ≈ −(1 − δ)`` has no shape there).
2. **Certify.**  The stencil ``c + h·(−2, −1, 0, 1, 2)`` with ``h = √(W/|G_M''|)`` (W the width aimed at)
   bounds sup G from above by the chords within ``|G''|h²/4`` plus the brackets' noise.  A stencil that does
   not certify is refitted by least squares (a parabola through its estimates gives the new centre and
   curvature) and the spacing rescaled from the measured gap (widened fourfold when the chords' slopes are not
   resolved), for :data:`STENCIL_ROUNDS` rounds.
3. **Locate** (profiles with kinks: every route but the smoothed inversion; and any model of
   ``log(1 − δ)``, whose profile may be curved at scales the model does not see).  Where the model's steps stop
   contracting, or its stencil does not bracket the maximum or its gap stops halving, the maximiser is located
   by Brent's search on the brackets' midpoints (:func:`_locate`, resumed from the points evaluated so far; on
   atom sums every other point is the chord envelope's peak), then certified by a fresh stencil; a located
   stencil whose gap stops halving goes straight to the kink search (step 5) from its best point.
4. **Fall back.**  An α still open then goes to the zooming 9-point stencil
   (:data:`STENCIL`), which widens and narrows on certified outcomes alone — unless its stencils
   settled within the promised width (:meth:`~exactdp.accounting.dual_model.AlphaSearch.settled`:
   the points' noise bounds the gap, more points cannot narrow it).
5. **Kinks.**  Where the loss is atomic (every route but the smoothed inversion), G is piecewise linear in e^ε
   and its maximum sits on a kink: an α still open after the fallback goes to the kink search (:func:`_kinks`:
   stencils plus the chord envelope's peak, which lands on the kink).  Pure atom sums with ρ above
   :data:`KINK_FIRST_RHO` (many near-deterministic groups: β ≈ e^{−ρ}, beyond binary64) start there.

Estimates only propose points: ``lower`` is the largest certified ``G_lo`` of any point
evaluated, ``upper`` the chord bound (:func:`~exactdp.accounting.dual_model.chord_upper`) of the
evaluated points.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.chord_envelope import chord_envelope
from exactdp.accounting.dual_argmax import argmaxes as _argmaxes
from exactdp.accounting.dual_model import (
    CERTIFY,
    MODEL_ROUNDS,
    STENCIL_ROUNDS,
    TRADEOFF_WIDTH,
    AlphaSearch,
    GBrackets,
    chord_upper,
)
from exactdp.accounting.results import BracketedTradeoff, centred
from exactdp.accounting.tradeoff_batch import ORACLE_SHARE, batch_brackets, oracle_width, point
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import alpha_display
from exactdp.numerics.precision import DPS_LOW, DPS_RESULT, to_mpf, workdps
from exactdp.numerics.search import BrentMax

__all__ = ["tradeoff_points", "TRADEOFF_WIDTH"]

_DPS = DPS_RESULT
#: refusal threshold (relative), as for δ and ε
MAX_REPORTED_WIDTH = 1e-6
#: the fallback's stencil around a maximiser (multiples of its spacing)
STENCIL = (-16, -4, -2, -1, 0, 1, 2, 4, 16)
#: the location (:func:`_locate`, profiles with kinks): Brent rounds at most, and the
#: bracket's relative width at which it stops in any case
LOCATE_ROUNDS = 60
LOCATE_WIDTH = 1e-9
#: the kink search (:func:`_kinks`): rounds, first spacing (relative to max(1, |ε|)), the
#: spacing's floor (the same, relative) and its factor per round
KINK_ROUNDS = 14
KINK_H = 1e-7
KINK_H_MIN = 2.0**-46
KINK_ZOOM = 8.0
#: pure atom sums with ρ above this (nats; e^{−ρ} near binary64's range and beyond) go to the
#: kink search first (below it the model's proposals are cheaper: a few oracle points)
KINK_FIRST_RHO = 500.0


def _range(rho: float, alpha: Fraction) -> tuple:
    """An ε interval containing the maximiser: the stationary point has ``P(W > ε + ρ) =
    α``, and W is 2ρ-sub-Gaussian, so ``|ε + ρ| ≤ √(4ρ·log(1/min(α, 1−α)))`` (widened; 1 − α exact)."""
    m = min(alpha, 1 - alpha)
    r = math.sqrt(4 * max(rho, 1e-300) * ((math.log(2 * m.denominator) - math.log(m.numerator) if m else 691) + 1)) + 1
    return -rho - r, rho + r


def tradeoff_points(acc, alphas) -> tuple:
    """:class:`BracketedTradeoff` for each exact α (see the module docstring).

    Parameters
    ----------
    acc : LatticeFreeAccountant
        The oracle (``log_delta_at``, ``log_complement_at``, ``rho``, ``profile``).
    alphas : sequence of Fraction
        Each in [0, 1].

    Returns
    -------
    tuple of BracketedTradeoff

    Notes
    -----
    Method: model proposals, a certifying stencil, a zooming fallback (module docstring),
    all α in one oracle call per round.  Error bound: ``lower`` is a certified value of G
    (≤ f(α)), ``upper`` the certified chord bound (≥ f(α)); ``upper − lower`` at most
    TRADEOFF_WIDTH relative where the brackets resolve it, refused beyond 1e-6.
    """
    out: list = [None] * len(alphas)
    inner = []
    with workdps(_DPS):
        for i, af in enumerate(alphas):
            if af == 0 or af == 1 or acc.profile is None:
                out[i] = BracketedTradeoff(to_mpf(af), to_mpf(1 - af), mpmath.mpf(0), 0, "bracket")
            else:
                inner.append(i)
        if inner:
            _search(acc, alphas, inner, out)
    return tuple(out)


def _search(acc, alphas, inner: list, out: list) -> None:
    """Fill ``out[i]`` for every i in ``inner``: the batched exact search first
    (:func:`exactdp.accounting.tradeoff_batch.batch_brackets`, at the oracle width it
    chooses), then the per-α search below for any α it left open."""
    rng = np.array([_range(float(acc.rho), Fraction(alphas[i])) for i in inner], dtype=float)
    # the batched search assumes a smooth profile near each maximiser: a smoothed-inversion
    # rest (the 2020 release); atom sums and lattice rests have kinks (Kelley steps below)
    smooth = acc.method.endswith("smoothed-inversion")
    hints: dict = {}
    fast = (batch_brackets(acc, [alphas[i] for i in inner], rng, TRADEOFF_WIDTH, hints) if smooth
            else [None] * len(inner))
    for i, fb in zip(inner, fast):
        if fb is not None:
            out[i] = point(alphas[i], *fb)
    hinted = {i: hints[k] for k, (i, fb) in enumerate(zip(inner, fast)) if fb is None and k in hints}
    inner = [i for i, fb in zip(inner, fast) if fb is None]
    if inner:
        with oracle_width(acc, TRADEOFF_WIDTH * ORACLE_SHARE):
            _per_alpha(acc, alphas, inner, out, hinted, smooth)


def _per_alpha(acc, alphas, inner: list, out: list, hinted: dict, smooth: bool) -> None:
    """Fill ``out[i]`` for the α the batch left open (``hinted``: its last stencils)."""
    with workdps(DPS_LOW):
        mu = mpmath.sqrt(2 * to_mpf(acc.rho))
    states = [AlphaSearch(GBrackets(acc, alphas[i]), mu, _range(float(acc.rho), Fraction(alphas[i])),
                          locate=not smooth)
              for i in inner]
    if acc.method == "atom-sum" and float(acc.rho) > KINK_FIRST_RHO:
        # the loss is the rest's atoms alone: G is piecewise linear in e^ε, its maximum at a
        # kink, and the Gaussian model (many near-deterministic groups: ρ ≈ 3·10⁴, one atom
        # of mass ≈ 1) proposes nothing useful; the kink search first
        _kinks(acc, states)
        for i, st in zip(inner, states):
            if st.certified():
                out[i] = _result(alphas[i], st.lower, st.upper)
        keep = [k for k in range(len(inner)) if out[inner[k]] is None]
        inner, states = [inner[k] for k in keep], [states[k] for k in keep]
        if not inner:
            return
    if hinted:
        # the batch's last stencil sits at the maximiser but its points were too close for their
        # noise: the zooming stencil from there (its wide points resolve the chords' slopes),
        # before any search from scratch
        starts = {k: hinted[i] for k, i in enumerate(inner) if i in hinted}
        _zoom(acc, [states[k] for k in starts], [starts[k] for k in starts])
        for k in starts:
            if states[k].certified():
                out[inner[k]] = _result(alphas[inner[k]], states[k].lower, states[k].upper)
        keep = [k for k in range(len(inner)) if out[inner[k]] is None]
        inner, states = [inner[k] for k in keep], [states[k] for k in keep]
        if not inner:
            return
    for _ in range(2):
        for _ in range(MODEL_ROUNDS + STENCIL_ROUNDS + 1):
            active = [st for st in states if st.open()]
            if not active:
                break
            asks = [st.points() for st in active]
            _fill(acc, [st.g for st in active], asks)
            for st, ask in zip(active, asks):
                st.take(ask)
        lost = [st for st in states if st.lost]
        if not lost:
            break
        # kinks, where the Gaussian model's proposals did not converge (tiny σ² beside large
        # ones): Brent's search from the points evaluated, then the certifying stencil
        _locate(acc, lost)
    # the kink search from the best point evaluated, where the stencil's gap stopped shrinking
    _kinks(acc, [st for st in states if st.stuck], start=True)
    _zoom(acc, [st for st in states if not st.certified() and not st.settled()])
    if not smooth:  # a kink the zoom's stencils straddle but do not reach
        _kinks(acc, [st for st in states if not st.certified() and not st.settled()])
    for i, st in zip(inner, states):
        out[i] = _result(alphas[i], st.lower, st.upper)


def _locate(acc, states: list) -> None:
    """Where the profile has kinks (every route but the smoothed inversion) and the model's
    proposals did not converge: locate each α's maximiser on the midpoints of G's certified
    brackets by Brent's search (:class:`~exactdp.numerics.search.BrentMax`: parabolic steps,
    golden-section safeguards; one point per α per round, all α in one oracle call), resumed
    from the points evaluated so far within the range :func:`_range` (G is unimodal in ε),
    on atom sums every other point the chord envelope's peak (which lands on a kink), until
    certified or the bracket is within four certifying spacings ``h = √(W·G/|G''|)`` (G'' from
    Brent's three best points) or :data:`LOCATE_WIDTH` relative; then the certifying stencil
    around the best point (``stencil``).  Its points are certified as any other (the bounds
    use them); the search only chooses them."""
    brents = []
    for st in states:
        a, b = st.rng
        pts = [(e, (v[1] + v[2]) / 2) for e, v in st.g.cache.items() if a < e < b]
        brents.append(BrentMax.warm(pts, a, b) if pts else BrentMax(a, b))
    active = list(range(len(states)))
    peaks: list = [None] * len(states)
    # (the peak helps where the kinks are few: atom sums; on a dense enumeration, G is smooth
    # at Brent's scales and the peak only slows it)
    sparse = acc.method.endswith("atom-sum") or acc.method == "enumeration"
    for r in range(LOCATE_ROUNDS):
        if not active:
            break
        for i in active:
            if peaks[i] is not None:
                brents[i].steer(peaks[i])
        asks = [[brents[i].ask()] for i in active]
        _fill(acc, [states[i].g for i in active], asks)
        nxt = []
        for i, (u,) in zip(active, asks):
            st, br = states[i], brents[i]
            _, lo, hi = st.g.cache[u]
            br.tell((lo + hi) / 2)
            st.lower = max(st.lower, lo)
            bound, x = chord_envelope(st.g.at(sorted(st.g.cache)))
            st.upper = min(st.upper, bound)
            if st.certified():
                continue
            # every other round, the chords' peak (Kelley's point: on a kink once two points lie
            # on each of its linear pieces)
            peaks[i] = None
            if sparse and r % 2 == 0 and x is not None and x > 0:
                pk = float(mpmath.log(x))
                peaks[i] = pk if pk not in st.g.cache else None
            h = _spacing(br)
            if (h is None or br.width > 4 * h) and br.width > LOCATE_WIDTH * max(1.0, abs(br.x)):
                nxt.append(i)
        active = nxt
    for st, br in zip(states, brents):
        h = _spacing(br)
        st.c = br.x
        st.h = h if h is not None else max(br.width / 4, LOCATE_WIDTH * max(1.0, abs(br.x)))
        st.stencil, st.lost, st.located, st.stencil_rounds, st.gap = True, False, True, 0, mpmath.inf
        st.upper = min(st.upper, chord_upper(st.g.at(sorted(st.g.cache))))


def _spacing(br: BrentMax) -> float | None:
    """The stencil's spacing ``√(W·G/|G''|)`` from Brent's three best points (or None)."""
    c2 = br.curvature()
    if br.fx is None or c2 is None or not c2 < 0 or not br.fx > 0:
        return None
    return float(mpmath.sqrt(TRADEOFF_WIDTH * br.fx / -c2))


def _result(alpha: Fraction, lo, up) -> BracketedTradeoff:
    """The reported point, or a refusal when the bracket is wider than MAX_REPORTED_WIDTH."""
    if up == mpmath.inf or not (up - lo <= MAX_REPORTED_WIDTH * abs(up) or up == 0):
        raise UncertifiedError(f"β(α = {alpha_display(alpha)}): the dual bracket is [{mpmath.nstr(lo, 6)}, "
                               f"{mpmath.nstr(up, 6)}]")
    lo = max(lo, mpmath.mpf(0))
    up = min(up, to_mpf(1 - alpha))
    est, err = centred(lo, up)
    return BracketedTradeoff(to_mpf(alpha), est, err, 0, "bracket")


def _fill(acc, gs: list, wanted: list) -> None:
    """Evaluate the δ (and, where δ is above 1/2, the 1 − δ) brackets of every (G, ε) pair
    not cached yet, in one batch."""
    pairs = [(g, e) for g, eps in zip(gs, wanted) for e in eps if e not in g.cache]
    if not pairs:
        return
    mag = np.abs(np.array([e for _, e in pairs]))
    lo, hi = acc.log_delta_at(mag, mag)
    c_lo = np.full(mag.size, -np.inf)
    c_hi = np.zeros(mag.size)
    near_one = np.flatnonzero(hi > -math.log(2))
    if near_one.size:
        c_lo[near_one], c_hi[near_one] = acc.log_complement_at(mag[near_one], mag[near_one])
    for k, (g, e) in enumerate(pairs):
        g.fill([e], lo[k:k + 1], hi[k:k + 1], c_lo[k:k + 1], c_hi[k:k + 1])


def _zoom(acc, states: list, starts: list | None = None) -> None:
    """The fallback: the maximiser located on the oracle's float estimates over the whole
    range (:func:`~exactdp.accounting.dual_argmax.argmaxes`) — or ``starts`` (ε, h) per state, at most 12 rounds — then
    9-point stencils (:data:`STENCIL`) around it, refined (all α in one batch per round)
    until the relative width is TRADEOFF_WIDTH or the rounds run out; ``h`` widens when the
    stencil's slopes are not resolved (brackets too wide at that spacing) and narrows
    around an inner maximiser.  Certified outcomes alone steer it."""
    if not states:
        return
    if starts is not None:  # the maximiser given: at most 12 rounds zooming in from the usual spacing
        e_star = [float(e) for e, _ in starts]
        h = [max(1e-4 * max(1.0, abs(e)), float(v)) for e, v in starts]
        rounds = 12
    else:
        # the model may have pointed far from the maximiser (a clumpy design): locate it afresh
        # on the oracle's own estimates over each α's whole range
        rng = np.array([st.rng for st in states], dtype=float)
        found = _argmaxes(acc, np.array([float(st.g.a) for st in states]), rng[:, 0], rng[:, 1])
        e_star = [float(e) if np.isfinite(e) else st.c for e, st in zip(found, states)]
        h = [1e-4 * max(1.0, abs(e)) for e in e_star]
        rounds = 24
    active = list(range(len(states)))
    for _ in range(rounds):
        if not active:
            break
        stencils = {i: sorted({e_star[i] + k * h[i] for k in STENCIL}) for i in active}
        _fill(acc, [states[i].g for i in active], [stencils[i] for i in active])
        nxt = []
        for i in active:
            st = states[i]
            pts = st.g.at(stencils[i])
            st.lower = max(st.lower, max(p[1] for p in pts))
            up = chord_upper(pts)
            st.upper = min(st.upper, up)
            if st.certified():
                continue
            vals = [p[1] for p in pts]
            best = max(range(len(pts)), key=vals.__getitem__)
            e_star[i] = stencils[i][best]
            if up == mpmath.inf:  # the slopes are not resolved at this spacing: widen
                h[i] *= 4
            elif best not in (0, len(pts) - 1):  # inside: zoom; at an end: move, keep h
                h[i] /= 4
            nxt.append(i)
        active = nxt


def _kinks(acc, states: list, start: bool = False) -> None:
    """The kink search: where the loss is atomic, G is piecewise linear in x = e^ε (a kink at
    each atom) and its maximum sits on a kink.  From the maximiser of G's float estimates
    (:func:`~exactdp.accounting.dual_argmax.argmaxes`, in log form with the complement where
    δ > 1/2) or, with ``start`` or where there is none, the best point evaluated so far (by
    certified lower end), each round evaluates the 5-point stencil ``e* + h·(−2…2)``
    and the chord envelope's peak with the floats either side of it (Kelley's cutting-plane
    point: once two points on each side of the kink lie on its two linear pieces, their chords
    meet at the kink, so the peak is the kink to binary64's resolution and the certified
    ``G_lo`` of the float on its flatter side closes the gap); ``h``
    starts at :data:`KINK_H`·max(1, |ε|), is divided by :data:`KINK_ZOOM` each round (not
    below :data:`KINK_H_MIN` relative) and multiplied by it where the chords' slopes are not
    resolved.  All α in one oracle call per round; certified outcomes alone give the bounds
    (``lower``: the best ``G_lo``; ``upper``: the chord envelope of every point evaluated)."""
    states = [st for st in states if not st.certified()]
    if not states:
        return
    rng = np.array([st.rng for st in states], dtype=float)
    found = np.full(len(states), np.nan) if start else \
        _argmaxes(acc, np.array([float(st.g.a) for st in states]), rng[:, 0], rng[:, 1], complement=True)
    e_star: list = []
    h: list = []
    peak: list = [[] for _ in states]
    for e, st in zip(found, states):
        if np.isfinite(e):
            e_star.append(float(e))
        else:  # no positive estimate anywhere: the best point so far, or the model's
            e_star.append(max(st.g.cache, key=lambda k: st.g.cache[k][1]) if st.g.cache else st.c)
        h.append(KINK_H * max(1.0, abs(e_star[-1])))
    active = list(range(len(states)))
    for _ in range(KINK_ROUNDS):
        if not active:
            break
        asks = []
        for i in active:
            pts = {e_star[i] + k * h[i] for k in CERTIFY}
            pts.update(peak[i])
            asks.append(sorted(pts))
        _fill(acc, [states[i].g for i in active], asks)
        nxt = []
        for i in active:
            st = states[i]
            allpts = st.g.at(sorted(st.g.cache))
            st.lower = max(st.lower, max(p[1] for p in allpts))
            bound, x = chord_envelope(allpts)
            st.upper = min(st.upper, bound)
            if st.certified():
                continue
            e_star[i] = max(st.g.cache, key=lambda k: st.g.cache[k][1])
            peak[i] = []
            if x is not None and x > 0:
                with workdps(_DPS):
                    pk = float(mpmath.log(x))
                # the peak and the floats either side of it: the kink lies between two floats,
                # and G may fall steeply on one side (α near 1: slope −α against G ≈ (1 − α)x)
                peak[i] = [e for e in (math.nextafter(pk, -math.inf), pk, math.nextafter(pk, math.inf))
                           if e not in st.g.cache]
            if bound == mpmath.inf:  # the chords' slopes are not resolved at this spacing: widen
                h[i] *= KINK_ZOOM
            else:
                h[i] = max(h[i] / KINK_ZOOM, KINK_H_MIN * max(1.0, abs(e_star[i])))
            nxt.append(i)
        active = nxt
