"""The folders of ``exactdp product NAME --out DIR`` and ``exactdp portfolio --out DIR``.

Each gets ``family.csv`` (one row per target δ: the Bureau's and the CKS ε of the
configured ρ, the exact ε(δ) and the exact δ at the Bureau's ε as certified brackets, the
worst case of each), ``cases.csv`` (the neighbour cases), ``tradeoff.csv`` when β = f(α)
was asked for, one figure and ``report.html`` with the structure of the sweep's page.
"""

from __future__ import annotations

import csv
import io
import textwrap
from fractions import Fraction
from pathlib import Path

from exactdp.report.census2020 import rho_text
from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.meaning import meaning_section
from exactdp.report.numbers import display, round_down, round_up, to_text
from exactdp.report.text import ERROR_BOUND, METHOD_SINGLE, versions_rows

__all__ = ["write_family_report", "FAMILY_FILE", "CASES_FILE", "TRADEOFF_FILE"]

FAMILY_FILE, CASES_FILE, TRADEOFF_FILE = "family.csv", "cases.csv", "tradeoff.csv"
_FAMILY_COLUMNS = ("delta_target", "configured_rho", "eps_bureau", "eps_cks", "eps_exact_lower", "eps_exact_upper",
                   "eps_worst_case", "delta_at_eps_bureau_lower", "delta_at_eps_bureau_upper", "delta_worst_case",
                   "certification")


def _delta_text(d) -> str:
    from exactdp.sweep.pair import canonical_delta

    return canonical_delta(d)


def _write(path: Path, header, rows) -> None:
    from exactdp.runs.files import atomic_write_text

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    atomic_write_text(path, buf.getvalue())


def _family_rows(rows, numbers) -> list[tuple]:
    return [(_delta_text(r.delta_target), f"{r.configured_rho.numerator}/{r.configured_rho.denominator}",
             to_text(r.eps_bun_steinke, 20, "up"), to_text(r.eps_cks, 20, "up"), to_text(r.eps_lower, 20, "down"),
             to_text(r.eps_upper, 20, "up"), numbers[r.eps_case - 1], to_text(r.delta_lower, 20, "down"),
             to_text(r.delta_upper, 20, "up"), numbers[r.delta_case - 1], r.certification) for r in rows]


def _pick(rows):
    """The row of δ = 1e-10, else the first."""
    return next((r for r in rows if r.delta_target == Fraction(1, 10**10)), rows[0])


def _figure(rows, name: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 4.4))
    ax = fig.add_subplot(1, 1, 1)
    pts = sorted(rows, key=lambda r: r.delta_target)
    if len(pts) > 1:
        xs = [float(r.delta_target) for r in pts]
        ax.plot(xs, [float(r.eps_upper) for r in pts], "s-", lw=2, label="exact ε (certified upper bound)")
        ax.plot(xs, [float(r.eps_bun_steinke) for r in pts], "o--", color="tab:red",
                label="the Bureau's ε (Bun–Steinke of the configured ρ)")
        ax.plot(xs, [float(r.eps_cks) for r in pts], "^:", color="tab:orange", label="optimal zCDP conversion (CKS)")
        ax.set_xscale("log")
        ax.set_xlabel("target δ")
        ax.set_ylabel("ε at δ")
        ax.legend(fontsize=8)
    else:  # one target δ: the three ε side by side, each labelled with its value
        r = pts[0]
        vals = [("exact ε (certified upper bound)", r.eps_upper, "tab:blue"),
                ("optimal zCDP conversion (CKS)", r.eps_cks, "tab:orange"),
                ("the Bureau's ε (Bun–Steinke)", r.eps_bun_steinke, "tab:red")]
        for y, (_label, v, color) in enumerate(vals):
            ax.barh(y, float(v), color=color, height=0.55)
            ax.text(float(v), y, f"  {round_up(to_text(v, 30, 'up'), 6)}", va="center", fontsize=9)
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels([v[0] for v in vals], fontsize=9)
        ax.set_xlim(0, 1.25 * max(float(v[1]) for v in vals))
        ax.set_xlabel(f"ε at δ = {_delta_text(r.delta_target)} (smaller is more private)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(textwrap.fill(f"{name}: exact ε beside the zCDP conversions of the configured ρ", 80), fontsize=10)
    fig.tight_layout()
    return fig


def _model(name: str):
    """A product or allocation (built-in name or file) for its provenance."""
    from exactdp.census.allocations import builtin_allocations, load_allocation
    from exactdp.census.products import builtin_products, load_product
    from exactdp.numerics.exact import InputError

    if name in builtin_products():
        return load_product(name), True
    if name in builtin_allocations():
        return load_allocation(name), True
    try:
        return load_product(name), False
    except InputError:
        return load_allocation(name), False


def _provenance(head: dict, source) -> tuple:
    rows: list = []
    names = [source] if "product" in head else [m.partition(":")[0].strip() for m in head.get("members", [])]
    for name in names:
        if name is None:
            continue
        obj, builtin = _model(str(name))
        tag = "" if "product" in head else f"{obj.name}: "
        rows.append((f"{tag}model", f"{obj.name} (content hash {obj.content_hash()})" + ("" if builtin else
                                                                                       "; a user file")))
        rows += [(f"{tag}{k}", " ".join(str(v).split())) for k, v in obj.provenance.items()]
    return tuple(rows)


def write_family_report(out_dir, head: dict, rows, trade, numbers, *, source=None, plots: bool = True) -> Path:
    """Write the folder of ``exactdp product --out`` / ``exactdp portfolio --out``.

    Parameters
    ----------
    out_dir : path
        The folder (created).
    head : dict
        The command's description of the product (``product``, ``title``, ``relation``,
        ``configured_rho``, ``cases``, ``case_rho``) or portfolio (``portfolio``,
        ``members``, ``configured_rho``, ``cases``).
    rows : list of FamilyRow
    trade : list of TradeoffRow
    numbers : list of int
        The case numbers, in the order of the computed cases.
    source : str, optional
        The product's name or file (for its provenance).
    plots : bool

    Returns
    -------
    Path
        The page.
    """
    import platform

    from exactdp._version import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    is_product = "product" in head
    run = {"us": "US", "pr": "PR"}.get(head.get("portfolio", ""), head.get("portfolio"))
    name = str(head.get("title") or head.get("product")) if is_product else f"portfolio ({run})"
    _write(out / FAMILY_FILE, _FAMILY_COLUMNS, _family_rows(rows, numbers))
    case_rho = head.get("case_rho", {})
    _write(out / CASES_FILE, ("case", "label") + (("rho",) if case_rho else ()),
           [(k, v) + ((case_rho[k],) if case_rho else ()) for k, v in head["cases"].items()])
    if trade:
        _write(out / TRADEOFF_FILE, ("alpha", "beta_lower", "beta_upper", "worst_case"),
               [(rho_text(t.alpha), to_text(t.lower, 20, "down"), to_text(t.upper, 20, "up"), numbers[t.case - 1])
                for t in trade])
    figures: tuple = ()
    if plots:
        from exactdp.figures import save

        save(_figure(rows, name), out / "plots", "family_eps", tight=True)
        figures = (FigureRef("plots/family_eps.png", (
            "The exact ε of " + name + " (the maximum over its neighbour cases, certified upper bound) beside the "
            "zCDP conversions of the configured ρ: Bun–Steinke (the Bureau's) and the optimal one of Canonne, Kamath "
            "& Steinke. " + ("One curve point per target δ." if len(rows) > 1 else
                             "One target δ: the three numbers side by side, each written at its bar.")
            + " Numbers in family.csv.")),)
    r = _pick(rows)
    d = _delta_text(r.delta_target)
    eps_up, eps_b = to_text(r.eps_upper, 30, "up"), to_text(r.eps_bun_steinke, 30, "up")
    n = len(numbers)
    heads = (
        Headline(f"{name}: ε at δ = {d} (max over {n} neighbour case{'s' if n > 1 else ''})",
                 f"ε ≤ {round_up(eps_up)}",
                 f"ε ∈ [{to_text(r.eps_lower, 12, 'down')}, {to_text(r.eps_upper, 12, 'up')}] (certified; largest at "
                 f"case {numbers[r.eps_case - 1]})",
                 f"the Bureau's ε: {round_up(eps_b)} (Bun–Steinke of ρ = {head['configured_rho']}); CKS: "
                 f"{round_up(to_text(r.eps_cks, 30, 'up'))}"),
        Headline(f"δ at the Bureau's ε = {round_up(eps_b)}", f"δ ≤ {round_up(to_text(r.delta_upper, 30, 'up'))}",
                 f"δ ∈ [{to_text(r.delta_lower, 8, 'down')}, {to_text(r.delta_upper, 8, 'up')}] (certified; largest "
                 f"at case {numbers[r.delta_case - 1]})", f"the Bureau's δ: {d}"),
    ) + tuple(Headline(f"trade-off β at α = {rho_text(t.alpha)}", f"β ≥ {round_down(to_text(t.lower, 30, 'down'))}",
                       f"β ∈ [{to_text(t.lower, 10, 'down')}, {to_text(t.upper, 10, 'up')}] (minimum over the "
                       f"cases; case {numbers[t.case - 1]})") for t in trade)
    who = f"the {head.get('relation', 'neighbouring relation of the product')}" if is_product else \
        "the composition of one neighbour of each member"
    citation = (f"{name} satisfies (ε, δ)-differential privacy with ε = {round_up(eps_up)} at δ = {d} for "
                f"{who}: a certified upper bound, the maximum over {n} worst-case neighbour case"
                f"{'s' if n > 1 else ''} (exact privacy accounting, exactdp {__version__}). The Bureau's conversion "
                f"of the configured zCDP ρ = {head['configured_rho']} gives ε = {round_up(eps_b)}.")
    if not is_product:
        citation = citation.replace(f"{name} satisfies", f"The {name}, members {', '.join(head['members'])}, "
                                    "satisfies", 1)
    table = [("target δ", "Bureau's ε", "CKS ε", "exact ε (≤)", "at case", "exact δ at the Bureau's ε (≤)",
              "at case", "target δ / exact δ")]
    for x in rows:
        ratio = x.delta_target / Fraction(to_text(x.delta_upper, 30, "up"))
        table.append((_delta_text(x.delta_target), round_up(to_text(x.eps_bun_steinke, 30, "up"), 8),
                      round_up(to_text(x.eps_cks, 30, "up"), 8), round_up(to_text(x.eps_upper, 30, "up"), 8),
                      numbers[x.eps_case - 1], round_up(to_text(x.delta_upper, 30, "up"), 6),
                      numbers[x.delta_case - 1], display(str(ratio), 4)))
    cases = [("case", "neighbour") + (("zCDP ρ of the case",) if case_rho else ())]
    cases += [(k, v) + ((round_up(case_rho[k], 8),) if case_rho else ()) for k, v in head["cases"].items()]
    profile = [(to_text(x.eps_upper, 30, "up"), x.delta_target) for x in rows]
    profile += [(to_text(x.eps_bun_steinke, 30, "up"), to_text(x.delta_upper, 30, "up")) for x in rows]
    meaning = meaning_section(eps_up, d, quoted=(eps_b, d), profile=profile, who=name)
    prov = (("configured zCDP ρ", str(head["configured_rho"])),
            ("neighbouring relation", head.get("relation", "one neighbour of each member's own relation, at once")),
            ("budget rule", str(head.get("budget_rule", "each file's default")))) + _provenance(head, source) \
        + versions_rows({"exactdp": __version__, "python": platform.python_version()})
    report = Report(
        title=f"exactdp {'product' if is_product else 'portfolio'} — {name}",
        summary=(f"The exact privacy guarantee of {name} under {who}: for each target δ the exact ε and the exact δ "
                 "at the Bureau's ε, each a certified bracket maximised over the worst-case neighbour cases, beside "
                 "the zCDP conversions of the configured ρ."),
        headline=heads, citation=citation, figures=figures,
        method=METHOD_SINGLE + ("The product's guarantee is the worst over its neighbour cases: δ(ε) and ε(δ) are "
                                "the maxima of the cases', β = f(α) at least the minimum of theirs.", ERROR_BOUND),
        provenance=prov,
        sections=(meaning, Section("The guarantee at every target δ", (
            "Certified upper bounds rounded up; full digits and both bracket ends in family.csv.",), tuple(table),
            "all-deltas"), Section("Neighbour cases", ("The worst-case neighbours the maxima are over "
                                                       "(cases.csv).",), tuple(cases), "cases")))
    return write_report(out, report)
