"""Single-level disclosure risk of one noisy count (Kazan and Reiter, §3.1).

Model: the adversary knows ``x_{1,-t} = known`` (the count of the other residents of the
block with characteristics ``c``) and gives prior probability ``p`` to "the target has
``c``", i.e. ``X1 = known + 1``.  The release is ``X1* = X1 + E``, ``E ~ DG(0, σ²)``
with ``P[E = z] ∝ exp(-a z²)`` (``a = ρ`` in the paper's convention, ``ρ/2`` in the
production one).  With ``u = x* - known``:

* posterior  ``P[X1 = known+1 | X1* = x*] = p / (p + (1-p) exp(-a(2u-1)))``;
* risk ratio ``R(x*) = posterior / p``;
* Bayes decision (0-1 loss): decide "has c" iff posterior > 1/2, i.e. iff ``x* ≥ x̃*`` with
  ``x̃* = known + ⌊1/2 + log((1-p)/p)/(2a)⌋ + 1`` (no ties: ``a(2u-1)`` is rational and
  ``log((1-p)/p)`` is 0 or transcendental by Lindemann–Weierstrass).

All values are exact sums evaluated in mpmath inside ``workdps``; every result carries
the truncation bound of the sums and an overall absolute error bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.dgauss.conventions import CONVENTIONS, check_convention, coefficient
from exactdp.dgauss.tables import dg_table
from exactdp.numerics.bracket import CentredBracket
from exactdp.numerics.precision import DPS_RESULT, to_mpf
from exactdp.risk._validate import check_int, check_prior, check_rho

__all__ = [
    "DEFAULT_PRIORS",
    "DEFAULT_DPS",
    "PosteriorPoint",
    "ExpectedRisk",
    "Decision",
    "posterior",
    "posterior_curve",
    "expected_risk",
    "decision",
    "log_prior_odds",
    "convention_label",
]

#: The five adversaries of the paper: 1/2, 1/5, 1/10, 1/50 and 1/864 (uniform over the
#: 864 cells of the 1940 GVHR query).
DEFAULT_PRIORS = (Fraction(1, 2), Fraction(1, 5), Fraction(1, 10), Fraction(1, 50), Fraction(1, 864))

#: Working precision (decimal digits) of the single-level sums.
DEFAULT_DPS = DPS_RESULT


def _rounding(dps: int):
    """Allowance for the rounding of a few dozen mpmath operations at ``dps`` digits."""
    return mpmath.mpf(10) ** (-(dps - 6))


def log_prior_odds(p: Fraction):
    """``log(p/(1-p))`` at the current precision."""
    return mpmath.log(to_mpf(p)) - mpmath.log(to_mpf(1 - p))


def _posterior_u(u: int, p: Fraction, a):
    """Posterior of "has c" when ``x* - known = u`` (current precision; a is mpf)."""
    q = to_mpf((1 - p) / p)
    return 1 / (1 + q * mpmath.exp(-a * (2 * u - 1)))


@dataclass(frozen=True)
class PosteriorPoint(CentredBracket):
    """Adversary's posterior at one released value ``x*``.

    Attributes
    ----------
    x_star, known : int
        Released count and the adversary's known count ``x_{1,-t}``.
    p, rho : Fraction
    convention : str
    posterior : mpf
        ``P[X1 = known+1 | X1* = x*]``.
    risk : mpf
        ``posterior / p``.
    prob_if_has, prob_if_lacks : mpf
        ``P[X1* = x* | X1 = known+1]`` and ``P[X1* = x* | X1 = known]``.
    truncation_bound : mpf
        Bound on the noise mass outside the summed range (affects the two probabilities
        only, each over-estimated by a relative amount ≤ this).
    error_bound : mpf
        Absolute error bound of ``posterior``, ``prob_if_has`` and ``prob_if_lacks``;
        ``risk`` is accurate to ``error_bound / p``.
    """

    _CAP, _ARG, _NAME = 1, "x_star", "posterior"

    x_star: int
    known: int
    p: Fraction
    rho: Fraction
    convention: str
    posterior: mpmath.mpf
    risk: mpmath.mpf
    prob_if_has: mpmath.mpf
    prob_if_lacks: mpmath.mpf
    truncation_bound: mpmath.mpf
    error_bound: mpmath.mpf

    @property
    def estimate(self):
        """``posterior``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.posterior


def posterior(x_star, p, rho, *, convention: str = "paper", known=0, dps: int = DEFAULT_DPS) -> PosteriorPoint:
    """Posterior, risk ratio and release probabilities at ``X1* = x_star``.

    Parameters
    ----------
    x_star : int
        Released noisy count.
    p : rational
        Prior probability that the target has ``c`` (0 < p < 1).
    rho : rational
        zCDP budget of the count.
    convention : {"paper", "production"}
    known : int
        The adversary's known count ``x_{1,-t}``; everything shifts by it.
    dps : int
        Working precision.

    Returns
    -------
    PosteriorPoint

    Notes
    -----
    Closed form ``p / (p + (1-p) exp(-a(2u-1)))`` with ``u = x* - known`` (the
    normaliser of the discrete Gaussian cancels); the release probabilities are
    ``exp(-a z²)/Z(a)`` with ``Z`` summed over ``|z| ≤ K`` and the tail bound of
    :mod:`exactdp.dgauss.tables`.  Error ≤ truncation + 10^-(dps-6).  Reference: Kazan and
    Reiter (arXiv 2204.04253), eqs. (3.1)-(3.2).
    """
    x_star = check_int(x_star, "x_star")
    known = check_int(known, "known")
    p = check_prior(p)
    rho = check_rho(rho, "rho1")
    a = coefficient(rho, convention)
    table = dg_table(a, dps=dps)
    u = x_star - known
    with mpmath.workdps(dps):
        am = to_mpf(a)
        post = _posterior_u(u, p, am)
        outside = table.outside
        return PosteriorPoint(
            x_star=x_star,
            known=known,
            p=p,
            rho=rho,
            convention=convention,
            posterior=post,
            risk=post / to_mpf(p),
            prob_if_has=table.pmf(u - 1),
            prob_if_lacks=table.pmf(u),
            truncation_bound=outside,
            error_bound=outside + _rounding(dps),
        )


def posterior_curve(x_stars, p, rho, *, convention: str = "paper", known=0, dps: int = DEFAULT_DPS) -> tuple:
    """:func:`posterior` for each value of ``x_stars``.

    Returns
    -------
    tuple of PosteriorPoint

    Notes
    -----
    Closed form per point, as in :func:`posterior` (error ≤ truncation + 10^-(dps-6)).
    Reference: Kazan and Reiter, Figure 1 and Table 4.
    """
    return tuple(posterior(x, p, rho, convention=convention, known=known, dps=dps) for x in x_stars)


@dataclass(frozen=True)
class ExpectedRisk(CentredBracket):
    """Posterior and risk averaged over the release, given the truth.

    Attributes
    ----------
    p, rho : Fraction
    convention : str
    target_has : bool
        True: average over ``X1* ~ known+1+E`` (the target has ``c``, the paper's case);
        False: over ``X1* ~ known+E``.
    expected_posterior : mpf
        ``E[P[X1 = known+1 | X1*] | truth]``.
    expected_risk : mpf
        ``expected_posterior / p`` (the paper's expected risk, eq. (3.4)).
    truncation_bound : mpf
        Probability of the noise values left out of the sum.
    error_bound : mpf
        Absolute error bound on ``expected_risk`` (``error_bound·p`` for the posterior).
    """

    _CAP, _ARG, _NAME = None, "", "expected risk"

    p: Fraction
    rho: Fraction
    convention: str
    target_has: bool
    expected_posterior: mpmath.mpf
    expected_risk: mpmath.mpf
    truncation_bound: mpmath.mpf
    error_bound: mpmath.mpf

    @property
    def estimate(self):
        """``expected_risk``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.expected_risk


def expected_risk(p, rho, *, convention: str = "paper", target_has: bool = True,
                  dps: int = DEFAULT_DPS) -> ExpectedRisk:
    """Expected posterior and risk ratio over realisations of ``X1*`` given the truth.

    Parameters
    ----------
    p, rho : rational
    convention : {"paper", "production"}
    target_has : bool
        Condition on the target having ``c`` (default, as in the paper) or not.
    dps : int

    Returns
    -------
    ExpectedRisk

    Notes
    -----
    ``E = Σ_{|z|≤K} f(z) post(z + [target_has])``.  The posterior is ≤ 1 and the table
    over-estimates each ``f`` by a relative ``tail/Z`` at most, so the absolute error of
    the expected posterior is ≤ 2·(mass outside) + rounding; divide by ``p`` for the risk.
    The result does not depend on ``known`` (shift invariance).  Reference: Kazan and
    Reiter, eqs. (3.3)-(3.4).  Under the adversary's own prior predictive the expected
    risk is identically 1, which is why the paper conditions on the truth.
    """
    p = check_prior(p)
    rho = check_rho(rho, "rho1")
    a = coefficient(rho, convention)
    table = dg_table(a, dps=dps)
    shift = 1 if target_has else 0
    with mpmath.workdps(dps):
        am = to_mpf(a)
        q = to_mpf((1 - p) / p)
        terms = []
        for i, w in enumerate(table.weights):
            z = i - table.K
            u = z + shift
            terms.append(w / (1 + q * mpmath.exp(-am * (2 * u - 1))))
        epost = mpmath.fsum(terms) / table.Z
        outside = table.outside
        err_post = 2 * outside + _rounding(dps)
        return ExpectedRisk(
            p=p,
            rho=rho,
            convention=convention,
            target_has=bool(target_has),
            expected_posterior=epost,
            expected_risk=epost / to_mpf(p),
            truncation_bound=outside,
            error_bound=err_post / to_mpf(p),
        )


@dataclass(frozen=True)
class Decision(CentredBracket):
    """The adversary's Bayes decision under 0-1 loss.

    Attributes
    ----------
    p, rho : Fraction
    convention : str
    known : int
    threshold : int
        ``x̃*``: the smallest released value whose posterior exceeds 1/2 (decide "has c"
        iff ``x* ≥ threshold``).
    p_correct : mpf
        ``P[decide "has c" | the target has c] = P[X1* ≥ x̃* | X1 = known+1]`` (the
        paper's probability of a correct decision, Figure 3).
    p_correct_if_lacks : mpf
        ``P[X1* < x̃* | X1 = known]``.
    p_correct_overall : mpf
        ``p·p_correct + (1-p)·p_correct_if_lacks`` (averaged over the adversary's prior).
    expected_risk : mpf
        ``E[R | the target has c]`` (as in :func:`expected_risk`).
    truncation_bound : mpf
        Noise mass left out of the sums.
    error_bound : mpf
        Absolute error bound of the three probabilities.
    expected_risk_error_bound : mpf
    """

    _CAP, _ARG, _NAME = 1, "", "P[correct decision]"

    p: Fraction
    rho: Fraction
    convention: str
    known: int
    threshold: int
    p_correct: mpmath.mpf
    p_correct_if_lacks: mpmath.mpf
    p_correct_overall: mpmath.mpf
    expected_risk: mpmath.mpf
    truncation_bound: mpmath.mpf
    error_bound: mpmath.mpf
    expected_risk_error_bound: mpmath.mpf

    @property
    def estimate(self):
        """``p_correct``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.p_correct


def _threshold_offset(p: Fraction, a: Fraction, dps: int) -> int:
    """``⌊1/2 + log((1-p)/p)/(2a)⌋ + 1``, certified not to straddle an integer."""
    prec = dps
    for _ in range(6):
        with mpmath.workdps(prec):
            theta = mpmath.mpf(1) / 2 - log_prior_odds(p) / (2 * to_mpf(a))
            nearest = mpmath.nint(theta)
            if abs(theta - nearest) > mpmath.mpf(10) ** (-(prec - 10)) * max(1, abs(theta)):
                return int(mpmath.floor(theta)) + 1
        prec *= 2
    raise ArithmeticError("decision threshold too close to an integer to certify")  # pragma: no cover


def decision(p, rho, *, convention: str = "paper", known=0, dps: int = DEFAULT_DPS) -> Decision:
    """Bayes decision threshold and the probabilities of a correct decision.

    Parameters
    ----------
    p, rho : rational
    convention : {"paper", "production"}
    known : int
        ``x_{1,-t}``; the threshold shifts by it, the probabilities do not change.
    dps : int

    Returns
    -------
    Decision

    Notes
    -----
    ``p_correct = Σ_{z ≥ x̃* - known - 1} f(z)`` and ``p_correct_if_lacks =
    Σ_{z ≤ x̃* - known - 1} f(z)``, summed over the table ``|z| ≤ K`` (tails beyond the
    table are summed directly, so tiny probabilities keep their relative accuracy);
    absolute error ≤ 2·(mass outside) + rounding.  For ``p = 1/2`` the threshold is ``known + 1`` and
    ``p_correct = 1/2 + 1/(2 Z(a))``.  Reference: Kazan and Reiter, eq. (3.6), Figure 3.
    """
    p = check_prior(p)
    rho = check_rho(rho, "rho1")
    known = check_int(known, "known")
    check_convention(convention)
    a = coefficient(rho, convention)
    table = dg_table(a, dps=dps)
    off = _threshold_offset(p, a, dps)
    er = expected_risk(p, rho, convention=convention, target_has=True, dps=dps)
    with mpmath.workdps(dps):
        has = table.survival(off - 1)  # P[E ≥ x̃ - known - 1]
        lacks = table.survival(1 - off)  # P[E ≤ x̃ - known - 1], by symmetry
        pm = to_mpf(p)
        outside = table.outside
        err = 2 * outside + _rounding(dps)
        return Decision(
            p=p,
            rho=rho,
            convention=convention,
            known=known,
            threshold=known + off,
            p_correct=has,
            p_correct_if_lacks=lacks,
            p_correct_overall=pm * has + (1 - pm) * lacks,
            expected_risk=er.expected_risk,
            truncation_bound=outside,
            error_bound=err,
            expected_risk_error_bound=er.error_bound,
        )


def convention_label(convention: str) -> str:
    """Human-readable description of a noise convention."""
    return CONVENTIONS[check_convention(convention)][0]
