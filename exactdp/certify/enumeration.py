"""Exact enumeration in balls: coarse groups as polynomials, and tails conditioned on them.

For groups with a small support, the distribution of ``Y = Σ_{g∈C} a_g Σ_{k≤m_g} X_{g,k}``
is computed exactly: with ``γ = gcd(a_g : g ∈ C)`` and ``b_g = a_g/γ``,

    Σ_y P(Y = γy) t^y = Π_{g∈C} p_g(t^{b_g})^{m_g},   p_g(t) = Σ_{|x|≤W_g} P(X_g = x) t^x,

a product of Arb polynomials with ball coefficients (Arb's block multiplication keeps the
*relative* accuracy of every coefficient, also in the far tails, as all are positive;
products of inflated polynomials are split by residue classes, :func:`inflated_product`).
Each factor is truncated to ``|x| ≤ W_g``; the configurations with some coordinate
outside have total probability at most ``μ_out = Σ_g m_g P(|X_g| > W_g)``
(:meth:`~exactdp.certify.dgball.DGBall.outside_mass`), and they can only *add* to a
tail, so every enclosure is widened upward by ``μ_out``.

* :class:`EnumeratedTails` — all groups enumerated: ``P(S ≥ s) = Σ_{γy ≥ s} P(Y = γy)``.
* :class:`ConditionedTails` — the coarse part enumerated and the fine part
  ``F = Σ_{g∉C} a_g Σ X`` (``d = gcd`` of its weights, ``F = d·F'``) by the trapezoid rule:

      P(S ≥ s) = Σ_y P(Y = y) · P(F' ≥ ⌈(s − y)/d⌉),

  a sum of non-negative terms.  Atoms whose contribution is certainly negligible are not
  sent to the quadrature: ``P(F' ≥ t) ≤ e^{−t²/(2V'_F)}`` for t > 0 and
  ``P(F' ≥ t) ≥ 1 − e^{−(1−t)²/(2V'_F)}`` for t ≤ 0 (sub-Gaussian tails), and the skipped
  remainder is added, as a ball, to the upper end.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

from flint import arb, arb_poly

from exactdp.certify.balls import interval
from exactdp.certify.dgball import DGBall, float_variance
from exactdp.certify.trapezoid import TrapezoidTails

__all__ = ["CoarsePmf", "EnumeratedTails", "ConditionedTails", "enumeration_size", "inflated_product"]

#: most residue-class products one enumeration may split into
MAX_PIECES = 200_000
_ZERO = object()
#: most re-truncations of one tail, and the largest polynomial they may build
_MAX_DEEPEN = 6
MAX_DEGREE = 1_000_000


def enumeration_size(groups, log_inv_tau: float) -> tuple[int, int]:
    """(degree, residue-class products) of the enumerated polynomial of ``groups`` (a, m, s2),
    for planning; the degree is huge when the products would be too many."""
    gc = reduce(math.gcd, (a for a, _, _ in groups))
    step, pieces = 0, 0
    for a, _, _ in groups:
        b = a // gc
        if step:
            g = math.gcd(step, b)
            pieces += (step // g) * (b // g)
        step = math.gcd(step, b) if step else b
    if pieces > MAX_PIECES:
        return 10**18, pieces
    deg = sum((a // gc) * 2 * m * (int(math.ceil(math.sqrt(2.0 * float(s2) * log_inv_tau))) + 1)
              for a, m, s2 in groups)
    return deg, pieces


def inflated_product(A: list, alpha: int, B: list, beta: int):
    """Coefficients of ``A(t^α)·B(t^β)`` in ``u = t^g``, ``g = gcd(α, β)``: returns (C, g).

    With ``α = g a'``, ``β = g b'`` (coprime), every exponent ``a' i + b' j`` of C is
    ``a'(s + b' k) + b' r`` for a unique ``s < b'``, ``r < a'`` (Chinese remainders), where
    ``i = s + b' p`` and ``j = r + a' q``; so C is assembled from the ``a'·b'`` dense
    products ``A_s·B_r`` (``A_s = A[s::b']``, ``B_r = B[r::a']``), each an Arb block
    multiplication that keeps every coefficient's relative accuracy (inflated polynomials,
    full of zeros, would defeat it)."""
    g = math.gcd(alpha, beta)
    a1, b1 = alpha // g, beta // g
    if a1 == 1 and b1 == 1:
        c = arb_poly(A) * arb_poly(B)
        return [c[i] for i in range(c.degree() + 1)], g
    deg = a1 * (len(A) - 1) + b1 * (len(B) - 1)
    C = [_ZERO] * (deg + 1)
    for s in range(b1):
        As = A[s::b1]
        if not As:
            continue
        pa = arb_poly(As)
        for r in range(a1):
            Br = B[r::a1]
            if not Br:
                continue
            prod = pa * arb_poly(Br)
            base = a1 * s + b1 * r
            stride = a1 * b1
            for k in range(prod.degree() + 1):
                C[base + stride * k] = prod[k]
    return [arb(0) if c is _ZERO else c for c in C], g


class CoarsePmf:
    """The exact (truncated) pmf of ``Y = Σ_g a_g Σ_k X_{g,k}`` as ball coefficients.

    Attributes
    ----------
    gcd : int
        γ: Y takes values in γℤ.
    offset : int
        Coefficient i is ``P(Y = γ(i + offset))``.
    coeffs : list of arb
    outside : arb
        Ball whose upper end bounds the probability of the truncated configurations.
    """

    def __init__(self, groups, log_inv_tau: float):
        groups = [(int(a), int(m), Fraction(s2)) for a, m, s2 in groups]
        self.gcd = reduce(math.gcd, (a for a, _, _ in groups))
        coeffs: list | None = None
        step = 0
        offset = 0
        outside = arb(0)
        widths = []
        for a, m, s2 in groups:
            dg = DGBall(s2)
            W = dg.width(log_inv_tau)
            widths.append(W)
            p = dg.pmf_poly(W) ** m
            zc = [p[i] for i in range(p.degree() + 1)]
            b = a // self.gcd
            if coeffs is None:
                coeffs, step = zc, b
            else:
                coeffs, step = inflated_product(coeffs, step, zc, b)
            offset -= W * m * b
            outside += m * dg.outside_mass(W)
        assert coeffs is not None and step == 1
        self.offset = offset
        self.coeffs = coeffs
        self.outside = outside
        self.widths = tuple(widths)

    def atoms(self):
        """(y, P(Y = y)) for the non-zero coefficients."""
        g, off = self.gcd, self.offset
        return [(g * (i + off), c) for i, c in enumerate(self.coeffs) if not c.is_zero()]


class EnumeratedTails:
    """``P(S ≥ s)`` from the exact pmf of S (every group enumerated); the truncation is
    deepened (``W_g ∝ sqrt(log 1/τ)``) until the truncated mass is below η relative."""

    method = "enumeration"

    def __init__(self, groups, log_inv_tau: float, log_inv_eta: float = 45.0):
        self.groups = groups
        self.log_inv_eta = float(log_inv_eta)
        self.var = sum(m * a * a * float_variance(s2) for a, m, s2 in groups)
        self._set_truncation(log_inv_tau)

    def _set_truncation(self, log_inv_tau: float) -> None:
        self.log_inv_tau = float(log_inv_tau)
        self.pmf = CoarsePmf(self.groups, self.log_inv_tau)
        suffix = [arb(0)] * (len(self.pmf.coeffs) + 1)
        acc = arb(0)
        for i in range(len(self.pmf.coeffs) - 1, -1, -1):
            acc += self.pmf.coeffs[i]
            suffix[i] = acc
        self.suffix = suffix

    def parameters(self) -> dict:
        return {"truncation_widths": self.pmf.widths, "truncated_mass": self.pmf.outside.upper().str(3, radius=False)}

    def tail(self, s: int) -> arb:
        for _ in range(_MAX_DEEPEN):
            g, off = self.pmf.gcd, self.pmf.offset
            i0 = -((-int(s)) // g) - off  # ceil(s/γ) − offset
            i0 = min(max(i0, 0), len(self.suffix) - 1)
            v = self.suffix[i0]
            out = self.pmf.outside.upper()
            deeper = _deeper(v.lower(), out, self.log_inv_tau, self.log_inv_eta, len(self.pmf.coeffs), MAX_DEGREE,
                             float(s) ** 2 / (2 * self.var))
            if deeper is None:
                break
            self._set_truncation(deeper)
        return interval(v.lower(), v.upper() + out)


def _deeper(lo: arb, out: arb, log_inv_tau: float, log_inv_eta: float, degree: int, max_degree: int,
            log_inv_p: float = 0.0):
    """A deeper truncation level when the truncated mass ``out`` exceeds η·lo (else None);
    ``log_inv_p`` estimates log(1/P) when nothing of the tail is inside the box yet.  None
    as well when the deeper polynomial (degree ∝ sqrt(log 1/τ)) would exceed
    ``max_degree`` — the enclosure stays valid, only wider."""
    if lo > 0:
        gap = float((out / lo).log().upper()) + log_inv_eta
        if gap <= 0:
            return None
        new = log_inv_tau + gap + 10.0
    else:
        new = max(2.0 * log_inv_tau, log_inv_p + log_inv_eta + 20.0)
    return new if degree * math.sqrt(new / log_inv_tau) <= max_degree else None


class ConditionedTails:
    """``P(S ≥ s) = Σ_y P(Y = y)·P(F' ≥ ⌈(s − y)/d⌉)``: coarse groups enumerated, the fine
    part by :class:`~exactdp.certify.trapezoid.TrapezoidTails` (see the module docstring)."""

    method = "conditioned"

    def __init__(self, coarse, fine, log_inv_eta: float, log_inv_tau: float, kappa: float):
        self.coarse = coarse
        self.coarse_weights = [int(a) for a, _, _ in coarse]
        self.d = reduce(math.gcd, (int(a) for a, _, _ in fine))
        self.fine = TrapezoidTails([(a // self.d, m, s2) for a, m, s2 in fine], log_inv_eta + 4.0, kappa)
        self.vf = float(self.fine.vproxy)
        self.vf_ball = arb(self.fine.vproxy.numerator) / self.fine.vproxy.denominator
        self.log_inv_eta = log_inv_eta
        self._set_truncation(log_inv_tau)
        self._fine_cache: dict = {}

    def _set_truncation(self, log_inv_tau: float) -> None:
        self.log_inv_tau = float(log_inv_tau)
        self.pmf = CoarsePmf(self.coarse, self.log_inv_tau)
        self.atoms = self.pmf.atoms()
        self.log_p = [float(p.mid().log()) for _, p in self.atoms]

    def parameters(self) -> dict:
        return {"coarse_weights": tuple(self.coarse_weights), "truncation_widths": self.pmf.widths,
                "truncated_mass": self.pmf.outside.upper().str(3, radius=False), "fine_gcd": self.d,
                **{f"fine_{k}": v for k, v in self.fine.parameters().items()}}

    def _fine_tail(self, t: int) -> arb:
        v = self._fine_cache.get(t)
        if v is None:
            v = self._fine_cache[t] = self.fine.tail(t)
        return v

    def tail(self, s: int) -> arb:
        for _ in range(_MAX_DEEPEN):
            lo, hi = self._sum(s)
            out = self.pmf.outside.upper()
            deeper = _deeper(lo, out, self.log_inv_tau, self.log_inv_eta, len(self.pmf.coeffs), MAX_DEGREE)
            if deeper is None:
                break
            self._set_truncation(deeper)
        return interval(lo, hi + out)

    def _sum(self, s: int):
        """Lower and upper ends of the enumerated sum (without the truncated mass)."""
        d, vf = self.d, self.vf
        sure_lo, sure_hi = arb(0), arb(0)
        cand = []
        for (y, p), lp in zip(self.atoms, self.log_p):
            t = -((y - int(s)) // d)  # ceil((s − y)/d)
            if t <= 0:
                lg = -((1 - t) ** 2) / (2 * vf)
                if lg < -self.log_inv_eta - 8.0:
                    miss = (-(arb(1 - t) ** 2) / (2 * self.vf_ball)).exp()
                    sure_lo += p * (1 - miss)
                    sure_hi += p
                    continue
                cand.append((lp, t, p))
            else:
                cand.append((lp - t * t / (2 * vf), t, p))
        cand.sort(key=lambda c: -c[0])
        # log of the remaining upper-bound estimates (float, for the stopping rule only;
        # what is skipped is bounded rigorously below)
        rest = [-math.inf] * (len(cand) + 1)
        for i in range(len(cand) - 1, -1, -1):
            rest[i] = _logaddexp(rest[i + 1], cand[i][0])
        lo_sum, hi_sum = sure_lo, sure_hi
        stop = len(cand)
        for i, (_, t, p) in enumerate(cand):
            if lo_sum.lower() > 0 and rest[i] < float(lo_sum.lower().log()) - self.log_inv_eta - 2.0:
                stop = i
                break
            v = p * self._fine_tail(t)
            lo_sum += v
            hi_sum += v
        skipped = arb(0)
        for _, t, p in cand[stop:]:
            bound = (-(arb(t) ** 2) / (2 * self.vf_ball)).exp() if t > 0 else arb(1)
            skipped += p * bound
        return lo_sum.lower(), hi_sum.upper() + skipped.upper()


def _logaddexp(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))
