"""The 2020 Census in one table: every product's exact privacy and their composition.

:func:`census_2020` computes, at δ = 1e-10, for every privacy-protected product of the
2020 Census and each production run (United States; Puerto Rico) — P.L. 94-171 persons
and units, the DHC persons and units files, SafeTab-P (Detailed DHC-A), SafeTab-H
(Detailed DHC-B), PHSafe (Supplemental DHC) — and for the portfolio of each run (one
neighbour of every product at once, :mod:`exactdp.census.portfolio`):

* the configured zCDP ρ and the Bureau's ε (Bun–Steinke of ρ) at δ;
* the exact ε(δ), a certified bracket, maximised over the product's neighbour cases;
* the exact δ at the Bureau's ε, a certified bracket, maximised likewise.

The DHC persons file (US) has 43 allocation paths, i.e. 946 neighbour pairs: its row is
the maximum over the pairs of a sweep (:func:`exactdp.sweep.run_sweep`, run into a
subfolder, or a finished sweep folder given by the caller).  A sweep of only some pairs
gives a row marked *partial*: a lower bound on the file's guarantee, not the guarantee.
The portfolio composes DHC persons at its full-chain pair 13-13 (as ``exactdp release``).
Every other row is :func:`exactdp.census.product_accounting.family_rows` over the
product's cases (a TopDown file with one public path: its pair 1-1).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from exactdp.numerics.exact import InputError

__all__ = ["CensusRow", "Census2020", "census_2020", "TARGET_DELTA", "DHC_SWEEP_DIR", "PORTFOLIO_PAIR", "PLAN"]

#: the one target δ of the table (the Bureau's published δ)
TARGET_DELTA = Fraction(1, 10**10)
#: the subfolder the DHC persons sweep is run into
DHC_SWEEP_DIR = "dhc-persons"
#: the DHC persons pair the portfolio composes
PORTFOLIO_PAIR = "13-13"
_DHC = "dhc-persons-2020"
_DHC_PRODUCT = "Demographic and Housing Characteristics (DHC), persons"

#: (key, product as published, run, kind): the rows, in the table's order
PLAN = (
    ("pl94-persons-2020", "P.L. 94-171 redistricting data, persons", "US", "topdown"),
    ("pl94-units-2020", "P.L. 94-171 redistricting data, housing units", "US", "topdown"),
    (_DHC, _DHC_PRODUCT, "US", "sweep"),
    ("dhc-units-2020", "Demographic and Housing Characteristics (DHC), units", "US", "topdown"),
    ("safetab-p-2020-us", "Detailed DHC-A (SafeTab-P)", "US", "tumult"),
    ("safetab-h-2020-us", "Detailed DHC-B (SafeTab-H)", "US", "tumult"),
    ("phsafe-2020-us", "Supplemental DHC (PHSafe)", "US", "tumult"),
    ("portfolio-us", "All of the above for one person, composed (portfolio)", "US", "portfolio"),
    ("dhc-persons-2020-pr", "Demographic and Housing Characteristics (DHC), persons", "PR", "topdown"),
    ("dhc-units-2020-pr", "Demographic and Housing Characteristics (DHC), units", "PR", "topdown"),
    ("safetab-p-2020-pr", "Detailed DHC-A (SafeTab-P)", "PR", "tumult"),
    ("safetab-h-2020-pr", "Detailed DHC-B (SafeTab-H)", "PR", "tumult"),
    ("phsafe-2020-pr", "Supplemental DHC (PHSafe)", "PR", "tumult"),
    ("portfolio-pr", "All of the above for one person, composed (portfolio)", "PR", "portfolio"),
)


@dataclass(frozen=True)
class CensusRow:
    """One product of one run at :data:`TARGET_DELTA`; every number a decimal text (20
    significant digits, bracket ends rounded outward, the Bureau's ε rounded up).

    Attributes
    ----------
    key, product, run, kind : str
        Built-in name, published name, ``"US"``/``"PR"``, and ``"topdown"``, ``"sweep"``,
        ``"tumult"`` or ``"portfolio"``.
    scope : str
        The neighbour cases the maxima are over, in words.
    n_cases : int
        How many cases (pairs) were computed.
    complete : bool
        False only for a DHC persons sweep of some of its pairs (a lower bound).
    configured_rho : Fraction
        The zCDP ρ the configuration spends (the portfolio: the sum).
    eps_bureau, eps_cks : str
        Bun–Steinke and Canonne–Kamath–Steinke ε(δ) of ``configured_rho`` (upper bounds).
    eps_lower, eps_upper : str
        The certified bracket on the exact ε(δ); ``eps_worst``: the case attaining it.
    delta_lower, delta_upper : str
        The certified bracket on the exact δ at ``eps_bureau``; ``delta_worst`` likewise.
    certification : str
        ``"exact"`` or ``"bracket"`` (the engines used).
    """

    key: str
    product: str
    run: str
    kind: str
    scope: str
    n_cases: int
    complete: bool
    configured_rho: Fraction
    eps_bureau: str
    eps_cks: str
    eps_lower: str
    eps_upper: str
    eps_worst: str
    delta_lower: str
    delta_upper: str
    delta_worst: str
    certification: str


@dataclass(frozen=True)
class Census2020:
    """What :func:`census_2020` found: the rows, and what the page needs besides.

    Attributes
    ----------
    rows : tuple of CensusRow
    delta : Fraction
        The target δ.
    dhc_sweep : Path
        The DHC persons sweep folder the ``dhc-persons-2020`` row comes from.
    dhc_pairs : tuple of str
        Its pairs (``"i-j"``); ``dhc_n_pairs``: of how many.
    dhc_pair_13 : tuple or None
        The sweep's certified bracket ``(eps_lower, eps_upper)`` at pair 13-13 (the
        portfolio's pair), when the sweep has it.
    budget_rule : str or None
        How the Tumult budgets became exact ρ (None: each file's default).
    models : dict
        key → provenance rows ``((label, text), ...)`` of each model.
    """

    rows: tuple
    delta: Fraction
    dhc_sweep: Path
    dhc_pairs: tuple
    dhc_n_pairs: int
    dhc_pair_13: tuple | None
    budget_rule: str | None
    models: dict = field(default_factory=dict)

    def row(self, key: str) -> CensusRow:
        """The row of ``key`` (``"portfolio-us"``, ``"safetab-p-2020-pr"``, ...)."""
        return next(r for r in self.rows if r.key == key)


def _up(x) -> str:
    from exactdp.report.numbers import to_text

    return to_text(x, 20, "up")


def _down(x) -> str:
    from exactdp.report.numbers import to_text

    return to_text(x, 20, "down")


def _conversions(rho: Fraction, delta: Fraction) -> tuple[str, str]:
    import mpmath

    from exactdp.conversions.bounds import bun_steinke_eps, cks_epsilon
    from exactdp.numerics.precision import DPS_ANALYSIS, DPS_GUARD

    with mpmath.workdps(DPS_ANALYSIS + DPS_GUARD):
        return _up(bun_steinke_eps(rho, delta).upper), _up(cks_epsilon(rho, delta).upper)


def _family_row(key, product, run, kind, cases, rho, scope, *, rel_tol, delta) -> CensusRow:
    from exactdp.census.product_accounting import family_rows

    (r,) = family_rows(cases, rho, [delta], rel_tol=rel_tol)
    eps_b, eps_cks = _conversions(rho, delta)
    return CensusRow(key, product, run, kind, scope, len(cases), True, rho, eps_b, eps_cks,
                     _down(r.eps_lower), _up(r.eps_upper), cases[r.eps_case - 1].label,
                     _down(r.delta_lower), _up(r.delta_upper), cases[r.delta_case - 1].label, r.certification)


def _provenance(obj, kind: str) -> tuple:
    rows = [("model", f"{obj.name} (content hash {obj.content_hash()})")]
    if kind == "tumult":
        rows.append(("neighbouring relation", obj.relation))
    rows += [(k, " ".join(str(v).split())) for k, v in obj.provenance.items()]
    return tuple(rows)


# ----------------------------------------------------------------------------- DHC persons
def _check_pairs(spec: str | None) -> list | None:
    from exactdp.census.allocations import parse_pair_spec

    if spec is None:
        return None
    try:
        return parse_pair_spec(spec, 43)
    except InputError as exc:
        raise InputError("--dhc-pairs", spec, exc.reason) from None


def _read_sweep(folder: Path, delta: Fraction) -> tuple[dict, dict]:
    """The manifest and the summary row of ``delta`` of a finished DHC persons sweep."""
    import csv

    from exactdp.census.allocations import load_allocation

    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        with open(folder / "summary.csv", encoding="utf-8", newline="") as fh:
            summary = list(csv.DictReader(fh))
    except (OSError, ValueError) as exc:
        raise InputError("--dhc-sweep", str(folder), f"is not a finished sweep folder ({exc})") from None
    alloc = manifest.get("allocation", {})
    if manifest.get("status") != "complete":
        raise InputError("--dhc-sweep", str(folder), "the sweep is not finished (exactdp sweep --resume finishes it)")
    if alloc.get("name") != _DHC or alloc.get("content_hash") != load_allocation(_DHC).content_hash():
        raise InputError("--dhc-sweep", str(folder), f"is a sweep of {alloc.get('name')!r} "
                         f"(hash {alloc.get('content_hash')}), not of the built-in {_DHC}")
    found = [r for r in summary if Fraction(r["delta_target"]) == delta]
    if not found:
        raise InputError("--dhc-sweep", str(folder), "its summary.csv has no row for the target δ = 1e-10 "
                         "(sweep with the default targets, or --deltas 1e-10)")
    return manifest, found[0]


def _pair_13(folder: Path, delta: Fraction) -> tuple | None:
    import csv

    path = folder / "pairs" / "pair_13_13.csv"
    if not path.is_file():
        return None
    with open(path, encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            if Fraction(r["delta_target"]) == delta:
                return r["eps_lower"], r["eps_upper"]
    return None


def _sweep_row(folder: Path, delta: Fraction) -> tuple[CensusRow, dict]:
    from exactdp.census.allocations import load_allocation

    manifest, s = _read_sweep(folder, delta)
    alloc = load_allocation(_DHC)
    n_all = alloc.n_paths * (alloc.n_paths + 1) // 2
    n = len(manifest["pairs"])
    complete = n == n_all
    eps_b, eps_cks = _conversions(alloc.total_rho, delta)
    if abs(Fraction(s["eps_bureau"]) - Fraction(eps_b)) > Fraction(eps_b) * Fraction(1, 10**15):
        raise InputError("--dhc-sweep", str(folder), f"its Bureau's ε {s['eps_bureau']} is not Bun–Steinke of "
                         f"ρ = {alloc.total_rho} at δ = 1e-10 ({eps_b})")
    scope = (f"max over all {n_all} neighbour pairs" if complete else
             f"PARTIAL: max over {n} of {n_all} neighbour pairs ({', '.join(manifest['pairs'][:8])}"
             f"{' …' if n > 8 else ''}) — a lower bound on the file's guarantee, not the guarantee")
    row = CensusRow(_DHC, _DHC_PRODUCT, "US", "sweep", scope, n, complete, alloc.total_rho, eps_b, eps_cks,
                    s["eps_overall_lower"], s["eps_overall_upper"], f"pair {s['eps_argmax_pair']}",
                    s["delta_overall_lower"], s["delta_overall_upper"], f"pair {s['delta_argmax_pair']}",
                    "bracket")
    return row, manifest


def _run_sweep(out: Path, pairs, jobs: int, quiet: bool) -> Path:
    from exactdp.report import write_sweep_report
    from exactdp.sweep import run_sweep

    folder = out / DHC_SWEEP_DIR
    # a second run into the same folder finishes (or reuses) the sweep already there
    run_sweep(_DHC, folder, pairs=pairs, jobs=jobs, quiet=quiet, plots=True,
              resume=(folder / "manifest.json").is_file(), finish=write_sweep_report)
    return folder


# ----------------------------------------------------------------------------- the job
def census_2020(out, *, dhc_sweep=None, dhc_pairs: str | None = None, budget_rule: str | None = None,
                rel_tol: float = 1e-10, jobs: int = 1, quiet: bool = True,
                progress: Callable[[str], None] | None = None) -> Census2020:
    """Every 2020 Census product and their composition, exactly, at δ = 1e-10.

    Parameters
    ----------
    out : path
        The output folder (the DHC persons sweep is run into ``out/dhc-persons``).
    dhc_sweep : path, optional
        A finished sweep folder of ``dhc-persons-2020`` to reuse instead of running one.
    dhc_pairs : str, optional
        Pairs of the DHC persons sweep to run (``"13-13,6-6"``; default all 946): the
        row is then marked partial.  Not with ``dhc_sweep``.
    budget_rule : {"tumult-float", "decimal"}, optional
        How the Tumult products' budgets become exact ρ (default: each file's own).
    rel_tol : float
        Certified relative accuracy of each tail.
    jobs : int
        Workers of the sweep.
    quiet : bool
        No progress bar for the sweep.
    progress : callable, optional
        ``progress(key)`` after each row.

    Returns
    -------
    Census2020

    Notes
    -----
    Method: :func:`exactdp.census.product_accounting.family_rows` for every product and
    portfolio (its cases by :func:`~exactdp.census.product_accounting.product_cases`, a
    portfolio's by :func:`exactdp.census.portfolio.portfolio_cases`), the sweep's
    ``summary.csv`` for DHC persons.  Error bound: every number is a certified bracket
    (the maximum over cases of the cases' brackets, end by end).  Reference: Su, Su &
    Wang, exact privacy accounting for the 2020 U.S. Census; Bun & Steinke (2016).
    """
    from exactdp.census.allocations import load_allocation
    from exactdp.census.portfolio import PORTFOLIOS, parse_member, portfolio_cases, portfolio_rho
    from exactdp.census.product_accounting import Case, product_cases
    from exactdp.census.products import load_product

    out = Path(out)
    delta = TARGET_DELTA
    pairs = _check_pairs(dhc_pairs)
    if dhc_sweep is not None and pairs is not None:
        raise InputError("--dhc-pairs", dhc_pairs, "is for a new sweep; --dhc-sweep reuses a finished one")
    if dhc_sweep is not None:
        folder = Path(dhc_sweep)
        _read_sweep(folder, delta)  # refuse a wrong folder before an hour of work
    rows, models = [], {}
    for key, product, run, kind in PLAN:
        if kind == "sweep":
            if dhc_sweep is None:
                out.mkdir(parents=True, exist_ok=True)
                folder = _run_sweep(out, pairs, jobs, quiet)
            row, manifest = _sweep_row(folder, delta)
            models[key] = _provenance(load_allocation(key), kind)
        elif kind == "topdown":
            alloc = load_allocation(key)
            pair = (1, 1)
            cases = [Case(f"pair {pair[0]}-{pair[1]}", _composition(alloc, *pair))]
            scope = "pair 1-1: the file's one public allocation path (the full chain)"
            row = _family_row(key, product, run, kind, cases, alloc.total_rho, scope, rel_tol=rel_tol, delta=delta)
            models[key] = _provenance(alloc, kind)
        elif kind == "tumult":
            prod = load_product(key)
            cases = product_cases(prod, None, budget_rule)
            scope = (f"max over its {prod.n_cases} worst-case neighbour case{'s' if prod.n_cases > 1 else ''}"
                     f" ({prod.relation})")
            row = _family_row(key, product, run, kind, cases, prod.configured_rho, scope, rel_tol=rel_tol,
                              delta=delta)
            models[key] = _provenance(prod, kind)
        else:
            members = [parse_member(s, budget_rule) for s in PORTFOLIOS[run.lower()]]
            cases = portfolio_cases(members)
            scope = (f"max over {len(cases)} cases (every member's cases; DHC persons at pair "
                     f"{PORTFOLIO_PAIR})" if run == "US" else f"max over {len(cases)} cases (every member's cases)")
            row = _family_row(key, product, run, kind, cases, portfolio_rho(members), scope, rel_tol=rel_tol,
                              delta=delta)
        rows.append(row)
        if progress is not None:
            progress(key)
    n_all = 43 * 44 // 2
    return Census2020(tuple(rows), delta, folder, tuple(manifest["pairs"]), n_all, _pair_13(folder, delta),
                      budget_rule, models)


def _composition(alloc, i: int, j: int):
    from exactdp.mechanisms import Composition

    return Composition.from_rhos(alloc.pair_rhos(i, j))
