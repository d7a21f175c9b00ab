"""The discrete Gaussian N_Z(0, s²) in ball arithmetic, through Arb's Jacobi theta function.

For ``Θ(z) = Σ_{x∈ℤ} exp(z x − x²/(2s²))`` (so ``E e^{zX} = Θ(z)/Θ(0)``)

    Θ(2πi w) = θ₃(w, τ),   τ = i/(2π s²),   θ₃(w, τ) = Σ_n q^{n²} e^{2πinw},  q = e^{πiτ},

and ``acb.modular_theta`` returns θ₃ as a ball that contains every truncation and
rounding error of Arb's evaluation.  A node of the trapezoid rule asks for
``Θ(a + 2πi r)`` with ``a`` real and ``r`` an exact rational: ``w = r − i a/(2π)``, so no
phase is ever rounded before Arb sees it.

Facts used by the certificate (proved in ``docs/certificates.rst``):

* **Poisson form.** ``Θ(a+ib) = sqrt(2πs²) e^{s²a²/2} Σ_k exp(−s²(b−2πk)²/2 + i s²a(b−2πk))``.
  Hence ``|Θ(a+ib)| ≤ Θ(a)·P(u)/D`` with ``u = dist(b, 2πℤ)``, the wrapped normal
  ``P(u) = Σ_k e^{−s²(u−2πk)²/2}`` and ``D = 1 − 2Σ_{k≥1} e^{−2π²s²k²}``; and ``P`` is
  non-increasing on ``[0, π]`` (Jacobi triple product: every factor
  ``1 + 2q^{2m−1}cos u + q^{4m−2}`` is).  :func:`sieve_constant` turns this into
  ``−log(|Θ(a+ib)|/Θ(a)) ≥ s² min(u, u_c)²/2 − c`` with a certified ``c``.
* **Sub-Gaussian.** ``Θ(t) ≤ e^{s²t²/2} Θ(0)`` (the Poisson form with ``|cos| ≤ 1``), so
  ``P(X ≥ x) ≤ e^{−x²/(2s²)}`` and sums are sub-Gaussian with variance proxy ``Σ m a² s²``.
* **Few Poisson terms.** With ``e_k = exp(−s²(b−2πk)²/2 + i s²a(b−2πk))`` and ``|b| ≤ π``,
  ``e_k/e₀ = γ_k y^k`` with ``y = e^{2πs²b}``, ``γ_k = e^{−2π²s²k²} e^{−2πi s²ak}`` and
  ``|e_k/e₀| = e^{−2πs²(πk² − kb)} ≤ 1``; the terms ``|k| > K`` are bounded by
  :meth:`poisson_error` (a geometric tail), so
  ``Θ(a+ib) = sqrt(2πs²) e^{s²a²/2} e₀ (Σ_{|k|≤K} γ_k y^k + ξ)`` with ``|ξ|`` at most that bound
  (:meth:`poisson_reach` picks K).
* **Truncation.** ``Σ_{x>W} e^{−x²/(2s²)} ≤ e^{−(W+1)²/(2s²)} / (1 − e^{−(2W+3)/(2s²)})``
  (ratio of consecutive terms), and ``Θ(0) ≥ 1``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import acb, arb, arb_poly, fmpq

from exactdp.certify.balls import ball

__all__ = ["DGBall", "U_CUT", "float_variance", "float_log_mgf", "float_tilted_mean"]

#: the sieve's quadratic lower bound is used on [0, U_CUT·π] and held constant beyond
U_CUT = 0.9


class DGBall:
    """N_Z(0, s²) at the working precision (construct inside :func:`balls.precision`).

    Parameters
    ----------
    s2 : Fraction
        The variance parameter s² > 0.
    """

    def __init__(self, s2: Fraction):
        self.s2 = Fraction(s2)
        self.s2b = ball(self.s2)
        self.two_pi = 2 * arb.pi()
        self.tau = acb(0, 1 / (self.two_pi * self.s2b))
        self.theta0 = self.theta_w(acb(0)).real

    def theta_w(self, w: acb) -> acb:
        """``Θ(2πi w) = θ₃(w, τ)``."""
        return acb.modular_theta(w, self.tau)[2]

    def theta_real(self, a: arb) -> arb:
        """``Θ(a)`` for real ``a`` (a ball > 0)."""
        return self.theta_w(acb(0, -a / self.two_pi)).real

    def theta_node(self, r, a: arb) -> acb:
        """``Θ(a + 2πi r)`` for an exact rational ``r`` (fmpq) and real ``a``."""
        return self.theta_w(acb(arb(r), -a / self.two_pi))

    # -- one Poisson term ------------------------------------------------------------------
    def poisson_reach(self, N: int, bits: int, K: int = 0) -> int:
        """The largest ``0 ≤ r ≤ N/2`` (−1 if none) such that the Poisson terms ``|k| ≤ K``
        at ``|b| ≤ 2πr/N`` leave about ``2^−bits`` (relative to ``e₀``) or less (float64:
        it only chooses where they are used; :meth:`poisson_error` bounds the rest)."""
        u = math.pi * (K + 1) - bits * math.log(2.0) / (2.0 * math.pi * float(self.s2) * (K + 1))
        if u <= 0.0:
            return -1
        if u >= math.pi:
            return N // 2 if K > 0 else (N - 1) // 2
        return min(int(u * N / (2.0 * math.pi)), (N - 1) // 2)

    def poisson_error(self, r: int, N: int, K: int = 0) -> arb:
        """A ball whose upper end bounds ``|Σ_{|k|>K} e_k/e₀|`` (the Poisson terms beyond K,
        relative to ``e₀``) for every real a and ``|b| ≤ u = 2πr/N ≤ π`` (``u < π`` when
        K = 0): with ``f(j) = j(πj − u)``, convex in j, ``|e_{±j}/e₀| ≤ e^{−2πs²f(j)}`` and
        ``f(j+1) − f(j) ≥ π(2K+3) − u`` for j > K, so the sum is at most
        ``2e^{−2πs²f(K+1)}/(1 − e^{−2πs²(π(2K+3) − u)})``."""
        if not 0 <= 2 * r <= N or (K == 0 and 2 * r == N):
            raise ValueError("need 0 <= 2r <= N (2r < N when K = 0)")
        pi = arb.pi()
        u = pi * arb(fmpq(2 * r, N))
        c = -2 * pi * self.s2b
        return 2 * (c * (K + 1) * (pi * (K + 1) - u)).exp() / (1 - (c * (pi * (2 * K + 3) - u)).exp())

    def poisson_scale(self, a: arb) -> arb:
        """``sqrt(2πs²) e^{s²a²/2}`` (the Poisson form's prefactor at real part a)."""
        return (self.two_pi * self.s2b).sqrt() * (self.s2b * a * a / 2).exp()

    # -- truncated pmf -------------------------------------------------------------------
    def width(self, log_inv_tau: float) -> int:
        """Half-width W with ``e^{−(W+1)²/(2s²)} ≤ e^{−log_inv_tau}`` (approximately;
        the certified bound is :meth:`outside_mass`)."""
        return int(math.ceil(math.sqrt(2.0 * float(self.s2) * log_inv_tau))) + 1

    def pmf_poly(self, W: int) -> arb_poly:
        """``Σ_{|x|≤W} P(X = x) t^{x+W}`` (coefficient balls, relative accuracy each)."""
        inv = 1 / self.theta0
        two_s2 = 2 * self.s2b
        return arb_poly([(-(arb(x * x) / two_s2)).exp() * inv for x in range(-W, W + 1)])

    def outside_mass(self, W: int) -> arb:
        """A ball upper bound (its upper end) on ``P(|X| > W)``."""
        two_s2 = 2 * self.s2b
        head = (-(arb((W + 1) ** 2) / two_s2)).exp()
        ratio = (-(arb(2 * W + 3) / two_s2)).exp()
        return 2 * head / (1 - ratio) / self.theta0

    # -- sieve constant ------------------------------------------------------------------
    def sieve_constant(self) -> arb | None:
        """A ball whose upper end bounds ``c`` in ``−log(|Θ(a+ib)|/Θ(a)) ≥ s²min(u,u_c)²/2 − c``
        for every real a, b (``u = dist(b, 2πℤ)``, ``u_c = U_CUT·π``); None when the
        Poisson bound is void (``D ≤ 0``: tiny s², the group is not used to prune)."""
        pi = arb.pi()
        s2 = self.s2b
        q = (-2 * pi * pi * s2).exp()
        k_neg = q / (1 - q**3)  # Σ_{k≥1} q^{k²} ≤ q/(1 − q³)
        D = 1 - 2 * k_neg
        if not D > 0:
            return None
        uc = pi * ball(Fraction(U_CUT))
        # Σ_{k≥1} e^{−2πs²k(πk − u_c)} ≤ e^{−2πs²(π−u_c)} / (1 − e^{−2πs²(2π−u_c)})
        k_pos = (-2 * pi * s2 * (pi - uc)).exp() / (1 - (-2 * pi * s2 * (2 * pi - uc)).exp())
        c = (1 + k_pos + k_neg).log() - D.log()
        return c


def float_variance(s2: Fraction) -> float:
    """Var N_Z(0, s²) in float64 (for planning only: choice of tilt and sizes)."""
    s = float(s2)
    if s >= 30:
        return s
    half = int(math.ceil(math.sqrt(2 * s * 60))) + 2
    w = [math.exp(-x * x / (2 * s)) for x in range(-half, half + 1)]
    return sum(x * x * wx for x, wx in zip(range(-half, half + 1), w)) / sum(w)


def _direct_terms(s: float, a: float):
    c = round(s * a)
    half = int(math.ceil(math.sqrt(2 * s * 60))) + 2
    xs = range(c - half, c + half + 1)
    ex = [a * x - x * x / (2 * s) for x in xs]
    mx = max(ex)
    return xs, [math.exp(e - mx) for e in ex], mx


def float_log_mgf(s2: Fraction, a: float) -> float:
    """``log E e^{aX}`` for X ~ N_Z(0, s²), in float64 (planning only)."""
    s = float(s2)
    if s >= 8:
        return 0.5 * s * a * a
    xs, w, mx = _direct_terms(s, a)
    _, w0, mx0 = _direct_terms(s, 0.0)
    return (mx + math.log(sum(w))) - (mx0 + math.log(sum(w0)))


def float_tilted_mean(s2: Fraction, a: float) -> float:
    """``E[X e^{aX}]/E[e^{aX}]`` for X ~ N_Z(0, s²), in float64 (planning only)."""
    s = float(s2)
    if s >= 8:
        return s * a
    xs, w, _ = _direct_terms(s, a)
    return sum(x * wx for x, wx in zip(xs, w)) / sum(w)
