"""The kinks of δ(ε) beside randomized response by noise parameter, for the trade-off's dual.

With :class:`~exactdp.kinds.RandomizedResponseNoise` groups the loss values are
``v + Σ_g b_g log R_g`` (v on the rest's rational grid, b_g the net counts): irrational, off
every rational grid.  δ(ε) has its kinks there, and so has the dual's
``G(x) = 1 − δ(log x) − xα``, linear in x between kinks (without a continuous part), so its
supremum sits at a kink.  :func:`kink_stencils` lists, for an estimate of the maximiser, the
nearest kinks to 60 digits — each as a rational point ``r`` within ``1e-55`` of it, with
``r ± h`` and ``r ± 2h`` beside it (h below a fifth of the gap to the next kink): G at ``r`` is
a certified lower end of sup G within ``|G'|·1e-55`` of G at the kink, and the chords through
the two points on either side, extended to the kink (concavity:
:func:`~exactdp.accounting.chord_envelope.chord_envelope`), bound it from above — every
segment between points then has a chord of its own linear piece on one side.  Nothing here
is certified itself: the points only choose where the certified G is evaluated, so a wrong or
missing kink costs width, never validity.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy

__all__ = ["kink_stencils", "KINK_COUNTS"]

#: the nearest kinks taken on each side of the estimate, one stencil per count (the next is
#: tried where the previous one's chords do not close around the maximum)
KINK_COUNTS = (2, 6, 24)
#: the half-width of the grid indices tried around each shift
_SPREAD = 30
_DPS = 60


def _candidates(acc, c: float, count: int) -> list:
    """``[(v, bs)]``: the rest's loss value v and the net counts bs of the kinks nearest to
    ``c ≥ 0`` on each side, at least ``count`` of them (floats decide the order only).  The v
    are the finite part's atoms of positive mass where it is the whole rest (a fine sparse grid
    has few), else the points of the rest's kink grid."""
    rr = acc.rr
    grid = acc.rest_kinks
    logs = numpy.array([float(mpmath.log(mpmath.mpf(r.numerator) / r.denominator)) for r in rr.ratios])
    bs = numpy.array([t[0] for t in rr.terms], dtype=numpy.float64).reshape(len(rr.terms), len(rr.ratios))
    shifts = bs @ logs
    if grid is None:  # (a continuous Gaussian: no kinks)
        return []
    offset, step = grid
    spread = max(_SPREAD, count + 2)
    fin = acc.finite
    if acc.gauss is None and acc.laplace is None and fin.step > 0:  # the atoms of positive mass only
        idx = numpy.sort(numpy.asarray(fin.atoms(128)[0], dtype=numpy.int64))  # (a sparse grid's few atoms)
        if not len(idx):
            return []
        vals = float(fin.offset) + idx * float(fin.step)
        pos = numpy.searchsorted(vals, c - shifts)
        ks = numpy.clip(pos[:, None] + numpy.arange(-spread, spread + 1)[None, :], 0, len(idx) - 1)
        js = idx[ks]
        offset, step = fin.offset, fin.step
        vals = float(offset) + js * float(step) + shifts[:, None]
    elif step == 0:
        js = numpy.zeros((len(shifts), 1), dtype=numpy.int64)
        vals = float(offset) + shifts[:, None]
    else:
        j0 = numpy.round((c - shifts - float(offset)) / float(step)).astype(numpy.int64)
        js = j0[:, None] + numpy.arange(-spread, spread + 1)[None, :]
        vals = float(offset) + js * float(step) + shifts[:, None]
    d = vals - c
    flat = d.ravel()
    left = numpy.nonzero(flat <= 0)[0]
    right = numpy.nonzero(flat > 0)[0]
    take = list(left[numpy.argsort(-flat[left], kind="stable")[:4 * count]]) + \
        list(right[numpy.argsort(flat[right], kind="stable")[:4 * count]])
    out = []
    width = js.shape[1]
    for i in take:
        t, jj = divmod(int(i), width)
        out.append((offset + int(js[t, jj]) * step, rr.terms[t][0]))
    return out


def kink_stencils(acc, centre: float) -> list:
    """Stencils (lists of exact ε) around the kinks of δ nearest ``|centre|`` (the sign of
    ``centre`` kept: the kinks are symmetric), one per :data:`KINK_COUNTS` (module
    docstring); ``[]`` where δ has no kinks."""
    sign = 1 if centre >= 0 else -1
    c = abs(centre)
    out: list = []
    with mpmath.workdps(_DPS):
        logs = [mpmath.log(mpmath.mpf(r.numerator) / r.denominator) for r in acc.rr.ratios]
        for count in KINK_COUNTS:
            exact: dict = {}
            for v, bs in _candidates(acc, c, count):
                k = mpmath.mpf(v.numerator) / v.denominator + mpmath.fsum(b * lg for b, lg in zip(bs, logs))
                exact.setdefault(mpmath.nstr(k, 50), k)  # (equal kinks of distinct net counts: one point)
            ks = sorted(exact.values())
            below = [k for k in ks if k <= c][-count:]
            above = [k for k in ks if k > c][:count]
            ks = below + above
            if not ks:
                return out
            pts = []
            for i, k in enumerate(ks):
                gaps = [abs(k - ks[j]) for j in (i - 1, i + 1) if 0 <= j < len(ks)]
                h = min([mpmath.mpf("1e-9") * max(1, abs(k))] + [g / 5 for g in gaps])
                r = Fraction(*map(int, k.as_integer_ratio()))
                hq = Fraction(*map(int, mpmath.mpf(mpmath.nstr(h, 3)).as_integer_ratio()))
                if hq <= 0:
                    continue
                pts += [r - 2 * hq, r - hq, r, r + hq, r + 2 * hq]
            out.append(sorted({sign * p for p in pts}))
    return out
