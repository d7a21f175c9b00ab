"""``report.html`` of an ``exactdp tune`` folder: the tuned allocation, page by page like the sweep's.

Read from the folder's own files only (``result.json``, ``groups.csv``, ``sigma2.csv``,
``manifest.json``, the profiles' ``summary.csv`` and ``plots/``): the headline (the objective
before and after, the certified largest δ(ε) over every pair), the sentence to cite, the
allocation before and after, the figures, the certified constraint and its worst pair,
"What this guarantee means", the method and the provenance.
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.meaning import curve_success_bounds, meaning_section, pair_vertex_files
from exactdp.report.numbers import display, round_down, round_up, to_text
from exactdp.report.text import ERROR_BOUND, METHOD_SWEEP, versions_rows

__all__ = ["write_tune_report", "tune_report"]


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _delta_text(q: Fraction) -> str:
    """A target δ as the sweep writes it (``1e-6``), else its decimal."""
    from exactdp.report.jobs import canonical_delta

    return canonical_delta(q)


def _eps_up(result: dict) -> str:
    """The target ε as a decimal text rounded up: exact when given; else the Bun–Steinke ε
    of the input's ρ (from its exact-real callable at 40 digits, 20 kept, rounded up)."""
    target = result["target"]
    if target.get("eps"):
        return to_text(Fraction(target["eps"]), 20, "up")
    return _bs(Fraction(result["allocation"]["total_rho_before"]), Fraction(target["delta"]))


def _bs(rho: Fraction, delta: Fraction) -> str:
    from exactdp.accounting.base import bun_steinke_epsilon

    return to_text(bun_steinke_epsilon(rho, delta)(40), 20, "up")


def _profile_row(out: Path, folder: str, delta: str):
    return next((r for r in _rows(out / folder / "summary.csv") if r["delta_target"] == delta), None)


def _headline(result: dict, out: Path, d_text: str) -> tuple:
    o, after, before, cert = (result["objective"], result["max_delta_after"], result["max_delta_before"],
                              result["certificate"])
    n = result["allocation"]["pairs"]
    uniform = result["problem"]["objective"] == "uniform"
    if uniform:
        red = 1 - Fraction(o["after_exact"])
        heads = [Headline("uniform variance reduction meeting the target on every pair",
                          f"{round_down(red * 100, 6)} %", f"every σ² × {o['after_exact']} (exact)", "input: 0 %")]
    else:
        change = Fraction(o["change_percent"])
        heads = [Headline(f"total weighted noise variance Σ w·σ² (full chain), one multiplier per "
                          f"{result['problem']['vary']}", f"{display(o['change_percent'], 6)} %",
                          f"Σ w·σ²: {display(o['before'], 10)} → {display(o['after'], 10)} (exact "
                          f"{o['after_exact']})", "input: 0 %" if change else "")]
    up = Fraction(after["upper_exact"])
    heads.append(Headline(f"largest δ at the target ε over all {n} neighbour pairs, tuned allocation",
                          f"δ ≤ {round_up(to_text(up, 30, 'up'))}",
                          f"[{to_text(Fraction(after['lower']), 10, 'down')}, {to_text(up, 10, 'up')}] (pair "
                          f"{after['pair']}); Arb enclosure of that pair [{cert['lower']}, {cert['upper']}]",
                          f"target δ = {d_text}; input: δ ≤ "
                          f"{round_up(to_text(Fraction(before['upper_exact']), 30, 'up'))} (pair {before['pair']})"))
    row_a, row_b = _profile_row(out, "profile-after", d_text), _profile_row(out, "profile-before", d_text)
    if row_a is not None:
        heads.append(Headline(f"ε at δ = {d_text}, tuned allocation (max over all {n} pairs)",
                              f"ε ≤ {round_up(row_a['eps_overall_upper'])}",
                              f"[{row_a['eps_overall_lower']}, {row_a['eps_overall_upper']}] (pair "
                              f"{row_a['eps_argmax_pair']})",
                              (f"input: ε ≤ {round_up(row_b['eps_overall_upper'])}; " if row_b else "")
                              + f"the Bureau's ε of the tuned ρ: {round_up(row_a['eps_bureau'])}"))
    return tuple(heads)


def _citation(result: dict, eps: str, d_text: str) -> str:
    a, after = result["allocation"], result["max_delta_after"]
    o = result["objective"]
    what = (f"every noise variance multiplied by {o['after_exact']}" if result["problem"]["objective"] == "uniform"
            else f"its total weighted noise variance changed by {display(o['change_percent'], 6)} % from the input's")
    return (f"The allocation {a['tuned']} (exactdp tune of {a['input']}, one variance multiplier per "
            f"{result['problem']['vary']}; {what}) satisfies, for every one of its {a['pairs']} neighbour pairs, "
            f"(ε, δ)-differential privacy with ε = {round_up(eps)} and δ = "
            f"{round_up(to_text(Fraction(after['upper_exact']), 30, 'up'))} ≤ {d_text} (certified upper bound, "
            "exactdp).")


def _query_key(out: Path) -> list[str]:
    names = list(dict.fromkeys(r["query"] for r in _rows(out / "sigma2.csv")))
    return names


def _allocation_sections(out: Path, result: dict) -> tuple:
    """Per level and per query (groups.csv), then every cell (sigma2.csv)."""
    q_of = {q: f"q{k}" for k, q in enumerate(_query_key(out), start=1)}
    p = result["problem"]
    groups = [("", "Σσ² input", "Σσ² tuned", "change", "variance multiplier σ'²/σ²")]
    for r in _rows(out / "groups.csv"):
        m_lo, m_hi = display(r["multiplier_min"], 6), display(r["multiplier_max"], 6)
        name = f"level {r['name']}" if r["kind"] == "level" else f"query {q_of.get(r['name'], '')}: {r['name']}"
        groups.append((name, display(r["sigma2_sum_before"], 8), display(r["sigma2_sum_after"], 8),
                       f"{display(r['change_percent'], 5)} %", m_lo if m_lo == m_hi else f"{m_lo} … {m_hi}"))
    cells = [("level", "query", "σ² input", "σ² tuned", "σ'²/σ²", "change")]
    for r in _rows(out / "sigma2.csv"):
        cells.append((r["level"], f"{q_of[r['query']]}: {r['query']}", display(r["sigma2_before"], 8),
                      display(r["sigma2_after"], 8), display(r["variance_multiplier"], 6),
                      f"{display(r['change_percent'], 5)} %"))
    words = (f"One variance multiplier per {p['vary']}, each in [{', '.join(p['bounds'])}]"
             + ("; no variance above the input's on any path" if p["no_worse"] else "") + ".")
    return (Section("The allocation before and after",
                    (f"The total noise variance Σσ² of each level and each query over the cells of the full chain "
                     f"(groups.csv). {words}",), tuple(groups), "allocation"),
            Section("Every cell", ("The noise variance of every measured (level, query) cell of the full chain, "
                                   "before and after (sigma2.csv; the exact ρ are in tuned.toml). Each path spends "
                                   "these budgets times its level multipliers, as in the input.",),
                    tuple(cells), "cells"))


def _constraint_section(result: dict, eps: str, d_text: str) -> Section:
    after, before, cert = result["max_delta_after"], result["max_delta_before"], result["certificate"]
    n = result["allocation"]["pairs"]
    rule = "given" if result["target"].get("eps") else result["target"]["eps_rule"]
    paras = (f"The constraint: for every one of the {n} neighbour pairs of the tuned allocation, the certified upper "
             f"bound of δ(ε) at ε = {display(eps, 12)} ({rule}) "
             f"is at most the target δ = {d_text}. The tuned design was evaluated exactly on every pair, as "
             "reported (no pair is certified through a neighbouring design).",
             f"Its worst pair is {after['pair']}: δ ∈ [{after['lower']}, {after['upper']}] by the engine, and "
             f"[{cert['lower']}, {cert['upper']}] by an independent Arb enclosure ({cert['method']}), whose upper end "
             f"(an exact rational in result.json) is at most {result['target']['delta']} exactly. The input's worst "
             f"pair was {before['pair']} with δ ≤ {before['upper']}.",
             "The search is a heuristic: the result is certified to meet the target, its optimality is not. The "
             "settled designs of its stages:")
    table = [("stage", "scalar x", "x certified infeasible", "objective", "largest δ upper bound")]
    for s in result["stages"]:
        table.append((s["stage"] + (" (chosen)" if s["stage"] == result["chosen_stage"] else ""), s["x"],
                      s["x_infeasible"] or "", display(s["objective"], 10), display(s["max_delta_upper"], 10)))
    return Section("The certified constraint and its worst pair", paras, tuple(table), "constraint")


def _figures(out: Path, result: dict, d_text: str) -> tuple:
    plots = out / "plots"
    vary = result["problem"]["vary"]
    figs = []
    if (plots / "sigma2_change.png").is_file():
        figs.append(FigureRef("plots/sigma2_change.png",
                              f"The tuned variance of every (level, query) cell relative to the input's, σ'²/σ² (one "
                              f"multiplier per {vary}; blue: less noise, red: more; the number is written in each "
                              "cell). Queries q1, q2, … are named in the table 'The allocation before and after'."))
    if (plots / "sigma2_totals.png").is_file():
        figs.append(FigureRef("plots/sigma2_totals.png",
                              "The total noise variance Σσ² of each level and of each query over the full chain, "
                              "input (grey) and tuned (blue), log scale."))
    if (plots / "eps_delta.png").is_file():
        figs.append(FigureRef("plots/eps_delta.png",
                              "The exact privacy profile of the input and of the tuned allocation, ε(δ) maximised "
                              "over every neighbour pair (certified upper ends, from the sweeps in profile-before/ "
                              f"and profile-after/), with the target (ε, δ = {d_text}) marked."))
    return tuple(figs)


def _meaning(out: Path, result: dict, eps: str) -> Section:
    after = result["max_delta_after"]
    d_up = round_up(to_text(Fraction(after["upper_exact"]), 30, "up"))
    profile = [(r["eps_overall_upper"], r["delta_target"]) for r in _rows(out / "profile-after" / "summary.csv")]
    man = out / "profile-after" / "manifest.json"
    pairs = json.loads(man.read_text(encoding="utf-8")).get("pairs", []) if man.is_file() else []
    curve = curve_success_bounds(pair_vertex_files(out / "profile-after", pairs))
    rho = Fraction(result["allocation"]["total_rho_after"])
    d = Fraction(result["target"]["delta"])
    return meaning_section(eps, d_up, quoted=(_bs(rho, d), _delta_text(d)), curve=curve, profile=profile,
                           who=f"the tuned allocation {result['allocation']['tuned']}")


def _provenance(out: Path, result: dict) -> tuple:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8")) if (out / "manifest.json").is_file() \
        else {}
    a, p, t = result["allocation"], result["problem"], result["target"]
    rows = [("input allocation", f"{a['input']} (content sha256 {a['input_content_hash']})"),
            ("tuned allocation", f"tuned.toml: {a['tuned']} (content sha256 {a['tuned_content_hash']})"),
            ("total ρ of one path", f"input {a['total_rho_before']}, tuned {a['total_rho_after']}"),
            ("target", f"δ(ε) ≤ {t['delta']} at ε = {t['eps'] or t['eps_rule']}"),
            ("problem", f"objective {p['objective']}, one multiplier per {p['vary']}, bounds {', '.join(p['bounds'])}"
                        + (", no worse" if p["no_worse"] else "")),
            ("weights", str(manifest.get("weights", "")) or "equal"),
            ("design grid", p["grid"]),
            ("design identifier", result["design"])]
    run = manifest.get("run", {})
    if run:
        rows.append(("run", f"{run.get('batches')} batches ({run.get('computed')} computed, {run.get('reused')} "
                            f"reused), backend {run.get('backend')}, {run.get('jobs')} jobs"))
    if manifest.get("rel_tol"):
        rows.append(("certified relative accuracy of each tail", manifest["rel_tol"]))
    return tuple(rows) + versions_rows(manifest.get("versions", {}))


def _objective_words(result: dict) -> str:
    if result["problem"]["objective"] == "uniform":
        return "the largest uniform variance reduction"
    return "the smallest total weighted noise variance Σ w·σ² over the cells of the full chain"


def tune_report(out_dir) -> Report:
    """The :class:`Report` of a finished tune folder (its ``result.json`` must exist)."""
    out = Path(out_dir)
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    d = Fraction(result["target"]["delta"])
    d_text = _delta_text(d)
    eps = _eps_up(result)
    a = result["allocation"]
    method = METHOD_SWEEP + (
        "Tuning: water-filling proxy shapes and exact-gradient reshapes, each pushed to the boundary of the "
        "constraint by certified secant brackets on a few active pairs; then every pair of the chosen design is "
        "evaluated exactly and its worst pair enclosed by an independent Arb certificate. Designs are taken on a "
        "small-lattice grid, so the design evaluated is exactly the design reported (docs/tune.rst).", ERROR_BOUND)
    return Report(
        title=f"exactdp tune — {a['input']} → {a['tuned']}",
        summary=(f"The noise variances of {a['input']} re-allocated (one multiplier per {result['problem']['vary']}, "
                 f"objective: {_objective_words(result)}) so that every one of its {a['pairs']} neighbour "
                 f"pairs keeps a certified δ(ε) ≤ {d_text} at ε = {display(eps, 10)}. The tuned allocation is "
                 "tuned.toml, usable wherever an allocation is."),
        headline=_headline(result, out, d_text), citation=_citation(result, eps, d_text), method=method,
        provenance=_provenance(out, result), figures=_figures(out, result, d_text),
        sections=(*_allocation_sections(out, result), _constraint_section(result, eps, d_text),
                  _meaning(out, result, eps)))


def write_tune_report(out_dir) -> Path:
    """Write ``report.html`` into a finished ``exactdp tune`` folder and return its path.

    Parameters
    ----------
    out_dir : path
        The run folder (``result.json``, ``groups.csv``, ``sigma2.csv``; figures and profiles
        when the run drew them).

    Returns
    -------
    Path
        The page.

    Notes
    -----
    Every number is read from the folder's files: certified upper bounds are written
    rounded up, the objective (exact) to the digits shown.
    """
    return write_report(out_dir, tune_report(out_dir))
