"""Exact privacy of a design family: the worst case over neighbour cases, beside zCDP.

A product (:class:`~exactdp.census.products.ProductAllocation`) or a portfolio
(:mod:`exactdp.census.portfolio`) is a list of *cases*, each a composition of discrete
Gaussian mechanisms (one worst-case neighbouring pair of the release).  The release is
(ε, δ)-DP exactly when every case is, so

* δ(ε) = max over cases of δ_case(ε);
* ε(δ) = max over cases of ε_case(δ) (every δ_case is non-increasing);
* β = f(α) ≥ min over cases of f_case(α) (the release is min-f-DP; its symmetric convex
  trade-off function is the convex envelope of that minimum, which can only be lower).

Each reported number is a certified bracket: the max (min) of the cases' lower and
upper ends.  Beside the exact values: the zCDP conversions users quote for the
configured ρ (Bun–Steinke, the Bureau's; Canonne–Kamath–Steinke), from
:mod:`exactdp.conversions.bounds`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.base import bun_steinke_epsilon
from exactdp.conversions.bounds import bun_steinke_eps, cks_epsilon
from exactdp.mechanisms import Composition
from exactdp.numerics.bracket import Bracket
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_GUARD

__all__ = ["Case", "FamilyRow", "TradeoffRow", "family_rows", "family_tradeoff", "product_cases", "check_family_cost",
           "CASE_QUERY_SECONDS", "CASE_BYTES"]

#: estimated wall seconds of one query (an ε(δ), a δ(ε) or a β(α)) on one case: a low estimate (the
#: idle runs of ``bench/products.md`` take 0.1–0.4 s), so that only requests surely beyond the budget are refused
CASE_QUERY_SECONDS = 0.05
#: estimated bytes held per case (its label, composition and points) beside a process's ~300 MB
CASE_BYTES = 4000
_BASE_BYTES = 3e8


def check_family_cost(n_cases: int, n_deltas: int, n_alphas: int, field: str, value) -> None:
    """Refuse (:class:`~exactdp.numerics.budget.BudgetExceeded`, exit 2) a product or portfolio
    run estimated to need more than the cost budget (``--budget-seconds``, ``--budget-memory``),
    before any case is built: ``n_cases × (2·n_deltas + n_alphas)`` queries of
    :data:`CASE_QUERY_SECONDS` each, :data:`CASE_BYTES` a case."""
    from exactdp.numerics.budget import check_cost

    queries = n_cases * (2 * n_deltas + n_alphas)
    check_cost(field, value, seconds=queries * CASE_QUERY_SECONDS, memory=_BASE_BYTES + n_cases * CASE_BYTES,
               what=f"{n_cases} neighbour case(s) × {2 * n_deltas + n_alphas} quer{'y' if queries == 1 else 'ies'}")


@dataclass(frozen=True)
class Case:
    """One neighbour case: a label and its composition."""

    label: str
    composition: Composition


@dataclass(frozen=True)
class FamilyRow(Bracket):
    """One target δ: the exact ε(δ) of the worst case, and δ at the Bureau's ε.

    Attributes
    ----------
    delta_target : Fraction
    configured_rho : Fraction
        The ρ the configuration spends (the number zCDP accounting converts).
    eps_bun_steinke, eps_cks : mpmath.mpf
        ε(δ) of ``configured_rho`` by Bun–Steinke (the Bureau's conversion) and by the
        optimal CKS conversion (upper bounds, 1e-40 relative rounding).
    eps_lower, eps_upper : mpmath.mpf
        The exact ε(δ) of the release (max over cases) lies in this certified bracket.
    eps_case : int
        The case (1-based) whose upper end is the largest.
    delta_lower, delta_upper : mpmath.mpf
        The exact δ at ``eps_bun_steinke`` (max over cases), certified bracket.
    delta_case : int
    certification : str
        ``"exact"`` when every case's engine was exact, else ``"bracket"``.

    A :class:`~exactdp.numerics.bracket.Bracket` of ε(δ): ``lower``/``upper`` are
    ``eps_lower``/``eps_upper``.
    """

    _ARG, _NAME = "delta_target", "ε"

    delta_target: Fraction
    configured_rho: Fraction
    eps_bun_steinke: mpmath.mpf
    eps_cks: mpmath.mpf
    eps_lower: mpmath.mpf
    eps_upper: mpmath.mpf
    eps_case: int
    delta_lower: mpmath.mpf
    delta_upper: mpmath.mpf
    delta_case: int
    certification: str

    @property
    def value(self) -> mpmath.mpf:
        """The conservative ε (the bracket's upper end)."""
        return self.eps_upper

    @property
    def lower(self) -> mpmath.mpf:
        return self.eps_lower

    @property
    def upper(self) -> mpmath.mpf:
        return self.eps_upper

    @property
    def estimate(self) -> mpmath.mpf:
        """The bracket's midpoint."""
        with mpmath.workdps(DPS_ANALYSIS):
            return (self.eps_lower + self.eps_upper) / 2

    @property
    def error_bound(self) -> mpmath.mpf:
        """The bracket's width, exactly (a rounded difference could fall below it)."""
        return mpmath.fsub(self.eps_upper, self.eps_lower, exact=True)


@dataclass(frozen=True)
class TradeoffRow(Bracket):
    """β = f(α) of the release: min over cases, certified bracket ``[lower, upper]`` (a
    :class:`~exactdp.numerics.bracket.Bracket` reporting its lower end)."""

    _UPPER = False
    _ARG, _NAME = "alpha", "β"

    alpha: Fraction
    lower: mpmath.mpf
    upper: mpmath.mpf
    case: int

    @property
    def value(self) -> mpmath.mpf:
        """The conservative β (the lower end)."""
        return self.lower

    @property
    def estimate(self) -> mpmath.mpf:
        """The lower end (the reported β; inside the bracket)."""
        return self.lower

    @property
    def error_bound(self) -> mpmath.mpf:
        """The bracket's width, exactly."""
        return mpmath.fsub(self.upper, self.lower, exact=True)


def product_cases(product, cases: Sequence[int] | None = None, budget_rule: str | None = None) -> list[Case]:
    """The cases of a product as :class:`Case` objects (all, or the numbered ones)."""
    numbers = list(range(1, product.n_cases + 1)) if cases is None else list(cases)
    return [Case(product.case_label(i), product.case_composition(i, budget_rule)) for i in numbers]


def _certification(points) -> str:
    return "exact" if all(getattr(p, "certification", "exact") == "exact" for p in points) else "bracket"


def family_rows(cases: Sequence[Case], configured_rho, deltas=("1e-10",), *, rel_tol: float = 1e-10,
                progress: Callable[[int, int, str], None] | None = None) -> list[FamilyRow]:
    """Exact ε(δ) and δ(ε_Bureau) of the worst case, beside the zCDP conversions.

    Parameters
    ----------
    cases : sequence of Case
    configured_rho : rational
        The ρ the configuration spends; ε_Bureau = Bun–Steinke of it.
    deltas : sequence of rationals in (0, 1)
    rel_tol : float
        Certified relative accuracy of each tail (the int64 engine); the lattice-free
        engine brackets to ≤ 6e-10 relative.
    progress : callable, optional
        ``progress(k, n, label)`` after each case.

    Returns
    -------
    list of FamilyRow
        One per target δ, in the order given.

    Notes
    -----
    Method: every case by :class:`~exactdp.accounting.accountant.ExactAccountant` (which
    hands designs beyond its int64 lattice to the lattice-free
    :class:`~exactdp.accounting.lattice_free.LatticeFreeAccountant`); the release's value is
    the maximum over cases.  Error bound: the certified brackets of the cases, maxed end
    by end.  Reference: Bun & Steinke (2016) and Canonne, Kamath & Steinke (2020) for the
    conversions.
    """
    if not cases:
        raise InputError("cases", list(cases), "at least one case is needed")
    rho = to_fraction(configured_rho, "configured_rho")
    targets = [to_fraction(d, "delta") for d in deltas]
    for d in targets:
        if not 0 < d < 1:
            raise InputError("delta", d, "must lie in (0, 1)")
    eps_b = [bun_steinke_epsilon(rho, d) for d in targets]
    per_case = []
    for k, case in enumerate(cases, start=1):
        acc = ExactAccountant(case.composition, rel_tol=rel_tol)
        per_case.append((acc.epsilon(targets), acc.delta(eps_b)))
        if progress is not None:
            progress(k, len(cases), case.label)
    rows = []
    for t, d in enumerate(targets):
        eps_pts = [pc[0][t] for pc in per_case]
        del_pts = [pc[1][t] for pc in per_case]
        ke = max(range(len(cases)), key=lambda i: eps_pts[i].upper)
        kd = max(range(len(cases)), key=lambda i: del_pts[i].upper)
        with mpmath.workdps(DPS_ANALYSIS + DPS_GUARD):  # BoundPoint.upper adds at the current precision
            e_bs, e_cks = bun_steinke_eps(rho, d).upper, cks_epsilon(rho, d).upper
        rows.append(FamilyRow(
            delta_target=d, configured_rho=rho, eps_bun_steinke=e_bs, eps_cks=e_cks,
            eps_lower=max(p.lower for p in eps_pts), eps_upper=eps_pts[ke].upper, eps_case=ke + 1,
            delta_lower=max(p.lower for p in del_pts), delta_upper=del_pts[kd].upper, delta_case=kd + 1,
            certification=_certification(eps_pts + del_pts)))
    return rows


def family_tradeoff(cases: Sequence[Case], alphas, *, rel_tol: float = 1e-10) -> list[TradeoffRow]:
    """β = f(α) of the release at each α: the minimum over cases (certified bracket).

    Notes
    -----
    Method: each case's trade-off by its accountant; the release satisfies min-f-DP, so
    the minimum of the cases' lower ends is a certified lower bound of its β.  Error bound:
    the cases' brackets.  Reference: Dong, Roth & Su, Gaussian differential privacy
    (JRSS-B 2022), Prop. 2.2 (a mechanism is f-DP for the minimum over neighbour pairs).
    """
    if not cases:
        raise InputError("cases", list(cases), "at least one case is needed")
    alist = [to_fraction(a, "alpha") for a in alphas]
    per_case = [ExactAccountant(c.composition, rel_tol=rel_tol).tradeoff(alist) for c in cases]
    rows = []
    for t, a in enumerate(alist):
        pts = [pc[t] for pc in per_case]
        k = min(range(len(cases)), key=lambda i: pts[i].lower)
        rows.append(TradeoffRow(a, pts[k].lower, min(p.upper for p in pts), k + 1))
    return rows
