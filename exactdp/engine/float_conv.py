"""Certified float64 convolution of nonnegative coefficient vectors (sub-probability masses).

The first precision of :class:`~exactdp.engine.finite_loss.FiniteLoss`: the P-masses of a
composition of many identical finite-loss groups are the coefficients of a product of
polynomial powers.  In ball arithmetic (:class:`flint.arb_poly`) their range of magnitudes
(1 down to 1e-4000) splits every product into many blocks; here they are float64 vectors
with one error model for the whole vector,

    |x̂_i − y_i| ≤ R·y_i + A        for every index i (y the true masses, Σ y ≤ 1),

and every product is a direct (not FFT) convolution whose terms are nonnegative, summed by a
binary tree: ``fl(Σ a_i b_{k−i})`` is within ``γ_{d+1}`` (``γ_n = nu/(1 − nu)``, ``u = 2⁻⁵³``,
d the tree's depth) of the exact sum of the computed terms (Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., §4.2 and Lemma 3.1).  With the inputs' errors,

    R_c = (R_a + R_b + R_a·R_b)(1 + γ) + γ,
    A_c = (A_a(1 + R_b) + A_b(1 + R_a) + N·A_a·A_b)(1 + γ)

(N the number of terms; Σ a, Σ b ≤ 1).  Values below :data:`TAU` are set to 0 (the vector is
trimmed to its nonzero range), which adds ``(TAU + A)/(1 − R)`` to A: every nonzero value is
then at least TAU, so no product underflows (TAU² is a normal float) and none overflows
(values ≤ 1 + R).  numpy's elementwise ``multiply`` and ``add`` are correctly rounded (no
contraction): the bound holds whatever the platform.  Sums of many values (prefix sums) are
then taken exactly, in integers (every nonzero value is a multiple of 2^(−500−52)).
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import flint
import numpy
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["FVec", "TAU", "SCALE_BITS", "OPS_BUDGET", "from_balls", "conv", "conv_ops", "power", "power_ops",
           "product_shape", "ball"]

#: values below this are set to 0 (their size goes into the absolute error A)
TAU = 2.0 ** -500
#: every nonzero value times 2**SCALE_BITS is an integer (its last bit is at least 2^(−500−52))
SCALE_BITS = 553
#: the largest number of multiply-adds (of the untrimmed vectors) the float path takes on (about
#: a CPU-second per 3e8; the ball path it saves is one to two orders slower on such grids)
OPS_BUDGET = 1_000_000_000
_U = Fraction(1, 2**53)
_ROWS = 1 << 18  # the largest matrix of products formed at once (entries)


def _up(x: Fraction) -> Fraction:
    """The least float at or above x (as a Fraction): the bounds' denominators stay small."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return Fraction(f)


def _gamma(k: int) -> Fraction:
    return _up(k * _U / (1 - k * _U))


class FVec:
    """Float values of a vector of true masses ``y_0 … y_{length−1}`` (module docstring).

    Attributes
    ----------
    start : int
        The index of ``x[0]``; x̂ is 0 outside ``[start, start + len(x))``.
    x : numpy.ndarray
        float64, each 0 or at least :data:`TAU`.
    length : int
        The length of the true vector (a polynomial's coefficient count).
    R, A : Fraction
        The error model ``|x̂_i − y_i| ≤ R·y_i + A``.
    """

    __slots__ = ("start", "x", "length", "R", "A")

    def __init__(self, start: int, x: numpy.ndarray, length: int, R: Fraction, A: Fraction):
        self.start, self.x, self.length, self.R, self.A = start, x, length, R, A

    def pruned(self) -> FVec:
        """Values below TAU set to 0 and the vector trimmed to its nonzero range."""
        x = self.x
        small = (x > 0) & (x < TAU)
        A = self.A
        if small.any():
            x = numpy.where(small, 0.0, x)
            A = _up((Fraction(TAU) + A) / (1 - self.R))
        nz = numpy.flatnonzero(x)
        if not len(nz):
            return FVec(0, numpy.zeros(0), self.length, self.R, A)
        lo, hi = int(nz[0]), int(nz[-1]) + 1
        return FVec(self.start + lo, x[lo:hi], self.length, self.R, A)


def from_balls(balls: list) -> FVec | None:
    """The FVec of a list of :class:`flint.arb` masses (exact zeros stay 0); None when a ball
    above TAU contains 0 (no relative bound)."""
    x = numpy.zeros(len(balls))
    rho = 0.0
    A = Fraction(0)
    for i, m in enumerate(balls):
        if m.is_zero():
            continue
        if m.upper() < TAU:
            A = Fraction(TAU)
            continue
        lo = m.lower()
        if not lo > 0:
            return None
        x[i] = float(m.mid())
        r = float((m.rad() / lo).upper())
        rho = max(rho, r)
    # |x̂ − y| ≤ |x̂ − mid| + |mid − y| ≤ 2u·mid + rad ≤ 2u·y + (1 + 2u)·rad, rad ≤ ρ·y
    R = _up(2 * _U + (1 + 2 * _U) * Fraction(rho) * (1 + Fraction(1, 2**40)))
    return FVec(0, x, len(balls), R, A).pruned()


_WORK = threading.local()  # two reused buffers of _ROWS floats (fresh large arrays cost page faults)


def _buffers(n: int) -> tuple:
    got = getattr(_WORK, "bufs", None)
    if got is None or len(got[0]) < n:
        got = _WORK.bufs = (numpy.empty(max(n, _ROWS)), numpy.empty(max(n, _ROWS)))
    return got


def _block(view: numpy.ndarray, b: numpy.ndarray) -> tuple:
    """``(Σ_j b_j·view[j], depth)``: the products added pairwise, row by row (a binary tree)."""
    m, w = view.shape
    bufs = _buffers(m * w)
    src = bufs[0][:m * w].reshape(m, w)
    numpy.multiply(view, b[:, None], out=src)
    depth, k = 0, 0
    while m > 1:
        h, odd = m // 2, m % 2
        k ^= 1
        dst = bufs[k][:(h + odd) * w].reshape(h + odd, w)
        numpy.add(src[0:2 * h:2], src[1:2 * h:2], out=dst[:h])
        if odd:
            dst[h] = src[m - 1]
        src, m = dst, h + odd
        depth += 1
    return src[0].copy(), depth


def conv(a: FVec, b: FVec) -> FVec:
    """The product of the two polynomials (module docstring), pruned.

    The rows of the product matrix are the shifts of one vector weighted by the other's
    values; only the rows of nonzero weights are formed (a zero weight adds exact zeros, and
    the bound's γ counts the depth of the tree actually summed), so the cost is the width
    times the fewer nonzeros — vectors on sparse sub-lattices (a discrete Laplace's two loss
    values beside a fine common grid) cost their atoms, not their span."""
    length = a.length + b.length - 1
    n_terms = min(a.length, b.length)
    if len(a.x) < len(b.x):
        a, b = b, a
    n, m = len(a.x), len(b.x)
    if n == 0 or m == 0:
        out = numpy.zeros(0)
        depth = 0
    else:
        width = n + m - 1
        v, w = (a, b) if numpy.count_nonzero(b.x) <= numpy.count_nonzero(a.x) else (b, a)
        lw = len(w.x)
        rows = numpy.flatnonzero(w.x)
        pad = numpy.concatenate((numpy.zeros(lw - 1), v.x, numpy.zeros(lw - 1)))
        view = sliding_window_view(pad, width)[::-1]  # row j: v shifted right by j
        dense = 2 * len(rows) > lw
        cols = max(1, _ROWS // max(1, lw if dense else len(rows)))
        parts, depth = [], 0
        if not len(rows):
            parts.append(numpy.zeros(width))
        for c0 in range(0, width, cols) if len(rows) else ():
            block = view[:, c0:c0 + cols] if dense else view[rows, c0:c0 + cols]
            part, depth = _block(block, w.x if dense else w.x[rows])
            parts.append(part)
        out = numpy.concatenate(parts) if len(parts) > 1 else parts[0]
    g = _gamma(depth + 1)
    R = _up((a.R + b.R + a.R * b.R) * (1 + g) + g)
    A = _up((a.A * (1 + b.R) + b.A * (1 + a.R) + n_terms * a.A * b.A) * (1 + g))
    return FVec(a.start + b.start, out, length, R, A).pruned()


def power(v: FVec, c: int) -> FVec:
    """``v`` to the power ``c ≥ 1`` (binary powering of :func:`conv`)."""
    out = None
    while True:
        if c & 1:
            out = v if out is None else conv(out, v)
        c >>= 1
        if not c:
            assert out is not None
            return out
        v = conv(v, v)


def power_ops(length: int, c: int, nnz: int | None = None, stride: int = 1) -> tuple:
    """``(ops, shape)``: the multiply-adds of :func:`power` on untrimmed vectors (a budget's
    estimate; :func:`conv` costs the width times the fewer nonzeros) and the result's shape
    ``(length, nonzeros bound, stride)`` — a vector whose positions are multiples of
    ``stride`` has at most ``(length − 1)/stride + 1`` nonzeros, and so do its powers."""
    cur = (length, length if nnz is None else nnz, stride)
    ops, acc = 0, None
    while True:
        if c & 1:
            if acc is None:
                acc = cur
            else:
                ops += conv_ops(acc, cur)
                acc = product_shape(acc, cur)
        c >>= 1
        if not c:
            assert acc is not None
            return ops, acc
        ops += conv_ops(cur, cur)
        cur = product_shape(cur, cur)


def conv_ops(a: tuple, b: tuple) -> int:
    """The multiply-adds of :func:`conv` of vectors of shapes a and b (:func:`power_ops`)."""
    return (a[0] + b[0] - 1) * min(a[1], b[1])


def product_shape(a: tuple, b: tuple) -> tuple:
    """The shape (:func:`power_ops`) of the product of vectors of shapes a and b."""
    n, stride = a[0] + b[0] - 1, math.gcd(a[2], b[2])
    return n, min((n - 1) // stride + 1, a[1] * b[1]), stride


def ball(x_hat: float, r: float, a: float) -> flint.arb:
    """The ball ``x̂ ± (r·x̂ + a)`` (r, a already bounds of R/(1 − R), k·A/(1 − R))."""
    return flint.arb(x_hat, (r * x_hat + a) * (1 + 2.0 ** -40))
