"""The report of a sweep folder: its headline, figures, method, provenance and columns.

:func:`write_sweep_report` reads only the folder's own files (``manifest.json``,
``summary.csv``, ``release.csv``, ``plots/*.png``), so it can be run again on any finished
sweep (``exactdp.report.write_sweep_report("exactdp-results")``); the sweep's driver calls
it as its last step.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.meaning import curve_success_bounds, meaning_section, pair_vertex_files
from exactdp.report.numbers import display, round_down, round_up
from exactdp.report.text import ERROR_BOUND, METHOD_SWEEP, describe_allocation, settings_rows, versions_rows

__all__ = ["write_sweep_report", "sweep_report"]

_TARGET = Fraction(1, 10**10)


def _csv(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:] if ln]


def _pick(rows: list[dict]) -> dict:
    """The summary row of δ = 1e-10, else of the δ nearest it (in ratio)."""
    def dist(r):
        d = Fraction(r["delta_target"])
        return max(d / _TARGET, _TARGET / d)
    return min(rows, key=dist)


def _bracket(lo: str, hi: str) -> str:
    return f"[{round_down(lo, 12)}, {round_up(hi, 12)}]"


def _headline(row: dict, rho: str, n_pairs: int, complete: bool) -> tuple:
    over = "over all" if complete else "over the"
    d = row["delta_target"]
    eps_bs = round_up(row["eps_bureau"])
    ratio = display(str(Fraction(d) / Fraction(row["delta_overall_upper"])), 4)
    return (
        Headline(f"overall ε at δ = {d} (max {over} {n_pairs} neighbour pairs)",
                 f"ε ≤ {round_up(row['eps_overall_upper'])}",
                 f"ε ∈ {_bracket(row['eps_overall_lower'], row['eps_overall_upper'])} (certified bracket; "
                 f"largest at pair {row['eps_argmax_pair']})",
                 f"the Bureau's ε at δ = {d}: {eps_bs} (Bun–Steinke conversion of ρ = {rho})"),
        Headline(f"overall δ at the Bureau's ε = {eps_bs} (max {over} {n_pairs} pairs)",
                 f"δ ≤ {round_up(row['delta_overall_upper'])}",
                 f"δ ∈ {_bracket(row['delta_overall_lower'], row['delta_overall_upper'])} at ε = "
                 f"{display(row['eps_bureau'], 15)} (certified bracket; largest at pair {row['delta_argmax_pair']})",
                 f"the Bureau's δ: {d}, {ratio}× the exact δ"),
    )


def _release_headlines(out: Path, delta: str) -> tuple:
    path = out / "release.csv"
    if not path.is_file():
        return ()
    rows = [r for r in _csv(path) if r["delta_target"] == delta]
    return tuple(
        Headline(f"whole release, pair {r['path_i']}-{r['path_j']} ∘ P.L. 94-171: ε at δ = {delta}",
                 f"ε ≤ {round_up(r['eps_upper'])}", f"ε ∈ {_bracket(r['eps_lower'], r['eps_upper'])} (certified "
                 "bracket, lattice-free accountant)",
                 f"the Bureau's ρ-sum ε: {round_up(r['eps_bureau_rho_sum'])} (ρ = {r['rho_sum']})")
        for r in rows)


def _all_deltas(rows: list[dict]) -> Section:
    table = [("target δ", "Bureau's ε", "exact overall ε (≤)", "at pair", "exact δ at the Bureau's ε (≤)",
              "at pair", "target δ / exact δ")]
    for r in rows:
        ratio = Fraction(r["delta_target"]) / Fraction(r["delta_overall_upper"])
        table.append((r["delta_target"], display(r["eps_bureau"], 8), round_up(r["eps_overall_upper"], 8),
                      r["eps_argmax_pair"], round_up(r["delta_overall_upper"], 6), r["delta_argmax_pair"],
                      display(str(ratio), 4)))
    return Section("The guarantee at every target δ", (
        "Each row: the Bureau's ε for the target δ (Bun–Steinke), the exact overall ε at that δ and the exact "
        "overall δ at the Bureau's ε, both certified upper bounds rounded up; full digits and brackets are in "
        "summary.csv.",), tuple(table), "all-deltas")


def _figures(out: Path, manifest: dict, n_pairs: int) -> tuple:
    rho = manifest["allocation"]["total_rho"]
    mu = display(str((2 * float(Fraction(rho))) ** 0.5), 5)
    heat = manifest.get("results", {}).get("heatmap_delta", "1e-10")
    caps = {
        "plots/eps_delta.png": (
            f"The privacy profile δ(ε). Blue: the exact overall curve, the maximum over the {n_pairs} neighbour "
            f"pairs, each point a certified upper bound. Red: the Bureau's Bun–Steinke conversion of the total "
            f"ρ = {rho}, the curve behind the published ε. Orange: the optimal zCDP conversion of the same ρ "
            "(Canonne, Kamath & Steinke). Black dotted: the continuous-Gaussian (μ-GDP) curve, a reference only — "
            "it is not a bound for discrete noise. Lower is more private: at every δ the exact curve lies left of "
            "the conversions."),
        "plots/tradeoff.png": (
            "The f-DP trade-off curve: the type II error β of the best test between neighbouring datasets at "
            "type I error α (overall: the lower convex envelope of all pairs' curves). Left: the power 1 − β at "
            "small α on log–log axes; the dotted diagonal is a test that learns nothing. Right: probit axes, on "
            f"which the Gaussian trade-off with μ = √(2ρ) = {mu} (dashed) is a straight line; the exact curve "
            "follows it closely over twenty orders of magnitude."),
        "plots/spread_heatmap.png": (
            f"How much the neighbour pairs differ: 1 − δ_pair/δ_max in parts per million at the Bureau's ε for "
            f"δ = {heat} (0: the worst pair; blank: a pair not in this sweep). Each path is labelled by its number "
            "and one letter per geographic level where it spends budget (· where the spine bypasses the level); "
            "the key is under the map."),
    }
    return tuple(FigureRef(p, c) for p, c in caps.items() if (out / p).is_file())


def sweep_report(out_dir, allocation=None) -> Report:
    """The :class:`~exactdp.report.document.Report` of a finished sweep folder
    (``allocation``: the :class:`~exactdp.census.allocations.Allocation` swept, for its
    description and provenance; without it a built-in one of the manifest's name and
    content hash is used)."""
    out = Path(out_dir)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    rows = _csv(out / "summary.csv")
    alloc = manifest["allocation"]
    n_paths = int(alloc["n_paths"])
    n_pairs = len(manifest["pairs"])
    complete = n_pairs == n_paths * (n_paths + 1) // 2
    row = _pick(rows)
    rho = alloc["total_rho"]
    version = manifest.get("versions", {}).get("exactdp", "?")
    headline = _headline(row, rho, n_pairs, complete) + _release_headlines(out, row["delta_target"])
    eps = round_up(row["eps_overall_upper"])
    if complete:
        citation = (f"Under the privacy-loss budget allocation {alloc['name']} (total zCDP ρ = {rho}), the release "
                    f"satisfies (ε, δ)-differential privacy with ε = {eps} at δ = {row['delta_target']} for the "
                    f"change of one record: a certified upper bound, the maximum over all {n_pairs} neighbour "
                    f"pairs of allocation paths (exact privacy accounting, exactdp {version}). The Bureau's "
                    f"conversion of the same ρ gives ε = {round_up(row['eps_bureau'])}.")
        notes: tuple = ()
    else:
        citation = (f"For the {n_pairs} neighbour pairs of allocation {alloc['name']} computed here, the largest "
                    f"exact ε at δ = {row['delta_target']} is at most {eps} (certified; exactdp {version}).")
        notes = (f"This sweep covers {n_pairs} of the {n_paths * (n_paths + 1) // 2} neighbour pairs of the "
                 "allocation. Its maxima are the guarantee of these pairs only — a lower bound on the release's "
                 "guarantee, not the guarantee. Run the full sweep to cite a number for the release.",)
    if not (out / "plots").is_dir():
        notes += ("The figures were not drawn (the sweep ran with --no-plots).",)
    worst = manifest.get("results", {}).get("worst_certified", {})
    method = METHOD_SWEEP + (ERROR_BOUND + (
        f" In this sweep the worst certified relative error of a δ is {worst.get('delta_rel_error', '?')}, the "
        f"widest ε bracket is {worst.get('eps_rel_width', '?')} relative and the worst trade-off vertex error is "
        f"{worst.get('tradeoff_vertex_rel_error', '?')} relative."),)
    provenance = (describe_allocation(alloc, allocation)
                  + (("pairs", f"{n_pairs} of {n_paths * (n_paths + 1) // 2}"
                      + ("" if complete else ": " + ", ".join(manifest["pairs"][:60])
                         + (" …" if n_pairs > 60 else ""))),
                     ("target δ", f"{len(rows)}: {rows[0]['delta_target']} … {rows[-1]['delta_target']}"))
                  + settings_rows(manifest.get("settings", {})) + versions_rows(manifest.get("versions", {}))
                  + (("output format", manifest.get("format", "?")), ("status", manifest.get("status", "?"))))
    return Report(
        title=f"exactdp sweep — {alloc['name']}",
        summary=(f"The exact privacy guarantee of the allocation {alloc['name']} for one person's record: for each "
                 f"of {n_pairs} neighbour pairs of allocation paths, δ at the Bureau's ε and ε at each target δ, "
                 "each with a certified error bound, and the pairs' f-DP trade-off curves; the release's guarantee "
                 "is the maximum over pairs."),
        headline=headline, citation=citation, method=method, provenance=provenance,
        figures=_figures(out, manifest, n_pairs), sections=(_meaning(out, manifest, row, rows), _all_deltas(rows)),
        notes=notes)


def _meaning(out: Path, manifest: dict, row: dict, rows: list[dict]) -> Section:
    """"What this guarantee means" for the headline row: the exact profile's points, the
    pairs' certified trade-off vertices, and the Bureau's (ε, δ) beside them."""
    profile = [(r["eps_overall_upper"], r["delta_target"]) for r in rows]
    profile += [(r["eps_bureau"], r["delta_overall_upper"]) for r in rows]
    curve = curve_success_bounds(pair_vertex_files(out, manifest["pairs"]))
    return meaning_section(row["eps_overall_upper"], row["delta_target"], curve=curve, profile=profile,
                           quoted=(row["eps_bureau"], row["delta_target"]), who="the release")


def write_sweep_report(out_dir, allocation=None) -> Path:
    """Write ``report.html`` into a finished sweep folder and return its path.

    Parameters
    ----------
    out_dir : path
        A folder written by :func:`exactdp.sweep.driver.run_sweep` (its manifest says
        ``"status": "complete"``).
    allocation : Allocation, optional
        The allocation swept (its description and provenance go into the page); by
        default the built-in allocation of the manifest's name, if its content hash
        matches.

    Returns
    -------
    Path
        The page, ``out_dir / "report.html"``.

    Notes
    -----
    The headline is the row of δ = 1e-10 (else the target δ nearest it) of
    ``summary.csv``: the overall ε (upper end of the certified bracket, rounded up to 6
    digits) and the overall δ at the Bureau's ε (upper bound, rounded up).  For a sweep
    of only some pairs the page says that its maxima are not the release's guarantee.
    """
    return write_report(out_dir, sweep_report(out_dir, allocation))
