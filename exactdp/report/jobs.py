"""Output folders of ``exactdp release --out`` and ``exactdp calibrate --out``.

Each writes its numbers as one CSV file (every number a decimal text, bracket ends
rounded outward), one figure, and ``report.html``.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.meaning import meaning_section
from exactdp.report.numbers import display, round_down, round_up, to_text
from exactdp.report.text import ERROR_BOUND, METHOD_SINGLE, METHOD_SWEEP, describe_allocation, versions_rows

__all__ = ["write_release_report", "write_calibration_report", "RELEASE_FILE", "CALIBRATION_FILE", "DEPLOY_FILE"]

RELEASE_FILE = "release_brackets.csv"
CALIBRATION_FILE = "calibration.csv"
DEPLOY_FILE = "deploy.csv"
_DEPLOY_COLUMNS = ("target_delta", "cell", "scaled", "sigma2_input", "sigma2_deploy", "sigma2_deploy_decimal",
                   "sigma2_infeasible", "rho_deploy")
_RELEASE_COLUMNS = ("pair", "delta_target", "rho_total", "eps_bureau", "delta_exact_lower", "delta_exact_upper",
                    "eps_exact_lower", "eps_exact_upper", "certification")


def _write_csv(path: Path, rows) -> None:
    from exactdp.runs.files import atomic_write_text

    atomic_write_text(path, "".join(",".join(str(v) for v in r) + "\n" for r in rows))


def _versions() -> tuple:
    import platform

    from exactdp._version import __version__

    return versions_rows({"exactdp": __version__, "python": platform.python_version()})


def _save(fig, out: Path, stem: str) -> str:
    from exactdp.figures import save

    save(fig, out / "plots", stem, tight=True)
    return f"plots/{stem}.png"


def canonical_delta(value) -> str:
    """A target δ as the sweep writes it (``1e-10``; imported when used: the sweep
    package's import loads its driver)."""
    from exactdp.sweep.pair import canonical_delta as canonical

    return canonical(value)


# ----------------------------------------------------------------------------- release
def _release_rows(rows) -> list:
    table = [_RELEASE_COLUMNS]
    for r in rows:
        table.append((f"{r.pair[0]}-{r.pair[1]}", canonical_delta(r.delta_target), f"{r.rho_total.numerator}/"
                      f"{r.rho_total.denominator}", to_text(r.eps_bureau), to_text(r.delta_lower, 20, "down"),
                      to_text(r.delta_upper, 20, "up"), to_text(r.eps_lower, 20, "down"),
                      to_text(r.eps_upper, 20, "up"), r.certification))
    return table


def _release_figure(rows):
    from matplotlib.figure import Figure

    if len({r.delta_target for r in rows}) == 1:
        return _release_bars(rows)
    fig = Figure(figsize=(7.0, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    for pair in sorted({r.pair for r in rows}):
        pts = sorted((float(r.delta_target), float(r.eps_upper), float(r.eps_bureau)) for r in rows if r.pair == pair)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "s-", lw=2, label=f"exact, pair {pair[0]}-{pair[1]}")
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "o--", color="tab:red", lw=1.2,
                label="Bureau: Bun–Steinke of the ρ-sum" if pair == min(r.pair for r in rows) else None)
    ax.set_xscale("log")
    ax.set_xlabel("target δ")
    ax.set_ylabel("ε at δ (exact: certified upper end)")
    ax.set_title("Whole release (DHC ∘ P.L. 94-171): exact ε vs the Bureau's ρ-sum conversion", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _release_bars(rows):
    """One target δ: per pair, the exact ε (certified upper end, written rounded up) beside the
    Bureau's, as labelled bars (a curve of one point would be a lone marker)."""
    from matplotlib.figure import Figure

    rows = sorted(rows, key=lambda r: r.pair)
    fig = Figure(figsize=(7.0, 2.0 + 0.75 * len(rows)))
    ax = fig.add_subplot(1, 1, 1)
    for k, r in enumerate(rows):
        for dy, val, colour, label in ((-0.18, r.eps_upper, "tab:blue", "exact ε (certified upper end)"),
                                       (0.18, r.eps_bureau, "tab:red", "Bureau: Bun–Steinke of the ρ-sum")):
            ax.barh(k + dy, float(val), height=0.34, color=colour, label=label if k == 0 else None)
            ax.text(float(val), k + dy, f" {to_text(val, 6, 'up')}", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), labels=[f"pair {r.pair[0]}-{r.pair[1]}" for r in rows], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.22 * max(float(r.eps_bureau) for r in rows))
    ax.set_xlabel(f"ε at δ = {canonical_delta(rows[0].delta_target)}")
    fig.suptitle("Whole release (DHC ∘ P.L. 94-171): exact ε vs the Bureau's ρ-sum conversion", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _release_meaning(rows) -> Section:
    """The meaning section of the release's largest certified ε at its first target δ."""
    first = min(r.delta_target for r in rows)
    at = [r for r in rows if r.delta_target == first]
    top = max(at, key=lambda r: r.eps_upper)
    d = canonical_delta(first)
    profile = [(to_text(r.eps_upper, 30, "up"), canonical_delta(r.delta_target)) for r in rows if r.pair == top.pair]
    profile += [(to_text(r.eps_bureau, 30, "up"), to_text(r.delta_upper, 30, "up")) for r in rows
                if r.pair == top.pair]
    return meaning_section(to_text(top.eps_upper, 30, "up"), d, quoted=(to_text(top.eps_bureau, 30, "up"), d),
                           profile=profile, who=f"the whole release for one record (pair {top.pair[0]}-{top.pair[1]})")


def write_release_report(out_dir, rows, allocation, pl94, *, plots: bool = True) -> Path:
    """Write ``release_brackets.csv``, ``plots/release_eps.png`` and ``report.html`` for
    :func:`exactdp.census.release.release_rows` results.

    Parameters
    ----------
    out_dir : path
        The folder (created).
    rows : list of ReleaseRow
        The certified whole-release rows.
    allocation, pl94 : Allocation
        The DHC and the P.L. 94-171 allocations composed.
    plots : bool
        Draw the figure.

    Returns
    -------
    Path
        The page.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = _release_rows(rows)
    _write_csv(out / RELEASE_FILE, table)
    figures: tuple[FigureRef, ...] = ()
    if plots:
        figures = (FigureRef(_save(_release_figure(rows), out, "release_eps"),
                             "The exact ε of the whole release for one record (DHC persons pair composed with the "
                             "P.L. 94-171 persons chain) at each target δ, the certified upper end of its bracket, "
                             "beside the Bureau's accounting: the Bun–Steinke conversion of the summed ρ."),)
    heads = tuple(
        Headline(f"whole release, pair {r.pair[0]}-{r.pair[1]}: ε at δ = {canonical_delta(r.delta_target)}",
                 f"ε ≤ {round_up(to_text(r.eps_upper, 30, 'up'))}",
                 f"ε ∈ [{to_text(r.eps_lower, 12, 'down')}, {to_text(r.eps_upper, 12, 'up')}]; δ at the Bureau's ε "
                 f"∈ [{to_text(r.delta_lower, 8, 'down')}, {to_text(r.delta_upper, 8, 'up')}]",
                 f"the Bureau's ρ-sum ε: {round_up(to_text(r.eps_bureau, 30, 'up'))} (ρ = {table[k + 1][2]})")
        for k, r in enumerate(rows))
    first = rows[0]
    citation = (f"For a change of one record between DHC persons paths {first.pair[0]} and {first.pair[1]}, "
                "the 2020 release (the DHC persons file composed with the P.L. 94-171 persons file) satisfies "
                f"(ε, δ)-differential privacy with ε = {round_up(to_text(first.eps_upper, 30, 'up'))} at "
                f"δ = {canonical_delta(first.delta_target)} (certified upper bound, exactdp); the Bureau's "
                f"conversion of the summed ρ gives ε = {round_up(to_text(first.eps_bureau, 30, 'up'))}. "
                "The release's guarantee is the maximum over all pairs (exactdp sweep --with-pl94).")
    prov = (describe_allocation({"name": allocation.name, "content_hash": allocation.content_hash(),
                                 "total_rho": allocation.total_rho, "n_paths": allocation.n_paths}, allocation)
            + tuple((f"P.L. 94-171 {k}", v) for k, v in describe_allocation(
                {"name": pl94.name, "content_hash": pl94.content_hash(), "total_rho": pl94.total_rho,
                 "n_paths": pl94.n_paths}, pl94)) + _versions())
    report = Report(
        title="exactdp release — the whole 2020 release for one record",
        summary=("A person's record feeds both the P.L. 94-171 and the DHC persons files. For each DHC pair and "
                 "target δ: the Bureau's ε from the summed ρ, the exact δ at that ε and the exact ε at that δ, as "
                 "certified brackets (the composed lattice is beyond 64 bits: lattice-free smoothed inversion)."),
        headline=heads, citation=citation, method=METHOD_SWEEP + (ERROR_BOUND,), provenance=prov, figures=figures,
        sections=(_release_meaning(rows),
                  Section("All rows", ("The contents of release_brackets.csv.",), tuple(table), "rows")))
    return write_report(out, report)


# ----------------------------------------------------------------------------- calibration
def _calibration_rows(results) -> list:
    objs = [r.as_json() for r in results]
    cols = tuple(objs[0])
    table = [cols]
    for o in objs:
        table.append(tuple("-".join(map(str, o[c])) if c == "argmax_pair" and o[c] else ("" if o[c] is None else o[c])
                           for c in cols))
    return table


def _epsilon_label(results, given: bool | None = None) -> tuple[str, str]:
    """The figure's x-axis label and the caption's words for the target ε.

    ``given``: whether the ε was given (``--eps``) rather than the default, the Bun–Steinke
    ε(δ) of the design's ρ.  When not said, it is read from the results: one ε for several
    distinct δ is a given one (the default changes with δ), several ε the default; one δ
    alone does not tell, and the label then states the ε without naming its origin."""
    eps = {to_text(r.target_epsilon, 12) for r in results}
    n_deltas = len({r.target_delta for r in results})
    if given is None and n_deltas > 1:
        given = len(eps) == 1
    if len(eps) == 1:
        e = display(next(iter(eps)), 10)
        if given:
            return f"target δ (target ε = {e}, given, at every δ)", f"at the given target ε = {e}"
        if given is None:
            return f"target δ (target ε = {e})", f"at the target ε = {e}"
        return (f"target δ (target ε = {e}: the Bun–Steinke ε(δ) of the design's ρ)",
                f"ε = {e} being the Bureau's Bun–Steinke ε at the design's ρ")
    return ("target δ (target ε = the Bun–Steinke ε(δ) of the design's ρ)",
            "ε being the Bureau's Bun–Steinke ε at the design's ρ for each δ")


def _deploy_rows(deploy) -> list:
    from exactdp.numerics.exact import fraction_str

    table: list[tuple] = [_DEPLOY_COLUMNS]
    for cal in deploy:
        d = canonical_delta(cal.scale.target_delta)
        for k, cell in enumerate(cal.cells):
            table.append((d, "/".join(cell) if isinstance(cell, tuple) else cell, int(cal.scaled[k]),
                          fraction_str(cal.sigma2_input[k]), fraction_str(cal.sigma2[k]),
                          to_text(cal.sigma2[k], 20, "up"),
                          fraction_str(cal.sigma2_infeasible[k]), fraction_str(cal.rho[k])))
    return table


def _write_quoted_csv(path: Path, rows) -> None:
    import csv
    import io

    from exactdp.sweep.io import atomic_write_text

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    atomic_write_text(path, buf.getvalue())


def _noise_groups(cal) -> list[tuple[str, float, float]]:
    """(label, Σσ² input, Σσ² deployed) per level of an allocation's full chain, or per
    group of a design (the twelve largest)."""
    sums: dict = {}
    for k, cell in enumerate(cal.cells):
        name = cell[0] if isinstance(cell, tuple) else cell
        b, a = sums.get(name, (0.0, 0.0))
        sums[name] = (b + float(cal.sigma2_input[k]), a + float(cal.sigma2[k]))
    rows = [(n, b, a) for n, (b, a) in sums.items()]
    if not isinstance(cal.cells[0], tuple):
        rows = sorted(rows, key=lambda t: -t[1])[:12]
    return rows


def _noise_figure(cal):
    """The noise to deploy beside the input's (log scale, values written on the bars): a
    figure that says something with one target δ."""
    from matplotlib.figure import Figure

    rows = _noise_groups(cal)
    per_level = isinstance(cal.cells[0], tuple)
    fig = Figure(figsize=(7.0, 2.2 + 0.62 * len(rows)))
    ax = fig.add_subplot(1, 1, 1)
    for k, (_, b, a) in enumerate(rows):
        for dy, val, colour, label in ((0.18, b, "tab:gray", "input"),
                                       (-0.18, a, "tab:blue", "to deploy (certified to meet the target)")):
            ax.barh(k + dy, val, height=0.34, color=colour, label=label if k == 0 else None)
            ax.text(val, k + dy, f" {val:.4g}", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), labels=[n for n, _, _ in rows], fontsize=9)
    ax.invert_yaxis()
    lo = min(min(b, a) for _, b, a in rows)
    hi = max(max(b, a) for _, b, a in rows)
    if hi / lo > 20:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(lo / 3, hi * 6)
    else:
        ax.set_xlim(0, hi * 1.2)
    ax.set_xlabel("Σσ² of the level's cells (full chain)" if per_level else "σ² of one mechanism of the group")
    fig.suptitle(f"Noise to deploy at δ = {canonical_delta(cal.scale.target_delta)}: every scaled σ² × "
                 f"{float(cal.scale.upper):.6f}", fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _deploy_section(cal) -> Section:
    from exactdp.numerics.exact import fraction_str

    r = cal.scale
    rows = [("cell", "σ² to deploy (exact)", "≈ (rounded up)", "σ² certified to miss the target")]
    for k, cell in enumerate(cal.cells):
        if cal.scaled[k]:
            rows.append(("/".join(cell) if isinstance(cell, tuple) else cell, fraction_str(cal.sigma2[k]),
                         to_text(cal.sigma2[k], 10, "up"), to_text(cal.sigma2_infeasible[k], 10, "down")))
    unscaled = len(cal.cells) - sum(cal.scaled)
    paras = (f"At δ = {canonical_delta(r.target_delta)}: multiply every scaled variance by c = "
             f"{fraction_str(r.upper)}. The design with these exact variances is certified to meet the target "
             f"(δ(ε) ≤ {to_text(r.delta_at_scale, 8, 'up')} ≤ {canonical_delta(r.target_delta)}); with c = "
             f"{fraction_str(r.lower)} (the last column) it is certified to miss it. Deploy the exact p/q: δ is not "
             "proved monotone in the variances of discrete Gaussians, so a rounded or larger σ² is not covered by "
             "this certificate." + (f" {unscaled} cells outside the scaled level keep their σ²." if unscaled else "")
             + (" For an allocation each path multiplies these full-chain budgets by its level multipliers, as "
                "before." if isinstance(cal.cells[0], tuple) else ""),
             f"Every δ's rows, with the input's σ², are in {DEPLOY_FILE}.")
    return Section("The noise to deploy", paras, tuple(rows), "deploy")


def _calibration_meaning(r, cal) -> Section:
    """The guarantee the deployed noise meets: (target ε, target δ); the publisher's
    reading of the deployed design is the Bun–Steinke ε of its ρ."""
    from exactdp.accounting.base import bun_steinke_epsilon

    eps = to_text(r.target_epsilon, 16, "up")
    d = canonical_delta(r.target_delta)
    quoted = None
    rho = getattr(getattr(cal, "design", None), "rho", None) or getattr(getattr(cal, "design", None), "total_rho",
                                                                        None)
    if rho:
        quoted = (to_text(bun_steinke_epsilon(rho, r.target_delta)(40), 30, "up"), d)
    return meaning_section(eps, d, quoted=quoted, who=f"the design with the noise to deploy ({r.scope})")


def _scale_figure(results):
    """One target δ and no per-cell numbers: the scaling bracket as bars (input 1, deploy c)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 2.6))
    ax = fig.add_subplot(1, 1, 1)
    r = results[0]
    for k, (val, colour) in enumerate(((1.0, "tab:gray"), (float(r.upper), "tab:blue"))):
        ax.barh(k, val, height=0.5, color=colour)
        ax.text(val, k, f" {val:.6f}", va="center", fontsize=9)
    ax.set_yticks([0, 1], labels=["input", "to deploy (c)"], fontsize=9)
    ax.set_xlim(0, 1.25)
    ax.set_xlabel("variance multiplier (every scaled σ² × c)")
    ax.set_title(f"Noise to deploy at δ = {canonical_delta(r.target_delta)}: certified reduction "
                 f"{100 * float(r.variance_reduction):.4f} %", fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def write_calibration_report(out_dir, results, *, design: str = "", plots: bool = True,
                             epsilon_given: bool | None = None, deploy=None) -> Path:
    """Write ``calibration.csv``, ``deploy.csv``, ``plots/*.png`` and ``report.html`` for
    :class:`~exactdp.calibration.calibrate.CalibrationResult` objects (one per target δ).

    Parameters
    ----------
    out_dir : path
        The folder (created).
    results : list of CalibrationResult
        The calibrations, each with its certified bracket on the optimal scaling.
    design : str
        The design in words (allocation and pair, or the mechanisms), for the page.
    plots : bool
        Draw the figures: the reduction against δ (several target δ) and the noise to
        deploy beside the input's (or, without ``deploy``, the scaling as bars).
    epsilon_given : bool, optional
        Whether the target ε was given (else the Bun–Steinke default), for the figure's
        axis label; read from the results when not said (see :func:`_epsilon_label`).
    deploy : list of Calibration, optional
        :func:`exactdp.calibrate` results for the same targets: the σ² to deploy per cell
        (``deploy.csv``, a headline row, a table and a figure).

    Returns
    -------
    Path
        The page.
    """
    from exactdp.numerics.exact import fraction_str

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = _calibration_rows(results)
    _write_csv(out / CALIBRATION_FILE, table)
    if deploy:
        _write_quoted_csv(out / DEPLOY_FILE, _deploy_rows(deploy))
    figures: list[FigureRef] = []
    xlabel, which = _epsilon_label(results, epsilon_given)
    if plots and len({r.target_delta for r in results}) > 1:
        from exactdp.conversions.plots import reduction_figure

        rows = [{"scaled": r.scope, "delta": str(float(r.target_delta)),
                 "variance_reduction": str(float(r.variance_reduction))} for r in results]
        figures.append(FigureRef(_save(reduction_figure(rows, f"certified variance reduction; {design}", xlabel), out,
                                       "calibration"),
                                 "The certified variance reduction 1 − c at each target δ: every noise variance can be "
                                 f"multiplied by c and the design still meets the target (ε, δ), {which}."))
    if plots and deploy:
        figures.append(FigureRef(_save(_noise_figure(deploy[0]), out, "deploy"),
                                 "The noise to deploy beside the input's at the first target δ "
                                 + ("(per level: the sum of σ² over its cells of the full chain)"
                                    if isinstance(deploy[0].cells[0], tuple) else "(per group of mechanisms)")
                                 + f", {which}: the design with these variances is certified to meet the target; "
                                 "the numbers are written on the bars (log scale)."))
    elif plots and not figures:
        figures.append(FigureRef(_save(_scale_figure(results), out, "calibration"),
                                 "The variance multiplier to deploy beside the input's (1): every scaled σ² times c "
                                 f"meets the target (ε, δ), {which}; c is certified, its bracket is in the headline."))
    heads = []
    for r in results:
        pct_lo = round_down(to_text(100 * Fraction(r.variance_reduction_lower), 30, "down"))
        pct_hi = round_up(to_text(100 * Fraction(r.variance_reduction_upper), 30, "up"))
        heads.append(Headline(
            f"variance reduction meeting δ = {canonical_delta(r.target_delta)} "
            f"at ε = {display(to_text(r.target_epsilon), 10)} ({r.scope})",
            f"{pct_lo} %", f"optimal reduction ∈ [{pct_lo} %, {pct_hi} %]; the scaling c = "
            f"{r.upper.numerator}/{r.upper.denominator} is certified to meet the target "
            f"(δ ≤ {to_text(r.delta_at_scale, 8, 'up')})", "no reduction: c = 1"))
    for cal in deploy or ():
        r = cal.scale
        first = next(k for k, on in enumerate(cal.scaled) if on)
        cell = "/".join(cal.cells[first]) if isinstance(cal.cells[first], tuple) else cal.cells[first]
        heads.append(Headline(
            f"σ² to deploy at δ = {canonical_delta(r.target_delta)}: every scaled σ² × c",
            f"c = {fraction_str(r.upper)}", f"certified to meet the target; c = {fraction_str(r.lower)} is certified "
            f"to miss it. E.g. {cell}: σ² {fraction_str(cal.sigma2_input[first])} → {fraction_str(cal.sigma2[first])} "
            f"(≈ {to_text(cal.sigma2[first], 10, 'up')})", "input: c = 1"))
    first = results[0]
    citation = (f"Every noise variance of {design or 'the design'} can be reduced by "
                f"{round_down(to_text(100 * Fraction(first.variance_reduction_lower), 30, 'down'))} % (multiplied by "
                f"{first.upper.numerator}/{first.upper.denominator}) while still meeting (ε, δ) = "
                f"({display(to_text(first.target_epsilon), 10)}, {canonical_delta(first.target_delta)}): "
                "certified by exact privacy accounting (exactdp).")
    method = METHOD_SINGLE + (
        "Calibration: the smallest uniform scaling c of the variances whose exact δ(ε_target) is certified to be at "
        "most the target δ is bracketed by a search that decides on certified bounds only (a scaling is accepted "
        "when the upper bound on δ meets the target, rejected when the lower bound exceeds it), so c is safe to "
        "deploy.", ERROR_BOUND)
    sections = []
    if deploy:
        sections.append(_deploy_section(deploy[0]))
    sections.append(_calibration_meaning(first, deploy[0] if deploy else None))
    by_column = [("column",) + tuple(f"δ = {canonical_delta(r.target_delta)}" for r in results)]
    by_column += [(c,) + tuple(row[k] for row in table[1:]) for k, c in enumerate(table[0])]
    sections.append(Section("All rows", ("The contents of calibration.csv, one column per target δ (the file has "
                                         "one row per target δ).",), tuple(by_column), "rows"))
    report = Report(
        title="exactdp calibrate — certified variance reduction and the noise to deploy",
        summary=(f"How much less noise {design or 'the design'} could add and still meet its privacy target, with "
                 "a certified bracket on the answer, and the variances to deploy."),
        headline=tuple(heads), citation=citation, method=method,
        provenance=(("design", design or "(given on the command line)"),) + _versions(), figures=tuple(figures),
        sections=tuple(sections))
    return write_report(out, report)
