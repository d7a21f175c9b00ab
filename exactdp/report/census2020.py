"""The folder of ``exactdp census-2020``: ``census_2020.csv``, one figure, ``report.html``.

One page for everyone who argues about the 2020 Census's noise: every product and run in
one table — configured zCDP ρ, the Bureau's ε, the exact ε(δ) to cite, the exact δ at the
Bureau's ε — the composition of them all for one person, what that guarantee means, the
provenance of every model and the assumptions, stated beside the numbers they affect.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path

from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.meaning import meaning_section
from exactdp.report.numbers import display, round_down, round_up, to_text
from exactdp.report.text import ERROR_BOUND, METHOD_SWEEP, versions_rows

__all__ = ["write_census_report", "census_csv_rows", "CENSUS_FILE", "CENSUS_COLUMNS"]

CENSUS_FILE = "census_2020.csv"
CENSUS_COLUMNS = ("product", "run", "key", "scope", "n_cases", "complete", "configured_rho", "configured_rho_exact",
                  "delta_target", "eps_bureau", "eps_cks", "eps_exact_lower", "eps_exact_upper", "eps_cite",
                  "eps_worst_case", "delta_at_eps_bureau_lower", "delta_at_eps_bureau_upper", "delta_cite",
                  "delta_worst_case", "certification")
_D = "1e-10"


def rho_text(q: Fraction) -> str:
    """A rational (ρ, α) as its exact decimal when it has one (``"4.944"``), else 20
    significant digits."""
    q = Fraction(q)
    d, n = q.denominator, 0
    while d % 2 == 0 or d % 5 == 0:
        d //= 2 if d % 2 == 0 else 5
        n += 1
    if d != 1 or n > 40:
        return to_text(q, 20, "nearest")
    text = str(q.numerator * 10**n // q.denominator).rjust(n + 1, "0")
    return (f"{text[:-n]}.{text[-n:]}".rstrip("0").rstrip(".") if n else text)


def census_csv_rows(result) -> list[dict]:
    """The rows of ``census_2020.csv`` (column → decimal text) of a
    :class:`~exactdp.studies.census2020.Census2020`."""
    out = []
    for r in result.rows:
        rho = Fraction(r.configured_rho)
        out.append({
            "product": r.product, "run": r.run, "key": r.key, "scope": r.scope, "n_cases": str(r.n_cases),
            "complete": "1" if r.complete else "0", "configured_rho": rho_text(rho),
            "configured_rho_exact": f"{rho.numerator}/{rho.denominator}", "delta_target": _D,
            "eps_bureau": r.eps_bureau, "eps_cks": r.eps_cks, "eps_exact_lower": r.eps_lower,
            "eps_exact_upper": r.eps_upper, "eps_cite": round_up(r.eps_upper), "eps_worst_case": r.eps_worst,
            "delta_at_eps_bureau_lower": r.delta_lower, "delta_at_eps_bureau_upper": r.delta_upper,
            "delta_cite": round_up(r.delta_upper), "delta_worst_case": r.delta_worst,
            "certification": r.certification})
    return out


def _write_csv(path: Path, rows: list[dict]) -> None:
    from exactdp.runs.files import atomic_write_text

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CENSUS_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(path, buf.getvalue())


def _name(r) -> str:
    return f"{r.product}{'' if r.complete else ' — PARTIAL'}"


def _figure(result):
    from matplotlib.figure import Figure

    rows = list(result.rows)
    fig = Figure(figsize=(8.0, 0.42 * len(rows) + 1.6))
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows):
        ax.plot([float(r.eps_upper), float(r.eps_bureau)], [y, y], color="0.75", lw=1.2, zorder=1)
    ax.scatter([float(r.eps_bureau) for r in rows], ys, marker="o", color="tab:red", zorder=2,
               label="the Bureau's ε (Bun–Steinke of the configured ρ)")
    ax.scatter([float(r.eps_upper) for r in rows], ys, marker="s", color="tab:blue", zorder=3,
               label="exact ε (certified upper bound)")
    labels = [f"{r.run}: {_short(r)}" for r in rows]
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, 1.05 * max(float(r.eps_bureau) for r in rows))
    ax.set_xlabel(f"ε at δ = {_D} (smaller is more private)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _short(r) -> str:
    short = {"pl94-persons-2020": "P.L. 94-171 persons", "pl94-units-2020": "P.L. 94-171 units"}
    if r.key in short:
        return short[r.key]
    if r.kind == "portfolio":
        return "portfolio (all composed)"
    if r.key.startswith("dhc-"):
        return ("DHC persons" if "persons" in r.key else "DHC units") + ("" if r.complete else " (PARTIAL)")
    return r.product.split("(")[-1].rstrip(")")


def rho_short(q) -> str:
    """A ρ for the page: its exact decimal when short, else ``≈`` 8 digits (the CSV has it exactly)."""
    text = rho_text(q)
    return text if len(text.replace(".", "").lstrip("0")) <= 10 else f"≈ {display(text, 8)}"


def _cases(r) -> str:
    """The neighbour cases of a row, in a few words (the CSV's ``scope`` says more)."""
    if r.kind == "sweep":
        return (f"all {r.n_cases} pairs of paths" if r.complete else
                f"PARTIAL: {r.n_cases} of 946 pairs — not the guarantee")
    if r.kind == "topdown":
        return "pair 1-1 (the one public path)"
    if r.kind == "portfolio":
        return f"{r.n_cases} cases" + (f" (DHC persons at pair {_PAIR})" if r.run == "US" else "")
    return f"{r.n_cases} case{'s' if r.n_cases > 1 else ''}"


def _table(result) -> tuple:
    table = [("product", "run", "neighbour cases", "configured zCDP ρ",
              f"the Bureau's ε at δ = {_D} (Bun–Steinke of ρ)", f"exact ε({_D}) to cite (≤)",
              "exact ε: certified bracket", "exact δ at the Bureau's ε (≤)")]
    for r in result.rows:
        table.append((_name(r), r.run, _cases(r), rho_short(r.configured_rho), round_up(r.eps_bureau),
                      round_up(r.eps_upper), f"[{round_down(r.eps_lower, 11)}, {round_up(r.eps_upper, 11)}]",
                      round_up(r.delta_upper)))
    return tuple(table)


def _eq(q) -> str:
    short = rho_short(q)
    return short if short.startswith("≈") else f"= {short}"


def _headline(result) -> tuple:
    heads = []
    for key, what in (("portfolio-us", "United States: every product composed, one person"),
                      ("portfolio-pr", "Puerto Rico: every product composed, one person")):
        r = result.row(key)
        heads.append(Headline(
            f"{what} — ε at δ = {_D}", f"ε ≤ {round_up(r.eps_upper)}",
            f"ε ∈ [{round_down(r.eps_lower, 12)}, {round_up(r.eps_upper, 12)}] (certified; {r.scope}); exact δ "
            f"at the Bureau's ε ≤ {round_up(r.delta_upper)}",
            f"the Bureau's ε: {round_up(r.eps_bureau)} (Bun–Steinke of the summed ρ {_eq(r.configured_rho)})"))
    dhc = result.row("dhc-persons-2020")
    heads.append(Headline(
        f"DHC persons alone (US) — ε at δ = {_D}" + ("" if dhc.complete else " — PARTIAL, not the guarantee"),
        f"ε ≤ {round_up(dhc.eps_upper)}" if dhc.complete else f"ε ≥ {round_down(dhc.eps_lower)} (partial)",
        f"ε ∈ [{round_down(dhc.eps_lower, 12)}, {round_up(dhc.eps_upper, 12)}] ({dhc.scope}; largest at "
        f"{dhc.eps_worst})", f"the Bureau's ε: {round_up(dhc.eps_bureau)}"))
    return tuple(heads)


def _citation(result, version: str) -> str:
    us, pr = result.row("portfolio-us"), result.row("portfolio-pr")
    return (f"For one person in the 2020 Census, the composition of one neighbour of every formally private "
            f"product modelled here — P.L. 94-171, the DHC persons and units files (DHC persons at its full-chain "
            f"pair {_PAIR}), the Detailed DHC-A and DHC-B and the Supplemental DHC — satisfies (ε, δ)-differential "
            f"privacy with ε = {round_up(us.eps_upper)} at δ = {_D} in the United States and ε = "
            f"{round_up(pr.eps_upper)} "
            f"in Puerto Rico: certified upper bounds from exact privacy accounting (exactdp {version}). The "
            f"Bureau's conversion of the summed zCDP ρ gives ε = {round_up(us.eps_bureau)} and "
            f"{round_up(pr.eps_bureau)}.")


_PAIR = "13-13"


def _assumptions(result) -> Section:
    dhc = result.row("dhc-persons-2020")
    p13 = result.dhc_pair_13
    if p13 is None:
        at13 = (f"The DHC-only sweep used here does not include pair {_PAIR}, so this page cannot compare it with "
                "the other pairs.")
    else:
        lo, hi = p13
        gap = Fraction(dhc.eps_upper) - Fraction(lo)
        at13 = (f"The DHC-only sweep ({dhc.scope}) finds the file's largest exact ε at {dhc.eps_worst}: ε ≤ "
                f"{round_up(dhc.eps_upper, 12)}; at pair {_PAIR}, ε ∈ [{round_down(lo, 12)}, {round_up(hi, 12)}]. ")
        if dhc.eps_worst == f"pair {_PAIR}":
            at13 += f"So {_PAIR} is also the DHC file's worst pair on its own. "
        else:
            at13 += (f"On its own the DHC file is at most {round_up(gap, 2)} (in ε, {round_up(gap / Fraction(lo), 2)} "
                     f"relative) less private at its worst pair than at {_PAIR}; how the other products' composition "
                     "changes that difference is not computed here. ")
        if not dhc.complete:
            at13 += "This sweep covers only some pairs: its worst pair may not be the file's. "
    paras = (
        f"The portfolio is composed at DHC persons pair {_PAIR}. The portfolio rows (US) compose the DHC persons "
        f"file at its full-chain pair {_PAIR} — a record that stays on allocation path 13, released at every "
        "geographic level — as exactdp release does; they are not a maximum over the file's 946 pairs, whose "
        "compositions with the other products are not computed here. " + at13,
        "The portfolio's neighbouring relation. One neighbour of each product's own relation at once: one "
        "record changed in each TopDown file, one person added or removed in SafeTab-P, one household in "
        "SafeTab-H, one person row and two unit rows in PHSafe — exactly the neighbours whose zCDP is the "
        "Bureau's sum of the files' ρ. A person replaced in every product at once is a different relation and "
        "is not computed.",
        "PHSafe's worst neighbour (settled, one part tested rather than proven). Tumult's relation is one person "
        "row and up to two unit rows. The worst neighbour removes two identical households and one person of a "
        "third household of the same kind; case 1 (that household has at most 10 members) and case 2 (it is "
        "full at τ = 10, so a truncated member re-enters) are the two cases, and case 1 is the worse. Tumult's "
        "join sensitivity 2τ+2 is never reached in one cell, so the worst neighbour spends less than the "
        "configured ρ; the table still compares with the Bureau's ε of the configured ρ. Where exact dominance "
        "does not decide, a shift vector shorter in L2 by at least 9 % is taken as more private (true for the "
        "continuous Gaussian, for the discrete one up to terms ≤ 4e-8; tested, not proven).",
        "SafeTab's adaptivity (proven and tested). SafeTab-P's stage 1 picks each population group's stage-2 "
        "table from noisy counts. Given any stage-1 output, a person moves one cell of whichever table was "
        "chosen, by one, at the same variance, so the adaptive composition has the same privacy loss as the "
        "non-adaptive one (checked by enumerating the joint output to 1e-25 in tests/test_products_brute.py). "
        "SafeTab-H's choice uses SafeTab-P's published counts: adaptive composition of f-DP covers the portfolio. "
        "SafeTab-P's 30 cases are the possible numbers of detailed-only groups at the detailed regions; the "
        "maximum over them is an upper bound, exact if the worst mix occurs.",
        "Public tables (assumption). Tumult sets a public join's stability to the largest number of public rows "
        "per key; the models take 1 for every public table, as their construction gives.",
        "Files with one public path. Only the full chain of P.L. 94-171, DHC units and the Puerto Rico DHC "
        "persons file is public; those rows are that path's pair 1-1. exactdp has no P.L. 94-171 file for Puerto "
        "Rico, so the PR portfolio does not include one.",
    )
    return Section("Assumptions behind these numbers", paras, (), "assumptions")


def _method(result) -> tuple:
    return METHOD_SWEEP + (
        "Each product's guarantee is the maximum over its worst-case neighbours (cases): for a Tumult product the "
        "cases of its model (allocations/README.md, 'Product files'), for a TopDown file its pairs of allocation "
        "paths; δ(ε) and ε(δ) of the product are the maxima of the cases'. A portfolio case picks one case of "
        "every member and composes them; the portfolio is the maximum over all such choices. DHC persons comes "
        f"from its own sweep folder ({result.dhc_sweep}), which has its own report.html.",
        ERROR_BOUND)


def _provenance(result) -> tuple:
    import platform

    from exactdp._version import __version__

    rows = [("target δ", _D), ("budget rule of the Tumult products",
                                result.budget_rule or "each product file's default (tumult-float: the exact binary "
                                                      "value of the float Tumult is given)"),
            ("DHC persons sweep", f"{result.dhc_sweep} ({len(result.dhc_pairs)} of {result.dhc_n_pairs} pairs)"),
            ("source configurations (cited, not copied)",
             "the Census Bureau's public production code: uscensusbureau/DAS_2020_Redistricting_Production_Code and "
             "DAS_2020_DHC_Production_Code (TopDown: P.L. 94-171 and DHC); DAS_2020_DDHCA_Production_Code "
             "configs/safetab-p/NMFv7-2020/config.json; DAS_2020_DDHCB_Production_Code "
             "configs/safetab-h/NMFv5/config.json; DAS_2020_SDHC_Production_Code configs/phsafe/NMFv8/us and "
             "/pr/config.json — each model's rows below give the commit and code lines")]
    for key, prov in result.models.items():
        rows += [(f"{key}: {k}", v) for k, v in prov]
    rows += list(versions_rows({"exactdp": __version__, "python": platform.python_version()}))
    return tuple(rows)


def write_census_report(out_dir, result, *, plots: bool = True) -> Path:
    """Write ``census_2020.csv``, ``plots/census_2020_eps.png`` and ``report.html``.

    Parameters
    ----------
    out_dir : path
        The folder (created).
    result : Census2020
        :func:`exactdp.studies.census2020.census_2020`'s result.
    plots : bool
        Draw the figure.

    Returns
    -------
    Path
        The page.

    Notes
    -----
    Every number cited on the page is the CSV's certified upper bound rounded up
    (:func:`~exactdp.report.numbers.round_up`); brackets are rounded outward.  A partial
    DHC persons sweep is said at the top of the page and in its row.
    """
    from exactdp._version import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / CENSUS_FILE, census_csv_rows(result))
    figures: tuple = ()
    if plots:
        from exactdp.figures import save

        save(_figure(result), out / "plots", "census_2020_eps", tight=True)
        figures = (FigureRef("plots/census_2020_eps.png",
                             f"Every product and run at δ = {_D}: the exact ε (blue squares, certified upper bounds) "
                             "beside the Bureau's ε (red circles, the Bun–Steinke conversion of the configured zCDP "
                             "ρ). The grey segment is what exact accounting saves; the portfolio rows compose one "
                             "neighbour of every product of the run. Numbers in census_2020.csv."),)
    dhc = result.row("dhc-persons-2020")
    notes: tuple = ()
    if not dhc.complete:
        notes = (f"PARTIAL RESULT: the DHC persons sweep covers only {dhc.n_cases} of {result.dhc_n_pairs} neighbour "
                 f"pairs ({', '.join(result.dhc_pairs)}). The DHC persons row is the maximum over these pairs only — "
                 "a lower bound on that file's guarantee, not the guarantee; do not cite it. Run exactdp census-2020 "
                 "without --dhc-pairs (all 946 pairs) for the number to cite. The other rows do not depend on it.",)
    us = result.row("portfolio-us")
    meaning = meaning_section(us.eps_upper, _D, quoted=(us.eps_bureau, _D), profile=[(us.eps_bureau, us.delta_upper)],
                              who="the 2020 Census products for one person (the US portfolio)")
    summary = ("The exact privacy of the 2020 Census's formally private products, for one person: every product "
               "exactdp models and its production runs (United States; Puerto Rico), and their composition, at "
               "δ = 1e-10, "
               "beside the Bureau's own accounting (the Bun–Steinke conversion of the configured zCDP ρ). Each exact "
               "number is a certified bound, maximised over the product's worst-case neighbours.")
    table = _table(result)
    gain = display(str(Fraction(us.eps_bureau) - Fraction(us.eps_upper)), 4)
    report = Report(
        title="exactdp census-2020 — the exact privacy of every 2020 Census product",
        summary=summary, headline=_headline(result), citation=_citation(result, __version__),
        method=_method(result), provenance=_provenance(result), figures=figures, notes=notes,
        sections=(Section("Every product, one table", (
            f"One row per product and run at δ = {_D}. “Exact ε to cite” is the certified upper end of the bracket "
            "rounded up; “exact δ at the Bureau's ε” is the certified upper bound on the δ the release actually has "
            f"at the ε the Bureau states. For the US portfolio the exact ε is {gain} below the Bureau's. Full digits "
            "in census_2020.csv; the assumptions each row rests on are in the next section.",), table, "products"),
                  _assumptions(result), meaning))
    return write_report(out, report)
