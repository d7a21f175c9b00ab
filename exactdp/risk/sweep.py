"""Sweeps over ρ1 (single level), ρ2 (two levels) and ℓ (uniqueness attack).

Each row is a frozen dataclass carrying its value and error bound; the functions only
loop over the exact computations of :mod:`.single`, :mod:`.hierarchical` and
:mod:`.uniqueness`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.numerics.bracket import CentredBracket
from exactdp.numerics.precision import DPS_LOW, to_mpf
from exactdp.risk._hsetup import HierarchicalSetup
from exactdp.risk._validate import check_prior, check_rho
from exactdp.risk.hierarchical import decision_probability
from exactdp.risk.single import DEFAULT_PRIORS, decision
from exactdp.risk.uniqueness import uniqueness_curve

__all__ = [
    "Rho1Row",
    "Rho2Row",
    "default_rho1_grid",
    "default_rho2_grid",
    "sweep_rho1",
    "sweep_rho2",
    "sweep_ell",
]


def _times(x, frac: Fraction, dps: int):
    with mpmath.workdps(dps):
        return x * to_mpf(frac)


def default_rho1_grid() -> tuple:
    """ρ1 from 1/100 to 10: steps of 1/100 up to 1, of 1/10 up to 10 (exact rationals)."""
    return tuple(Fraction(k, 100) for k in range(1, 101)) + tuple(Fraction(k, 10) for k in range(11, 101))


def default_rho2_grid() -> tuple:
    """ρ2 on a log-like rational grid from 1/100 to 100 (the paper's Figure 6 range)."""
    mant = (1, 2, 5)
    out = []
    for e in range(-2, 2):
        for m in mant:
            out.append(Fraction(m) * Fraction(10) ** e)
    out.append(Fraction(100))
    return tuple(out)


@dataclass(frozen=True)
class Rho1Row(CentredBracket):
    """Single-level results at one (ρ1, p).

    Attributes
    ----------
    rho1, p : Fraction
    convention : str
    threshold : int
        Decision threshold x̃* (known = 0).
    p_correct : mpf
        P[decide "has c" | has c].
    expected_posterior, expected_risk : mpf
        Given the target has c.
    error_bound : mpf
        Absolute bound for ``p_correct`` and ``expected_posterior``.
    risk_error_bound : mpf
        Absolute bound for ``expected_risk``.
    """

    _CAP, _ARG, _NAME = 1, "rho1", "P[correct decision]"

    rho1: Fraction
    p: Fraction
    convention: str
    threshold: int
    p_correct: mpmath.mpf
    expected_posterior: mpmath.mpf
    expected_risk: mpmath.mpf
    error_bound: mpmath.mpf
    risk_error_bound: mpmath.mpf

    @property
    def estimate(self):
        """``p_correct``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.p_correct


def sweep_rho1(rhos=None, priors=DEFAULT_PRIORS, *, convention: str = "paper", dps: int = DPS_LOW) -> tuple:
    """Expected posterior/risk and decision probability over a grid of ρ1 (Figures 2-3).

    Parameters
    ----------
    rhos : iterable of rationals, optional
        Default :func:`default_rho1_grid`.
    priors : iterable of rationals
        Default the paper's five adversaries.
    convention : {"paper", "production"}
    dps : int
        Working precision of the sums.

    Returns
    -------
    tuple of Rho1Row
        Ordered by ρ1 then by prior.

    Notes
    -----
    Each row is :func:`exactdp.risk.single.decision` (which includes the expected risk);
    errors are the stated truncation bounds plus 10^-(dps-6).
    """
    rhos = default_rho1_grid() if rhos is None else tuple(check_rho(r, "rho1") for r in rhos)
    priors = tuple(check_prior(p) for p in priors)
    rows = []
    for rho in rhos:
        for p in priors:
            d = decision(p, rho, convention=convention, dps=dps)
            rows.append(
                Rho1Row(
                    rho1=Fraction(rho),
                    p=p,
                    convention=convention,
                    threshold=d.threshold,
                    p_correct=d.p_correct,
                    expected_posterior=_times(d.expected_risk, p, dps),
                    expected_risk=d.expected_risk,
                    error_bound=d.error_bound,
                    risk_error_bound=d.expected_risk_error_bound,
                )
            )
    return tuple(rows)


@dataclass(frozen=True)
class Rho2Row(CentredBracket):
    """Two-level probability of a correct decision at one (ρ2, x2).

    Attributes
    ----------
    rho2 : Fraction
    x2 : int
        True block-group count.
    estimate : float
        P[correct | x1 = known+1, x2, y1 = x2 - x1] (``value`` is its certified upper end).
    single_level : mpf
        The probability without hierarchical information.
    error_bound, left_out : float
    """

    _CAP, _ARG, _NAME = 1, "rho2", "P[correct decision]"

    rho2: Fraction
    x2: int
    estimate: float
    single_level: mpmath.mpf
    error_bound: float
    left_out: float


def sweep_rho2(setup: HierarchicalSetup, rho2s=None, x2_values=(1, 10, 100), *, eps: float = 1e-14) -> tuple:
    """Probability of a correct decision vs ρ2 for a few true ``x2`` (the paper's Figure 6).

    Parameters
    ----------
    setup : HierarchicalSetup
        ``rho2`` is replaced by each grid value.
    rho2s : iterable of rationals, optional
        Default :func:`default_rho2_grid`.
    x2_values : iterable of int
    eps : float
        Left-out share per released value (see
        :func:`exactdp.risk.hierarchical.decision_probability`).

    Returns
    -------
    tuple of Rho2Row

    Notes
    -----
    Each row is :func:`exactdp.risk.hierarchical.decision_probability` (exact
    marginalisation; ``left_out`` and ``error_bound`` per row).  Reference: Kazan and
    Reiter, §4.2, Figure 6.
    """
    rho2s = default_rho2_grid() if rho2s is None else tuple(check_rho(r, "rho2") for r in rho2s)
    rows = []
    for r2 in rho2s:
        s = setup.replace(rho2=r2)
        for x2 in x2_values:
            dp = decision_probability(s, x2, eps=eps)
            rows.append(Rho2Row(Fraction(r2), dp.truth[1], dp.estimate, dp.single_level, dp.error_bound, dp.left_out))
    return tuple(rows)


def sweep_ell(level_rhos, priors=DEFAULT_PRIORS, *, convention: str = "paper") -> tuple:
    """ℓ-level uniqueness attack for ℓ = 1..len(level_rhos) and each prior (Figure 7).

    Returns
    -------
    tuple of :class:`exactdp.risk.uniqueness.UniquenessResult`
        Ordered by prior then by ℓ.

    Notes
    -----
    :func:`exactdp.risk.uniqueness.uniqueness_curve` per prior (moment grid and
    meet-in-the-middle; error bounds per row).  Reference: Kazan and Reiter, supplement
    §S1.3, Figure 7.
    """
    out: list = []
    for p in priors:
        out.extend(uniqueness_curve(p, level_rhos, convention=convention))
    return tuple(out)
