"""The paper's Gibbs sampler for the two-level posterior (Kazan and Reiter §3.2).

Full conditionals (reduced coordinates, ``known`` subtracted)::

    P[X1 = x | X2 = j, D] ∝ p^x (1-p)^(1-x) f1(x1* - x) k(y1* + x - j) 1{x ≤ j}     (3.8)
    P[X2 = j | X1 = x, D] ∝ f2(x2* - j) k(y1* + x - j) 1{j ≥ x}                    (3.9)

``X1`` is Bernoulli; ``X2`` is drawn by inverse CDF over a grid.  With
``setup.model == "gibbs-variant"`` the indicator in (3.8) is dropped (see
:mod:`exactdp.risk.hierarchical`).  Many independent chains run in parallel (vectorised
numpy, one seeded :class:`numpy.random.Generator`); the standard error is the spread of
the per-chain means, so it needs no autocorrelation estimate.

This module exists to show that the exact posterior of
:func:`exactdp.risk.hierarchical.hierarchical_posterior` is what the sampler estimates;
use the exact function for results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from exactdp.dgauss.mp import half_tail_sum_bound
from exactdp.numerics.exact import InputError
from exactdp.numerics.precision import DPS_FLOAT64
from exactdp.risk._hengine import Engine
from exactdp.risk._hsetup import HierarchicalSetup
from exactdp.risk._validate import check_int, check_positive_int

__all__ = ["GibbsResult", "gibbs_posterior"]


@dataclass(frozen=True)
class GibbsResult:
    """Monte Carlo estimate of ``P[X1 = known+1 | D]`` from the Gibbs sampler.

    Attributes
    ----------
    setup : HierarchicalSetup
    x1_star, x2_star, y1_star : int
    posterior : float
        Mean of the ``X1`` indicator over all kept draws of all chains.
    standard_error : float
        Standard deviation of the per-chain means divided by ``sqrt(n_chains)``.
    n_chains, n_samples, burn_in : int
        Chains, kept draws per chain, discarded draws per chain.
    x2_values, x2_freq : tuple
        Empirical posterior of ``X2`` (original coordinates).
    truncation_bound : float
        Union bound on the probability that any ``X2`` draw of the run would have left
        the finite sampling grid under the untruncated conditional (total-variation
        distance between this run and an ideal one).
    """

    setup: HierarchicalSetup
    x1_star: int
    x2_star: int
    y1_star: int
    posterior: float
    standard_error: float
    n_chains: int
    n_samples: int
    burn_in: int
    x2_values: tuple
    x2_freq: tuple
    truncation_bound: float


def gibbs_posterior(
    setup: HierarchicalSetup,
    x1_star,
    x2_star,
    y1_star,
    *,
    n_samples: int = 1000,
    burn_in: int = 100,
    n_chains: int = 64,
    rng: np.random.Generator | None = None,
) -> GibbsResult:
    """Run the paper's Gibbs sampler (many vectorised chains).

    Parameters
    ----------
    setup : HierarchicalSetup
        ``setup.model`` selects the ``X1`` update (with or without ``1{x ≤ j}``);
        ``setup.y_noise`` the ``Y1*`` kernel.
    x1_star, x2_star, y1_star : int
        Released values.
    n_samples, burn_in, n_chains : int
        Kept draws per chain, discarded draws per chain, number of chains.
    rng : numpy.random.Generator, optional
        Source of randomness (default ``numpy.random.default_rng()``); pass a seeded one
        for reproducibility.

    Returns
    -------
    GibbsResult

    Notes
    -----
    The ``X2`` grid is ``0 … max(x2*, 0) + K2`` with ``Σ_{j>K2} exp(-a2 j²) ≤ e^-700``;
    the conditional mass beyond it is bounded by that tail divided by the grid mass and
    enters ``truncation_bound``.  Monte Carlo error: ``standard_error`` (chains are
    independent).  Reference: Kazan and Reiter (arXiv 2204.04253), §3.2 and §S3.
    """
    if not isinstance(setup, HierarchicalSetup):
        raise InputError("setup", setup, "must be a HierarchicalSetup")
    n_samples = check_positive_int(n_samples, "n_samples")
    n_chains = check_positive_int(n_chains, "n_chains")
    burn_in = check_int(burn_in, "burn_in")
    if burn_in < 0:
        raise InputError("burn_in", burn_in, "must be ≥ 0")
    if n_chains < 2:
        raise InputError("n_chains", n_chains, "must be ≥ 2 (the standard error uses the spread of chain means)")
    rng = np.random.default_rng() if rng is None else rng
    k = setup.known
    x1s = check_int(x1_star, "x1_star") - k
    x2s = check_int(x2_star, "x2_star") - k
    y1s = check_int(y1_star, "y1_star")
    eng = Engine(setup)
    J = np.arange(0, max(x2s, 0) + eng.K2 + 1, dtype=np.int64)
    cdfs, log_trunc, p1 = _conditionals(setup, eng, J, x1s, x2s, y1s)
    sums, x2_counts = _run_chains(rng, float(setup.p), p1, cdfs, n_chains, burn_in, n_samples)
    means = sums / n_samples
    post = float(means.mean())
    se = float(means.std(ddof=1) / math.sqrt(n_chains))
    keep = x2_counts > 0
    freq = x2_counts[keep] / x2_counts.sum()
    return GibbsResult(
        setup=setup,
        x1_star=x1s + k,
        x2_star=x2s + k,
        y1_star=y1s,
        posterior=post,
        standard_error=se,
        n_chains=n_chains,
        n_samples=n_samples,
        burn_in=burn_in,
        x2_values=tuple(int(v) + k for v in J[keep]),
        x2_freq=tuple(float(v) for v in freq),
        truncation_bound=min(1.0, max(1e-300, math.exp(min(
            0.0, math.log(2.0 * (burn_in + n_samples + 1) * n_chains) + log_trunc)))),
    )


def _conditionals(setup: HierarchicalSetup, eng: Engine, J, x1s: int, x2s: int, y1s: int):
    """The full conditionals on the ``X2`` grid ``J`` (reduced coordinates): the CDF of
    (3.9) over ``J`` given ``X1 = 0`` and given ``X1 = 1``, the log of the bound on the
    conditional mass left off the grid, and ``P[X1 = 1 | X2 = j]`` (3.8) for each j."""
    lg = -eng.a2 * (x2s - J).astype(np.float64) ** 2
    lk0, _ = eng._logk(y1s - J)
    lk1, _ = eng._logk(y1s + 1 - J)
    cdfs, log_trunc = [], -math.inf
    with mpmath.workdps(DPS_FLOAT64):
        log_tail = float(mpmath.log(half_tail_sum_bound(setup.a2, int(J[-1] - x2s))))
    for x, lk in ((0, lk0), (1, lk1)):
        lw = np.where(J >= x, lg + lk, -np.inf)
        M = float(np.max(lw))
        w = np.exp(lw - M)
        tot = float(w.sum())
        cdfs.append(np.cumsum(w) / tot)
        # the kernel is ≤ 1, so the left-out conditional mass is ≤ tail / (grid mass)
        log_trunc = max(log_trunc, log_tail - M - math.log(tot))
    # P[X1 = 1 | X2 = j]
    base = eng.lpo + eng.a1 * (2 * x1s - 1)
    with np.errstate(invalid="ignore", over="ignore"):
        lam = base + lk1 - lk0
        p1 = 1.0 / (1.0 + np.exp(-lam))
    p1 = np.where(np.isnan(p1), 0.0, p1)
    if setup.model == "joint":
        p1 = np.where(J >= 1, p1, 0.0)
    return cdfs, log_trunc, p1


def _run_chains(rng: np.random.Generator, p: float, p1, cdfs, n_chains: int, burn_in: int, n_samples: int):
    """``n_chains`` chains side by side, started from the prior (``X1`` Bernoulli(p)):
    each chain's sum of its kept ``X1`` draws, and the counts of the kept ``X2`` draws
    over the grid (indices into the grid of ``cdfs``)."""
    size = cdfs[0].size

    def draw_x2(x1):
        u = rng.random(x1.size)
        j0 = np.searchsorted(cdfs[0], u, side="right")
        j1 = np.searchsorted(cdfs[1], u, side="right")
        j = np.where(x1 == 1, j1, j0)
        return np.minimum(j, size - 1)

    x1 = (rng.random(n_chains) < p).astype(np.int64)
    x2 = draw_x2(x1)
    sums = np.zeros(n_chains)
    x2_counts = np.zeros(size, dtype=np.int64)
    for t in range(burn_in + n_samples):
        x1 = (rng.random(n_chains) < p1[x2]).astype(np.int64)
        x2 = draw_x2(x1)
        if t >= burn_in:
            sums += x1
            x2_counts += np.bincount(x2, minlength=size)
    return sums, x2_counts
