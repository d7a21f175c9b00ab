"""The column dictionary: what every column of every CSV file exactdp writes means.

:data:`SCHEMAS` describes each kind of file (a name pattern, one sentence about the file,
and a meaning per column); :func:`column_dictionary` lists the CSV files of an output
folder, each with the meanings of the columns its header actually has.  A file of a known
kind is listed once with the number of files of that kind (``pairs/pair_I_J.csv`` — 946
files); a column or a file no schema knows is listed as ``(not documented)``, which the
tests forbid for exactdp's own outputs.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SCHEMAS", "Schema", "CsvEntry", "column_dictionary", "UNDOCUMENTED"]

UNDOCUMENTED = "(not documented)"

_DEC = "decimal text, 20 significant digits"
_BS = "the Bureau's ε at this δ: the Bun–Steinke conversion ε = ρ + 2√(ρ ln(1/δ)) of the zCDP ρ"


@dataclass(frozen=True)
class Schema:
    """One kind of CSV file: ``pattern`` (a glob on the path relative to the folder),
    ``shown`` (how the report names it), ``about`` and ``columns`` (name → meaning; a
    name ``#`` stands for every all-digit column name)."""

    pattern: str
    shown: str
    about: str
    columns: dict


_PAIR_CURVE = {
    "path_i": "allocation path of the record (1-based)",
    "path_j": "allocation path of the neighbouring record (1-based)",
    "delta_target": "target δ (exact decimal; the 42 of the seed paper unless --deltas/--only-deltas)",
    "eps_bureau": f"{_BS} ({_DEC})",
    "delta_exact": f"exact δ of this pair at eps_bureau, computed estimate ({_DEC})",
    "delta_error_bound": "certified bound on |delta_exact − true δ| (3 significant digits, rounded up)",
    "delta_upper": "certified upper bound on δ: delta_exact + delta_error_bound (the value to cite)",
    "delta_first_term": "P_P[L > ε]: first term of δ(ε) = P_P[L > ε] − e^ε·P_Q[L > ε] (L the privacy loss)",
    "delta_second_term": "e^ε·P_Q[L > ε]: second term of δ(ε)",
    "eps_exact": "exact ε of this pair at delta_target (smallest ε with δ(ε) ≤ target), estimate",
    "eps_lower": "certified lower end of the bracket on that ε",
    "eps_upper": "certified upper end of the bracket on that ε: δ(eps_upper) ≤ target is proved (the value to cite)",
}
_TRADEOFF = {
    "threshold": "integer threshold k on the privacy-loss lattice of this vertex (exact)",
    "alpha": "type I error α of the optimal (Neyman–Pearson) test with this threshold",
    "alpha_rel_error": "certified relative error bound of alpha",
    "beta": "type II error β of that test (the trade-off curve f(α) is the polygon through the vertices)",
    "beta_rel_error": "certified relative error bound of beta",
}
_GRID = {
    "alpha": "type I error α of the common grid (log-spaced on both ends; the same grid for every pair)",
    "beta": "this pair's trade-off curve at alpha, interpolated linearly between its exact vertices",
    "beta_error_bound": "certified bound on the error of beta carried from the vertices",
}

SCHEMAS = (
    Schema("summary.csv", "summary.csv",
           "The overall guarantee, one row per target δ: the release's privacy profile is the maximum over "
           "neighbour pairs, so the maxima here are the guarantee.", {
               "delta_target": "target δ (exact decimal)",
               "eps_bureau": f"{_BS} of the allocation's total ρ",
               "delta_overall": "exact overall δ at eps_bureau: the largest estimate over pairs",
               "delta_overall_lower": "certified lower bound on the overall δ (max over pairs of the lower bounds)",
               "delta_overall_upper": "certified upper bound on the overall δ (max over pairs of the upper bounds): "
                                      "the value to cite",
               "delta_argmax_pair": "pair i-j with the largest δ estimate",
               "delta_argmax_ties": "other pairs whose certified upper bound reaches the argmax pair's lower bound "
                                    "(pairs that could also be the largest)",
               "delta_min": "smallest δ estimate over pairs",
               "delta_argmin_pair": "pair i-j with the smallest δ estimate",
               "delta_spread": "delta_overall / delta_min (8 significant digits): how much the pairs differ",
               "eps_overall": "exact overall ε at delta_target: the largest estimate over pairs",
               "eps_overall_lower": "certified lower bound on the overall ε (max over pairs of the bracket's "
                                    "lower ends)",
               "eps_overall_upper": "certified upper bound on the overall ε (max over pairs of the bracket's upper "
                                    "ends): the value to cite",
               "eps_argmax_pair": "pair i-j with the largest ε estimate",
               "eps_min": "smallest ε estimate over pairs",
               "eps_argmin_pair": "pair i-j with the smallest ε estimate",
               "n_pairs": "number of pairs the maxima are taken over",
           }),
    Schema("envelope.csv", "envelope.csv",
           "The overall f-DP trade-off curve: the lower convex envelope of all pairs' curves on a common α grid.", {
               "alpha": "type I error α of the grid",
               "beta_envelope": "overall trade-off β = f(α): the lower convex hull of the pointwise minimum",
               "on_hull": "1 if this grid point is a vertex of the convex hull, 0 if it lies on a chord",
               "beta_pointwise_min": "smallest β over pairs at this α (before the convex hull)",
               "argmin_pair": "pair i-j attaining beta_pointwise_min",
               "beta_error_bound": "certified bound on the error of beta_pointwise_min from the vertices",
               "beta_interp_gap": "width that convexity leaves for the true curve between the two sampled vertices "
                                  "(how far the sampled curve can be above the exact one here)",
               "beta_gdp": "β of the continuous Gaussian reference μ-GDP, μ = √(2ρ): Φ(Φ⁻¹(1−α) − μ) (not a bound)",
           }),
    Schema("spread_matrix.csv", "spread_matrix.csv",
           "The heat map's numbers: each pair's δ relative to the largest, at the Bureau's ε for the target δ "
           "nearest 1e-10.", {
               "path": "path i of the row",
               "#": "column j: δ of pair (i, j) divided by the largest δ over pairs (12 significant digits); empty "
                    "for a pair not in the sweep",
           }),
    Schema("release.csv", "release.csv",
           "The whole 2020 release for one person (DHC pair composed with the P.L. 94-171 persons chain), beside "
           "the Bureau's ρ-sum bound; brackets from the lattice-free accountant.", {
               "path_i": "DHC path of the record", "path_j": "DHC path of the neighbouring record",
               "delta_target": "target δ (exact decimal)",
               "rho_dhc": "zCDP ρ of the DHC persons file (exact rational)",
               "rho_pl94": "zCDP ρ of the P.L. 94-171 persons file (exact rational)",
               "rho_sum": "rho_dhc + rho_pl94: the Bureau's accounting of the release (zCDP adds)",
               "eps_bureau_rho_sum": "the Bureau's ε: Bun–Steinke conversion of rho_sum at delta_target",
               "delta_exact": "exact δ of the composed release at eps_bureau_rho_sum (computed estimate)",
               "delta_upper": "certified upper bound on that δ (the value to cite)",
               "delta_error_bound": "certified bound on |delta_exact − true δ|",
               "eps_exact": "exact ε of the composed release at delta_target (estimate)",
               "eps_lower": "certified lower end of the bracket on that ε",
               "eps_upper": "certified upper end of the bracket on that ε (the value to cite)",
               "eps_exact_dhc_only": "exact ε of the DHC pair alone at delta_target, for comparison",
           }),
    Schema("pairs/pair_*_tradeoff.csv", "pairs/pair_I_J_tradeoff.csv",
           "One pair's f-DP trade-off curve: the exact vertices of the randomised Neyman–Pearson curve.", _TRADEOFF),
    Schema("pairs/pair_*_grid.csv", "pairs/pair_I_J_grid.csv",
           "One pair's trade-off curve on the common α grid of the envelope.", _GRID),
    Schema("pairs/pair_*.csv", "pairs/pair_I_J.csv",
           "One neighbour pair (record on path I, neighbour on path J): per target δ, the exact δ at the "
           "Bureau's ε and the exact ε at δ.", _PAIR_CURVE),
    Schema("release/release_*_tradeoff.csv", "release/release_I_J_tradeoff.csv",
           "The whole-release composition of pair (I, J): trade-off vertices.", _TRADEOFF),
    Schema("release/release_*_grid.csv", "release/release_I_J_grid.csv",
           "The whole-release composition of pair (I, J) on the common α grid.", _GRID),
    Schema("release/release_*.csv", "release/release_I_J.csv",
           "The whole-release composition of pair (I, J) (DHC pair ∘ P.L. 94-171 chain); the Bureau's ε here is "
           "that of the summed ρ.", _PAIR_CURVE),
    Schema("release_brackets.csv", "release_brackets.csv",
           "exactdp release: the whole release (DHC pair ∘ P.L. 94-171 persons chain) per pair and target δ.", {
               "pair": "DHC pair i-j (path of the record, path of the neighbour)",
               "delta_target": "target δ (exact)",
               "rho_total": "zCDP ρ of the composed release (exact rational): the Bureau's ρ-sum",
               "eps_bureau": "the Bureau's ε: Bun–Steinke conversion of rho_total at delta_target",
               "delta_exact_lower": "certified lower end of the exact δ at eps_bureau",
               "delta_exact_upper": "certified upper end of the exact δ at eps_bureau (the value to cite)",
               "eps_exact_lower": "certified lower end of the exact ε at delta_target",
               "eps_exact_upper": "certified upper end of the exact ε at delta_target (the value to cite)",
               "certification": "how the bracket was obtained: bracket (smoothed inversion) or exact",
           }),
    Schema("census_2020.csv", "census_2020.csv",
           "exactdp census-2020: every 2020 Census product and run, and each run's portfolio (one neighbour of "
           "every product composed), at δ = 1e-10: the configured zCDP ρ, the Bureau's ε, the exact ε(δ) and the "
           "exact δ at the Bureau's ε, each exact value a certified bracket maximised over the product's neighbour "
           "cases.", {
               "product": "the product as published (P.L. 94-171, DHC, Detailed DHC-A/-B, Supplemental DHC, or the "
                          "portfolio of the run)",
               "run": "production run: US (50 states and DC) or PR (Puerto Rico)",
               "key": "exactdp's model of it (built-in allocation or product file; portfolio-us/-pr)",
               "scope": "the neighbour cases the maxima are over; 'PARTIAL' when a DHC persons sweep covered only "
                        "some pairs (then the row is a lower bound on the file's guarantee, not the guarantee)",
               "n_cases": "number of neighbour cases (pairs) computed",
               "complete": "1 if every neighbour case of the model is covered, 0 for a partial DHC persons sweep",
               "configured_rho": "zCDP ρ the configuration spends (the portfolio: the sum over its members), as a "
                                 "decimal text (exact when it has a finite decimal, else 20 significant digits)",
               "configured_rho_exact": "the same ρ as an exact rational p/q",
               "delta_target": "target δ (exact decimal)",
               "eps_bureau": f"{_BS}; upper bound rounded up ({_DEC})",
               "eps_cks": "the optimal zCDP conversion of the same ρ (Canonne, Kamath & Steinke 2020) at this δ; "
                          f"upper bound rounded up ({_DEC})",
               "eps_exact_lower": f"certified lower end of the bracket on the exact ε(δ), rounded down ({_DEC})",
               "eps_exact_upper": f"certified upper end of that bracket, rounded up ({_DEC}): the value to cite",
               "eps_cite": "eps_exact_upper rounded up to 6 significant digits: the number the report cites",
               "eps_worst_case": "the neighbour case (pair) whose upper end is the largest",
               "delta_at_eps_bureau_lower": f"certified lower end of the exact δ at eps_bureau, rounded down ({_DEC})",
               "delta_at_eps_bureau_upper": f"certified upper end of that δ, rounded up ({_DEC}): the value to cite",
               "delta_cite": "delta_at_eps_bureau_upper rounded up to 6 significant digits",
               "delta_worst_case": "the neighbour case (pair) whose upper end is the largest",
               "certification": "how the bracket was obtained: exact (lattice engine) or bracket (lattice-free "
                                "smoothed inversion; the DHC sweep's maxima)",
           }),
    Schema("family.csv", "family.csv",
           "exactdp product / portfolio: the release's guarantee, one row per target δ — the maximum over its "
           "worst-case neighbour cases of each case's certified bracket, beside the zCDP conversions.", {
               "delta_target": "target δ (exact decimal)",
               "configured_rho": "zCDP ρ the configuration spends (exact rational p/q; a portfolio: the sum)",
               "eps_bureau": f"{_BS}; upper bound rounded up ({_DEC})",
               "eps_cks": f"the optimal zCDP conversion (Canonne, Kamath & Steinke) of the same ρ; upper bound "
                          f"({_DEC})",
               "eps_exact_lower": "certified lower end of the bracket on the exact ε(δ) (max over cases), rounded down",
               "eps_exact_upper": "certified upper end of that bracket, rounded up: the value to cite",
               "eps_worst_case": "the case (cases.csv) whose upper end is the largest",
               "delta_at_eps_bureau_lower": "certified lower end of the exact δ at eps_bureau (max over cases)",
               "delta_at_eps_bureau_upper": "certified upper end of that δ, rounded up: the value to cite",
               "delta_worst_case": "the case whose upper end is the largest",
               "certification": "exact (every case by the lattice engine) or bracket (lattice-free smoothed inversion)",
           }),
    Schema("cases.csv", "cases.csv",
           "The worst-case neighbours (cases) the maxima of family.csv are over.", {
               "case": "case number (1-based, as --cases and the worst-case columns name it)",
               "label": "what the neighbour changes (a product's choice of groups or households; a portfolio: one "
                        "case of every member, joined by ' | ')",
               "rho": "zCDP ρ of this case's composition (decimal text), where the command gives it",
           }),
    Schema("tradeoff.csv", "tradeoff.csv",
           "The f-DP trade-off β = f(α) of the release at each requested α: the minimum over the cases.", {
               "alpha": "type I error α (exact)",
               "beta_lower": "certified lower bound on β (minimum over the cases of their lower ends, rounded down): "
                             "the value to cite",
               "beta_upper": "certified upper end (minimum over the cases of their upper ends, rounded up)",
               "worst_case": "the case attaining the minimum",
           }),
    Schema("calibration.csv", "calibration.csv",
           "exactdp calibrate: the largest uniform reduction of the noise variances that still meets the target, "
           "one row per target δ.", {
               "scope": "what was scaled: the design, a pair, one level, or the whole release",
               "target_delta": "target δ",
               "target_epsilon": "target ε (default the Bureau's Bun–Steinke ε at the design's ρ and target_delta)",
               "variance_reduction": "certified achievable variance reduction 1 − scale (the value to cite)",
               "variance_reduction_lower": "lower end of the certified bracket on the optimal reduction (= the "
                                           "achievable one)",
               "variance_reduction_upper": "upper end: the reduction at scale_infeasible, certified to miss the target "
                                           "(that every larger reduction misses it too is not claimed: δ is not "
                                           "proved monotone in σ²)",
               "scale": "the variance scaling c to deploy (σ² → c·σ², exact rational); certified to meet the target",
               "scale_infeasible": "a scaling c certified to violate the target (the bracket's other end)",
               "delta_at_scale_upper_bound": "certified upper bound on δ(target_epsilon) after scaling by scale",
               "evaluations": "exact δ evaluations the search made",
               "argmax_pair": "release calibrations: the pair attaining the maximum (empty otherwise)",
               "pairs_evaluated": "release calibrations: pairs certified by an exact evaluation",
               "pairs_pruned": "release calibrations: pairs certified by the CKS bound alone",
               "pairs_sandwiched": "always 0 (no pair is certified through a neighbouring design: δ is not "
                                   "monotone in σ²)",
           }),
    Schema("sigma2.csv", "sigma2.csv",
           "exactdp tune: every measured (level, query) cell of the full chain, before and after tuning.", {
               "level": "geographic level",
               "query": "query (q1, q2, … in the report's figures, in this order)",
               "group": "the group of cells that share one variance multiplier (a level, a query or the cell)",
               "weight": "the cell's weight in the objective Σ w·σ² (exact)",
               "rho_before": "the input's zCDP ρ of the cell (exact p/q)",
               "rho_after": "the tuned ρ of the cell (exact p/q; in tuned.toml)",
               "sigma2_before": "the input's noise variance 1/ρ",
               "sigma2_after": "the tuned noise variance 1/ρ",
               "variance_multiplier": "sigma2_after / sigma2_before (below 1: less noise)",
               "change_percent": "(variance_multiplier − 1) × 100",
           }),
    Schema("groups.csv", "groups.csv",
           "exactdp tune: per level and per query, the total noise variance before and after (full chain).", {
               "kind": "level or query",
               "name": "its name",
               "sigma2_sum_before": "Σσ² of its cells, input",
               "sigma2_sum_after": "Σσ² of its cells, tuned",
               "weighted_before": "Σ w·σ² of its cells, input",
               "weighted_after": "Σ w·σ² of its cells, tuned",
               "change_percent": "(weighted_after / weighted_before − 1) × 100",
               "multiplier_min": "the smallest variance multiplier of its cells",
               "multiplier_max": "the largest variance multiplier of its cells",
           }),
    Schema("trace.csv", "trace.csv",
           "exactdp tune: every batch of exact evaluations the search made, in order.", {
               "batch": "batch number",
               "purpose": "why the batch was evaluated (search stage)",
               "design": "the design's identifier (a hash of its multipliers)",
               "x": "the stage's scalar (e.g. the scaling tried), exact",
               "pairs": "neighbour pairs evaluated in the batch",
               "max_delta_upper": "the largest certified upper bound of δ(ε_target) over those pairs",
               "max_pair": "the pair attaining it",
               "status": "feasible (every pair's upper bound ≤ δ), infeasible (some lower bound > δ) or undecided",
               "objective": "the design's objective (Σ w·σ², or the uniform multiplier)",
               "total_rho": "the design's total zCDP ρ of one path (exact)",
           }),
    Schema("deploy.csv", "deploy.csv",
           "exactdp calibrate: the noise to deploy, one row per target δ and cell (a group of the design's "
           "mechanisms, or a (level, query) cell of the allocation's full-chain budget table).", {
               "target_delta": "target δ",
               "cell": "the group (its input σ², shift and count) or level/query",
               "scaled": "1 if the calibration scaled this cell's variance, 0 if it is left as it was",
               "sigma2_input": "the input's σ² of the cell (exact p/q)",
               "sigma2_deploy": "the σ² to deploy (exact p/q, = scale × sigma2_input when scaled): certified to meet "
                                "the target; deploy this exact value",
               "sigma2_deploy_decimal": "sigma2_deploy as a decimal rounded up (for reading)",
               "sigma2_infeasible": "scale_infeasible × sigma2_input: certified to miss the target (the bracket's "
                                    "other side)",
               "rho_deploy": "the cell's zCDP ρ = shift²/(2·sigma2_deploy) (allocations: the ρ_q of the full chain; "
                             "each path multiplies it by the path's level multiplier as before)",
           }),
)


@dataclass(frozen=True)
class CsvEntry:
    """One CSV kind of a folder: the name shown, how many files, what it is, and
    ``columns`` as (name, meaning) pairs in the header's order."""

    name: str
    count: int
    about: str
    columns: tuple

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        line = fh.readline().rstrip("\r\n")
    return [c.strip() for c in line.split(",")] if line else []


def _schema_of(rel: str, extra: dict):
    if rel in extra:
        return Schema(rel, rel, extra[rel].get("__about__", ""), extra[rel])
    for s in SCHEMAS:
        if fnmatch.fnmatch(rel, s.pattern):
            return s
    return None


def _meanings(header, schema) -> tuple:
    cols = schema.columns if schema is not None else {}
    out, digits = [], [c for c in header if c.isdigit()]
    for c in header:
        if c.isdigit() and "#" in cols:
            if c == digits[0]:
                out.append((f"{digits[0]} … {digits[-1]}" if len(digits) > 1 else c, cols["#"]))
            continue
        out.append((c, cols.get(c, UNDOCUMENTED)))
    return tuple(out)


def _own_report(out: Path, path: Path) -> bool:
    """True when a folder between ``out`` and ``path`` has its own ``report.html`` (a job's
    folder inside another's, e.g. census-2020's DHC sweep): that page describes the file."""
    folder = path.parent
    while folder != out and out in folder.parents:
        if (folder / "report.html").is_file():
            return True
        folder = folder.parent
    return False


def column_dictionary(out_dir, extra: dict | None = None) -> list[CsvEntry]:
    """The CSV files under ``out_dir``, one :class:`CsvEntry` per kind, in a stable order.

    ``extra``: descriptions of files exactdp does not write itself, ``{relative path:
    {column: meaning, "__about__": what the file is}}``.  Files of one known kind
    (``pairs/pair_*.csv``) are described once, from the first file's header.  A subfolder
    with its own ``report.html`` is left to that page.
    """
    out = Path(out_dir)
    extra = extra or {}
    groups: dict = {}
    for path in sorted(out.rglob("*.csv")):
        rel = path.relative_to(out).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if _own_report(out, path):
            continue
        schema = _schema_of(rel, extra)
        key = schema.shown if schema is not None else rel
        if key not in groups:
            groups[key] = [schema, path, 0]
        groups[key][2] += 1
    entries = []
    order = {s.shown: k for k, s in enumerate(SCHEMAS)}
    for key in sorted(groups, key=lambda k: (order.get(k, -1), k)):
        schema, first, count = groups[key]
        about = schema.about if schema is not None else UNDOCUMENTED
        if count > 1:
            about += f" ({count} files of this kind.)"
        entries.append(CsvEntry(key, count, about, _meanings(_header(first), schema)))
    return entries
