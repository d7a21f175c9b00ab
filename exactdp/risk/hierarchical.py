"""Two-level (block + block group) disclosure risk, exact (Kazan and Reiter §3.2, §4.2).

Data ``D = (x1*, x2*, y1*)``: the block count, the block-group count and the sum of the
``d`` sibling blocks' noisy counts.  With ``known = x_{1,-t}`` subtracted from ``x1*`` and
``x2*`` (reduced coordinates) and ``X1 ∈ {0, 1}``, the joint posterior is::

    P[X1 = x, X2 = j | D] ∝ p^x (1-p)^(1-x) f1(x1* - x) f2(x2* - j) k(y1* + x - j) 1{j ≥ x}

with the flat prior on ``X2 | X1`` (uniform on ``{X1, X1+1, …}``) and ``k`` the adversary's
model of the ``Y1*`` noise (the paper's discrete-Gaussian approximation with variance
``d·σ1²``, or the exact ``d``-fold convolution).  Because ``X1`` is binary the marginal is
an exact sum over ``X2``; no sampling is needed.  The paper's Gibbs sampler
(:mod:`exactdp.risk.gibbs`) has this joint as its stationary law.

Model variant ``"gibbs-variant"``: the stationary ``X1`` law of the sampler whose ``X1``
update omits ``1{k1 ≤ k2}``.  It is computed exactly as the stationary law of the
two-state chain ``X1 → X2 → X1``.  This is a reconstruction hypothesis: it reproduces
the paper's qualitative Figures 4-6 (``x2 = 1`` an upward outlier, a net gain of about
0.6 points at ``x2 = 1``) whereas the coherent joint posterior gives a much *lower*
probability of a correct decision at ``x2 = 1`` (the flat prior lets ``X1 = 0`` explain a
small ``x2*`` with one more ``X2`` value).

Probabilities of a correct decision marginalise over all ``(x1*, x2*, y1*)`` exactly
(generated with the exact noise laws); the released values outside the summed window
have probability at most ``left_out`` and every other error is bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from exactdp.dgauss.sums import sum_pmf
from exactdp.dgauss.tables import dg_table, subgaussian_cutoff
from exactdp.numerics.bracket import CentredBracket
from exactdp.numerics.exact import InputError
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_LOW, EPS64, VERIFY_DPS, to_mpf
from exactdp.risk._hengine import Engine
from exactdp.risk._hmp import log_odds_mp, posterior_mp
from exactdp.risk._hsetup import DEFAULT_D, MODELS, Y_NOISE_MODELS, HierarchicalSetup
from exactdp.risk._validate import check_int
from exactdp.risk.single import decision as single_decision
from exactdp.risk.single import posterior as single_posterior

__all__ = [
    "HierarchicalSetup",
    "HierarchicalPosterior",
    "DecisionMap",
    "DecisionProbability",
    "hierarchical_posterior",
    "decision_map",
    "decision_probability",
    "decision_curve",
    "DEFAULT_D",
    "MODELS",
    "Y_NOISE_MODELS",
]

_REFINE_DPS = (VERIFY_DPS, 2 * VERIFY_DPS, 4 * VERIFY_DPS)


def _resolve_sign(setup: HierarchicalSetup, x1s: int, x2s: int, y1s: int):
    """Sign of the log-odds in multiprecision (approx kernel); None if still unresolved."""
    if setup.y_noise != "approx":
        return None
    for dps in _REFINE_DPS:
        lo, err, _, _ = log_odds_mp(setup, x1s, x2s, y1s, dps=dps)
        if abs(lo) > err:
            return bool(lo > 0)
    return None


@dataclass(frozen=True)
class HierarchicalPosterior(CentredBracket):
    """Posterior of the target having ``c`` given ``D = (x1*, x2*, y1*)``.

    Attributes
    ----------
    setup : HierarchicalSetup
    x1_star, x2_star, y1_star : int
        The released values (original coordinates).
    posterior : mpf or float
        ``P[X1 = known+1 | D]``.
    risk : mpf or float
        ``posterior / p``.
    single_level_posterior : mpf
        The posterior from ``x1*`` alone (for comparison).
    x2_values : tuple of int
        Support points of the reported ``X2`` posterior (original coordinates).
    x2_probs : tuple
        ``P[X2 = x2_values[i] | D]`` (mass below 1e-30 dropped).
    error_bound : float
        Absolute error bound of ``posterior`` (``error_bound / p`` for ``risk``).
    method : str
        ``"mpmath"`` (approximation kernel, closed-form Gaussian sums) or
        ``"float64"`` (exact kernel; convolution in binary64 with bounded error).
    """

    _CAP, _ARG, _NAME = 1, "", "posterior"

    setup: HierarchicalSetup
    x1_star: int
    x2_star: int
    y1_star: int
    posterior: float | mpmath.mpf
    risk: float | mpmath.mpf
    single_level_posterior: mpmath.mpf
    x2_values: tuple
    x2_probs: tuple
    error_bound: float
    method: str

    @property
    def estimate(self):
        """``posterior``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.posterior


def hierarchical_posterior(setup: HierarchicalSetup, x1_star, x2_star, y1_star, *,
                           dps: int = DPS_ANALYSIS) -> HierarchicalPosterior:
    """Exact posterior ``P[X1 = known+1 | x1*, x2*, y1*]`` by summation over ``X2``.

    Parameters
    ----------
    setup : HierarchicalSetup
    x1_star, x2_star, y1_star : int
        Released values.
    dps : int
        Working precision for the approximation kernel.

    Returns
    -------
    HierarchicalPosterior

    Notes
    -----
    Approximation kernel: completing the square turns each sum over ``X2`` into a sum of
    ``exp(-A (X2 - m)²)``; truncated with the relative tail bound
    ``exp(-A(K+1)²)/(1 - exp(-2A(K+1)))`` and evaluated at ``dps`` digits (error
    ≈ 10^-dps).  Exact kernel: the ``d``-fold convolution in binary64
    (:func:`exactdp.dgauss.sums.sum_pmf`, relative error ≤ ``(d + (d−1)(2K+2))·EPS64``) and
    log-sum-exp with the bounds of :mod:`._hengine` (≈1e-12).
    Reference: Kazan and Reiter (arXiv 2204.04253), eqs. (3.7)-(3.9), Tables 7-8.
    """
    if not isinstance(setup, HierarchicalSetup):
        raise InputError("setup", setup, "must be a HierarchicalSetup")
    x1s = check_int(x1_star, "x1_star") - setup.known
    x2s = check_int(x2_star, "x2_star") - setup.known
    y1s = check_int(y1_star, "y1_star")
    single = single_posterior(x1s, setup.p, setup.rho1, convention=setup.convention).posterior
    if setup.y_noise == "approx":
        res = posterior_mp(setup, x1s, x2s, y1s, dps=dps)
        with mpmath.workdps(dps):
            post = res.posterior
            risk = post / (to_mpf(setup.p))
            vals, probs = [], []
            for i, pr in enumerate(res.x2_probs):
                if pr > mpmath.mpf(10) ** -30:
                    vals.append(res.x2_lo + i + setup.known)
                    probs.append(pr)
            err = float(res.log_odds_error_bound) * 0.25 + 10.0 ** (-(dps - 5))
        return HierarchicalPosterior(
            setup, x1s + setup.known, x2s + setup.known, y1s, post, risk, single,
            tuple(vals), tuple(probs), err, "mpmath",
        )
    eng = Engine(setup)
    row = eng.row(x2s, np.array([x1s]), np.array([y1s]))
    lo = float(row.log_odds[0, 0])
    err_lo = float(row.error_bound[0, 0])
    post = 1.0 / (1.0 + math.exp(-lo))
    err = min(1.0, post * (1 - post) * math.expm1(err_lo) * 1.01 + 4 * EPS64)
    vals, probs = _x2_marginal_float(eng, setup, x1s, x2s, y1s, post)
    return HierarchicalPosterior(
        setup, x1s + setup.known, x2s + setup.known, y1s, post, post / float(setup.p), single,
        tuple(v + setup.known for v in vals), tuple(probs), err, "float64",
    )


def _x2_marginal_float(eng: Engine, setup, x1s, x2s, y1s, pi1):
    """X2 posterior (reduced coordinates) in binary64 for the exact kernel."""
    X = np.arange(0, max(1, x2s + eng.K2) + 1, dtype=np.int64)
    lg = -eng.a2 * (x2s - X).astype(np.float64) ** 2
    lk0, _ = eng._logk(np.full(X.shape, y1s) - X)
    lk1, _ = eng._logk(np.full(X.shape, y1s) + 1 - X)
    t0 = np.exp(lg + lk0 - np.max(lg + lk0))
    t1 = np.where(X >= 1, np.exp(lg + lk1 - np.max(lg + lk1)), 0.0)
    q0 = t0 / t0.sum()
    q1 = t1 / t1.sum()
    # joint: P[X2 = j | X1 = x, D] = q_x(j); gibbs-variant: the law after the X2 update
    mix = (1 - pi1) * q0 + pi1 * q1
    keep = mix > 1e-30
    return [int(v) for v in X[keep]], [float(v) for v in mix[keep]]


@dataclass(frozen=True)
class DecisionMap:
    """Adversary's decisions over a grid of ``(x1*, x2*, y1*)`` (the paper's Figure 4).

    Attributes
    ----------
    setup : HierarchicalSetup
    x1_stars, x2_stars, y1_stars : tuple of int
        Grid axes (original coordinates).
    log_odds : numpy.ndarray
        Posterior log-odds, shape ``(len(x1_stars), len(x2_stars), len(y1_stars))``.
    log_odds_error_bound : numpy.ndarray
        Absolute error bounds of ``log_odds`` (binary64 evaluation).
    decide_has : numpy.ndarray of bool
        Decision "has c" (posterior > 1/2), certified (ambiguous cells re-evaluated in
        multiprecision).
    certified : numpy.ndarray of bool
        False where the sign could not be certified (only possible for the exact kernel).
    single_decide_has : tuple of bool
        Decision from ``x1*`` alone, per ``x1_stars``.
    cell_prob : numpy.ndarray or None
        ``P[X1* = x1*, X2* = x2*, Y1* = y1* | truth]`` if a truth was given.
    truth : tuple or None
        ``(x1, x2, y1)`` used for ``cell_prob`` (original coordinates).
    """

    setup: HierarchicalSetup
    x1_stars: tuple
    x2_stars: tuple
    y1_stars: tuple
    log_odds: np.ndarray
    log_odds_error_bound: np.ndarray
    decide_has: np.ndarray
    certified: np.ndarray
    single_decide_has: tuple
    cell_prob: object
    truth: object


def _truth(setup: HierarchicalSetup, x2, target_has: bool):
    x2 = check_int(x2, "x2")
    x1 = setup.known + (1 if target_has else 0)
    if x2 < x1:
        raise InputError("x2", x2, f"must be ≥ the true block count x1 = {x1}")
    return x1, x2, x2 - x1


def decision_map(
    setup: HierarchicalSetup,
    x1_stars=(0, 1),
    x2_stars=range(-3, 6),
    y1_stars=range(-30, 31),
    *,
    truth_x2=None,
    target_has: bool = True,
) -> DecisionMap:
    """Decisions and posterior log-odds on a grid; optional cell probabilities.

    Parameters
    ----------
    setup : HierarchicalSetup
    x1_stars, x2_stars, y1_stars : iterables of int
        Grid (original coordinates); defaults are the paper's Figure 4 region with
        ``known = 0``.
    truth_x2 : int, optional
        If given, ``cell_prob`` holds the probability of each cell when the truth is
        ``x1 = known + target_has``, ``x2 = truth_x2``, ``y1 = x2 - x1``.
    target_has : bool

    Returns
    -------
    DecisionMap

    Notes
    -----
    binary64 log-sum-exp with per-cell error bounds; every cell whose sign is not certified
    is re-evaluated with mpmath at 60/120/240 digits (approximation kernel).
    """
    x1v = np.array([check_int(v, "x1_star") for v in x1_stars], dtype=np.int64)
    x2v = np.array([check_int(v, "x2_star") for v in x2_stars], dtype=np.int64)
    yv = np.array([check_int(v, "y1_star") for v in y1_stars], dtype=np.int64)
    eng = Engine(setup)
    k = setup.known
    lo = np.empty((x1v.size, x2v.size, yv.size))
    er = np.empty_like(lo)
    for j, x2s in enumerate(x2v):
        row = eng.row(int(x2s) - k, x1v - k, yv)
        lo[:, j, :] = row.log_odds
        er[:, j, :] = row.error_bound
    dec = lo > 0
    cert = np.abs(lo) > er
    for i, j, m in zip(*np.nonzero(~cert)):
        sign = _resolve_sign(setup, int(x1v[i]) - k, int(x2v[j]) - k, int(yv[m]))
        if sign is not None:
            dec[i, j, m] = sign
            cert[i, j, m] = True
    thr = single_decision(setup.p, setup.rho1, convention=setup.convention, known=k).threshold
    single = tuple(bool(v >= thr) for v in x1v)
    cell = None
    truth = None
    if truth_x2 is not None:
        x1, x2, y1 = _truth(setup, truth_x2, target_has)
        truth = (x1, x2, y1)
        f1 = dg_table(setup.a1, dps=DPS_LOW)
        f2 = dg_table(setup.a2, dps=DPS_LOW)
        h = sum_pmf(setup.a1, setup.d)
        p1 = np.array([float(f1.pmf(int(v) - x1)) for v in x1v])
        p2 = np.array([float(f2.pmf(int(v) - x2)) for v in x2v])
        py = h(yv - y1)
        cell = p1[:, None, None] * p2[None, :, None] * py[None, None, :]
    for arr in (lo, er, dec, cert):
        arr.setflags(write=False)
    if cell is not None:
        cell.setflags(write=False)
    return DecisionMap(
        setup, tuple(int(v) for v in x1v), tuple(int(v) for v in x2v), tuple(int(v) for v in yv),
        lo, er, dec, cert, single, cell, truth,
    )


@dataclass(frozen=True)
class DecisionProbability(CentredBracket):
    """Probability that the adversary decides correctly, marginalised exactly.

    Attributes
    ----------
    setup : HierarchicalSetup
    truth : tuple of int
        ``(x1, x2, y1)`` in original coordinates.
    target_has : bool
        The truth is "the target has c" (``x1 = known + 1``, the paper's case).
    estimate : float
        ``P[correct decision | truth]`` summed over the window (``value`` is its certified
        upper end, ``estimate + error_bound`` capped at 1).
    single_level : mpf
        The same probability when the adversary uses ``x1*`` only.
    changed_correct, changed_incorrect : float
        Probability of the released values where the hierarchy turns a wrong single-level
        decision into a right one, and vice versa (``estimate - single_level`` equals their
        difference up to the bounds).
    left_out : float
        Bound on the probability of the released values outside the window.
    rounding_bound : float
        Bound on the binary64 error of the summed value.
    ambiguous_mass : float
        Probability of the values whose decision could not be certified (counted in
        ``error_bound``; zero unless a tie cannot be resolved).
    error_bound : float
        ``left_out + rounding_bound + ambiguous_mass``: ``|estimate - truth| ≤ error_bound``.
    """

    _CAP, _ARG, _NAME = 1, "", "P[correct decision]"

    setup: HierarchicalSetup
    truth: tuple
    target_has: bool
    estimate: float
    single_level: object
    changed_correct: float
    changed_incorrect: float
    left_out: float
    rounding_bound: float
    ambiguous_mass: float
    error_bound: float


def decision_probability(setup: HierarchicalSetup, x2, *, target_has: bool = True,
                         eps: float = 1e-14) -> DecisionProbability:
    """``P[the adversary's decision is correct | x1, x2, y1 = x2 - x1]``, exact.

    Parameters
    ----------
    setup : HierarchicalSetup
    x2 : int
        True block-group count (original coordinates, ≥ x1).
    target_has : bool
        Truth ``x1 = known + 1`` (default) or ``x1 = known``.
    eps : float
        Share of left-out probability allowed for each of the three released values.

    Returns
    -------
    DecisionProbability

    Notes
    -----
    ``Σ_{x2*} Σ_{y1*} Σ_{x1*} f2(x2*-x2) h(y1*-y1) f1(x1*-x1) 1{decision correct}`` with
    the exact data laws (``h`` = ``d``-fold convolution).  Windows: ``|x1*-x1| ≤ K1``,
    ``|x2*-x2| ≤ K2`` by the discrete Gaussian tail bound, ``|y1*-y1| ≤ Ky`` by the
    sub-Gaussian bound ``2 exp(-a1 Ky²/d)``; the sum of the three shares plus the
    convolution deficit is ``left_out``.  Decisions come from the certified log-odds of
    :func:`decision_map`'s engine (ambiguous ones re-evaluated in multiprecision).  This
    replaces the paper's Monte Carlo estimate (Figure 5, 10^6 samples per point).
    """
    x1, x2, y1 = _truth(setup, x2, target_has)
    k = setup.known
    log_eps = math.log(eps)
    f1 = dg_table(setup.a1, dps=DPS_LOW, log_eps=log_eps)
    f2 = dg_table(setup.a2, dps=DPS_LOW, log_eps=log_eps)
    h = sum_pmf(setup.a1, setup.d)
    Ky = subgaussian_cutoff(setup.a1, setup.d, log_eps)
    with mpmath.workdps(DPS_LOW):
        left_out = float(f1.outside + f2.outside) + math.exp(log_eps) + h.deficit
    w1 = f1.floats()
    w2 = f2.floats()
    x1v = np.arange(x1 - f1.K, x1 + f1.K + 1, dtype=np.int64)
    yv = np.arange(y1 - Ky, y1 + Ky + 1, dtype=np.int64)
    wy = h(yv - y1)
    sd = single_decision(setup.p, setup.rho1, convention=setup.convention, known=k)
    single_has = x1v >= sd.threshold
    single_ok = single_has if target_has else ~single_has
    eng = Engine(setup)
    parts, cc, ci, amb = [], [], [], []
    for j in range(-f2.K, f2.K + 1):
        x2s = x2 + j
        row = eng.row(x2s - k, x1v - k, yv)
        lo, er = row.log_odds, row.error_bound
        dec = lo > 0
        cert = np.abs(lo) > er
        if not cert.all():
            for i, m in zip(*np.nonzero(~cert)):
                sign = _resolve_sign(setup, int(x1v[i]) - k, x2s - k, int(yv[m]))
                if sign is not None:
                    dec[i, m] = sign
                    cert[i, m] = True
        ok = dec if target_has else ~dec
        W = w1[:, None] * wy[None, :]
        wj = float(w2[j + f2.K])
        good = ok & cert
        parts.append(wj * float(np.sum(W[good])))
        cc.append(wj * float(np.sum(W[good & ~single_ok[:, None]])))
        ci.append(wj * float(np.sum(W[cert & ~ok & single_ok[:, None]])))
        amb.append(wj * float(np.sum(W[~cert])))
    value = math.fsum(parts)
    n = w1.size * wy.size
    rounding = 1.01 * (h.rel_error + (math.log2(n) + 24) * EPS64) * max(value, 1e-300) + 1e-300
    ambiguous = math.fsum(amb) * (1 + 1e-10)
    return DecisionProbability(
        setup=setup,
        truth=(x1, x2, y1),
        target_has=bool(target_has),
        estimate=value,
        single_level=sd.p_correct if target_has else sd.p_correct_if_lacks,
        changed_correct=math.fsum(cc),
        changed_incorrect=math.fsum(ci),
        left_out=left_out,
        rounding_bound=rounding,
        ambiguous_mass=ambiguous,
        error_bound=left_out + rounding + ambiguous,
    )


def decision_curve(setup: HierarchicalSetup, x2_values, *, target_has: bool = True, eps: float = 1e-14) -> tuple:
    """:func:`decision_probability` for each true block-group count (the paper's Figure 5).

    Returns
    -------
    tuple of DecisionProbability

    Notes
    -----
    Each point is an exact marginalisation with its own ``left_out`` and ``error_bound``
    (≈ 3e-13 at the census budgets); the paper estimated these with 10^6 Monte Carlo
    samples per point.  Reference: Kazan and Reiter, §4.2, Figure 5.
    """
    return tuple(decision_probability(setup, x2, target_has=target_has, eps=eps) for x2 in x2_values)
