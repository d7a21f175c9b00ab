"""The tightest many-count bound (19) at finite n and r: optimising the prior J.

Why a two-parameter family suffices.  For a fixed mean μ = EJ the term
log(2e(r(n+μ) + 1/4)) of (19) is constant and E(J−j⋆)² is linear in the pmf, so by
Dinkelbach's method the best ratio at that mean is the λ with
max_{p: Ep=μ} H(p) − λE(J−j⋆)² = const, a concave problem whose maximiser is the Gibbs law
p_j ∝ exp(−λ(j − j⋆)² − γj) on j ≥ 0.  Whatever μ and j⋆, these are the discrete
Gaussians p_j ∝ exp(−(j − m)²/(2s²)) restricted to j ≥ 0 (m ∈ ℝ, s > 0), with the
geometric laws (λ → 0) as a boundary case; j⋆ is then best taken as the integer nearest
EJ.  So the supremum of (19) over all finitely supported priors is the supremum over
this family (truncated to a finite window), which is searched numerically here
(Nelder–Mead over (m/s, log s) from several starts, plus a 1-D search over geometric
laws, plus the best uniform prior (23)); the result is the best bound found, not a
certified global optimum of the search.

Every candidate is an explicit finitely supported pmf, and the reported value is (19)
evaluated on exactly that pmf, so it is a valid lower bound whatever the search did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from exactdp.countdep._optim import nelder_mead_max
from exactdp.countdep.bounds import UniformBound, best_uniform_bound, strict_r
from exactdp.countdep.params import validate_positive_count
from exactdp.numerics.precision import EPS64
from exactdp.numerics.search import golden_max

__all__ = ["TAIL", "MAX_SUPPORT", "PriorEvaluation", "OptimisedPrior", "evaluate_prior", "optimise_prior"]

#: Log-weights more than TAIL below the peak are dropped (the pmf is the truncated one).
TAIL = 40.0
#: Largest support (number of integers) evaluated exactly.
MAX_SUPPORT = 30_000_000
_SEARCH_POINTS = 4000
_CHUNK = 1 << 20


def _window(m: float, s: float, beta: float) -> tuple:
    """Integer window [lo, hi] where the log-weight is within TAIL of its maximum on j ≥ 0."""
    if math.isinf(s):  # geometric: log w = −βj, β > 0
        return 0, int(math.floor(TAIL / beta))
    peak = max(0.0, m)
    rad = math.sqrt((peak - m) ** 2 + 2.0 * TAIL * s * s)
    return max(0, int(math.ceil(m - rad))), int(math.floor(m + rad))


def _logw(j: np.ndarray, m: float, s: float, beta: float) -> np.ndarray:
    if math.isinf(s):
        return -beta * j
    peak = max(0.0, m)
    return -((j - m) ** 2 - (peak - m) ** 2) / (2.0 * s * s)


@dataclass(frozen=True)
class PriorEvaluation:
    """(19) evaluated on one explicit pmf (float64, exactly rounded sums).

    Attributes
    ----------
    value : float
        [numerator]₊/second_moment, rounded down by ``rel_error`` so it is a valid bound.
    numerator, entropy, mean, second_moment : float
    j_star : int
    support : tuple (lo, hi)
    rel_error : float
        Bound on the relative error of the unrounded value (inf when vacuous).
    family : str
    parameters : dict
    """

    value: float
    numerator: float
    entropy: float
    mean: float
    second_moment: float
    j_star: int
    support: tuple
    rel_error: float
    family: str
    parameters: dict = field(default_factory=dict)

    def pmf(self) -> tuple:
        """(support integers, probabilities) of the evaluated prior (floats, sum 1)."""
        lo, hi = self.support
        j = np.arange(lo, hi + 1, dtype=np.float64)
        if self.family == "uniform":
            w = np.ones_like(j)
        else:
            p = self.parameters
            w = np.exp(_logw(j, p["m"], p["s"], p["beta"]))
        return j.astype(np.int64), w / math.fsum(w)


def _sums(lo, hi, m, s, beta, stride):
    """Σw, Σw·logw, Σj·w over the window (stride > 1: midpoint approximation for the search)."""
    W, WL, WJ = [], [], []
    start = lo
    step = stride * _CHUNK
    while start <= hi:
        stop = min(hi + 1, start + step)
        j = np.arange(start, stop, stride, dtype=np.float64) + (stride - 1) / 2.0
        lw = _logw(j, m, s, beta)
        w = np.exp(lw)
        W.append(math.fsum(w))
        WL.append(math.fsum(w * lw))
        WJ.append(math.fsum(w * j))
        start = stop
    return math.fsum(W), math.fsum(WL), math.fsum(WJ), len(W)


def _evaluate(n, r, lo, hi, m, s, beta, stride=1, family="gaussian"):
    W, WL, WJ, chunks = _sums(lo, hi, m, s, beta, stride)
    W *= stride
    WL *= stride
    WJ *= stride
    mean = WJ / W
    js = int(math.floor(mean + 0.5))
    # second moment about j*: a second pass (exactly rounded)
    V = []
    start = lo
    while start <= hi:
        stop = min(hi + 1, start + stride * _CHUNK)
        j = np.arange(start, stop, stride, dtype=np.float64) + (stride - 1) / 2.0
        V.append(math.fsum(np.exp(_logw(j, m, s, beta)) * (j - js) ** 2))
        start = stop
    V = math.fsum(V) * stride / W
    H = math.log(W) - WL / W
    Lterm = math.log(2.0 * math.e * (r * (n + mean) + 0.25))
    num = H - Lterm
    # a-posteriori error bound: per-term relative errors of a few ulps (exp, products,
    # log-weights known analytically up to |logw| ≤ TAIL ulps), exactly rounded fsums.
    abs_num = 16.0 * EPS64 * (TAIL + 4.0 + abs(H) + abs(Lterm) + chunks)
    params = {"m": m, "s": s, "beta": beta}
    if num <= abs_num or V <= 0:
        return PriorEvaluation(0.0, num, H, mean, V, js, (lo, hi), math.inf, family, params)
    rel = abs_num / num + 16.0 * EPS64 * (1 + chunks)
    return PriorEvaluation(num / V * (1.0 - rel), num, H, mean, V, js, (lo, hi), rel, family, params)


def evaluate_prior(n, r, *, m=None, s=None, beta=None) -> PriorEvaluation:
    """(19) for the discrete Gaussian p_j ∝ exp(−(j−m)²/(2s²)) on j ≥ 0 (give m, s) or the
    geometric p_j ∝ exp(−βj) (give beta > 0), truncated where the log-weight drops by
    TAIL below its maximum.

    Notes
    -----
    float64 with exactly rounded sums (math.fsum, in chunks); the returned value is
    rounded down by its a-posteriori relative error bound (~1e-13), so it remains a
    valid lower bound.  Raises ValueError if the support exceeds MAX_SUPPORT.
    """
    n = validate_positive_count(n)
    r = float(strict_r(r))
    if beta is not None:
        if not beta > 0:
            raise ValueError("beta must be > 0")
        m_, s_, b_, fam = 0.0, math.inf, float(beta), "geometric"
    else:
        if s is None or m is None or not s > 0:
            raise ValueError("give m and s > 0, or beta > 0")
        m_, s_, b_, fam = float(m), float(s), 0.0, "gaussian"
    lo, hi = _window(m_, s_, b_)
    if hi - lo + 1 > MAX_SUPPORT:
        raise ValueError(f"support of {hi - lo + 1} integers exceeds MAX_SUPPORT={MAX_SUPPORT}")
    return _evaluate(n, r, lo, hi, m_, s_, b_, 1, fam)


def _search_value(n, r, m, s, beta):
    lo, hi = _window(m, s, beta)
    size = hi - lo + 1
    if size > 50 * MAX_SUPPORT:
        return -math.inf
    stride = max(1, size // _SEARCH_POINTS)
    scale = s if not math.isinf(s) else 1.0 / beta
    if not math.isinf(s) and m < 0:
        scale = min(s, s * s / (-m))
    stride = max(1, min(stride, int(scale / 30)))
    ev = _evaluate(n, r, lo, hi, m, s, beta, stride)
    if ev.numerator > 0:
        return ev.numerator / ev.second_moment
    return ev.numerator


@dataclass(frozen=True)
class OptimisedPrior:
    """The best many-count bound (19) found for one (n, r).

    Attributes
    ----------
    n : int
    r : Fraction
    value : float
        The best valid bound found (max over the candidate priors; 0 when vacuous).
    best : PriorEvaluation or None
        The winning prior (None when the uniform prior (23) won or all are vacuous).
    uniform : UniformBound
        The best uniform-prior bound (23), always among the candidates.
    vacuous : bool
    reason : str
        Why (19) is vacuous, when it is.
    evaluations : int
    """

    n: int
    r: object
    value: float
    best: PriorEvaluation | None
    uniform: UniformBound
    vacuous: bool
    reason: str
    evaluations: int


def optimise_prior(n, r, *, max_eval: int = 300) -> OptimisedPrior:
    """Numerically optimise the prior J in (19) for given n ≥ 1 and 0 < r < 1.

    Notes
    -----
    For r ≥ 1/2 the bound is vacuous for every prior: given EJ = μ the entropy is at
    most (μ+1)log(μ+1) − μ log μ < log(μ+1) + 1 (geometric law), so the bracket of (19)
    is below log((μ+1)/(2r(n+μ) + 1/2)) ≤ 0.  For r < 1/2 a geometric prior with large
    mean makes the bracket positive, so (19) is not vacuous — but its support may exceed
    MAX_SUPPORT when r is close to 1/2 (then reported as not found).  Otherwise see the
    module docstring: search over the Gibbs family (discrete Gaussians on j ≥ 0 and
    geometric laws) and the uniform laws.  Reference: Fitzsimons (2026), Theorem 6.4.
    """
    n = validate_positive_count(n)
    rf = strict_r(r)
    uni = best_uniform_bound(n, rf)
    if rf >= 0.5:
        return OptimisedPrior(n, rf, 0.0, None, uni, True,
                              "r >= 1/2: H(J) < log(EJ+1)+1 makes the bracket of (19) negative for every prior", 0)
    r_ = float(rf)
    evals = 0
    cands = []

    # geometric laws: 1-D golden search over log β
    def geo(lb):
        return _search_value(n, r_, 0.0, math.inf, math.exp(lb))

    best_geo = golden_max(geo, math.log(TAIL / (MAX_SUPPORT - 1)), math.log(20.0), max_iter=60, float64=True)
    evals += 62
    cands.append(("geometric", (0.0, math.inf, math.exp(best_geo.argmax)), best_geo.value))

    # discrete Gaussians on j >= 0: Nelder–Mead over (t = m/s, u = log s) from several starts
    def obj(x):
        t, u = x
        if u > 40 or u < -5:
            return -math.inf
        s_ = math.exp(u)
        return _search_value(n, r_, t * s_, s_, 0.0)

    base = max(1.0, 2.0 * r_ * n)
    starts = [(t, math.log(base * f)) for t in (-1.0, 0.5, 2.0) for f in (0.3, 1.0, 3.0)]
    scored = sorted(((obj(x), x) for x in starts), key=lambda q: -q[0])
    evals += len(starts)
    for _, x0 in scored[:3]:
        x, fx, k = nelder_mead_max(obj, x0, (0.5, 0.5), max_eval=max_eval)
        evals += k
        s_ = math.exp(x[1])
        cands.append(("gaussian", (x[0] * s_, s_, 0.0), fx))

    best_ev = None
    for fam, (m_, s_, b_), score in sorted(cands, key=lambda q: -q[2]):
        if score <= 0:
            continue
        lo, hi = _window(m_, s_, b_)
        if hi - lo + 1 > MAX_SUPPORT:
            continue
        ev = _evaluate(n, r_, lo, hi, m_, s_, b_, 1, fam)
        evals += 1
        if best_ev is None or ev.value > best_ev.value:
            best_ev = ev
        break
    uval = float(uni.value)
    if best_ev is not None and best_ev.value >= uval and best_ev.value > 0:
        return OptimisedPrior(n, rf, best_ev.value, best_ev, uni, False, "", evals)
    if uval > 0:
        return OptimisedPrior(n, rf, uval, None, uni, False, "", evals)
    return OptimisedPrior(
        n, rf, 0.0, None, uni, True,
        f"no prior with support <= {MAX_SUPPORT} found with a positive bracket "
        f"(r < 1/2, so one exists with larger support)",
        evals,
    )
