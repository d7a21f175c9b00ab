"""Output folders of ``exactdp release --out`` and ``exactdp calibrate --out``.

Each writes its numbers as one CSV file (every number a decimal text, bracket ends
rounded outward), one figure, and ``report.html``.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from exactdp.report.document import FigureRef, Headline, Report, Section, write_report
from exactdp.report.numbers import display, round_down, round_up, to_text
from exactdp.report.text import ERROR_BOUND, METHOD_SINGLE, METHOD_SWEEP, describe_allocation, versions_rows

__all__ = ["write_release_report", "write_calibration_report", "RELEASE_FILE", "CALIBRATION_FILE"]

RELEASE_FILE = "release_brackets.csv"
CALIBRATION_FILE = "calibration.csv"
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
        sections=(Section("All rows", ("The contents of release_brackets.csv.",), tuple(table), "rows"),))
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


def write_calibration_report(out_dir, results, *, design: str = "", plots: bool = True,
                             epsilon_given: bool | None = None) -> Path:
    """Write ``calibration.csv``, ``plots/calibration.png`` and ``report.html`` for
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
        Draw the figure.
    epsilon_given : bool, optional
        Whether the target ε was given (else the Bun–Steinke default), for the figure's
        axis label; read from the results when not said (see :func:`_epsilon_label`).

    Returns
    -------
    Path
        The page.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = _calibration_rows(results)
    _write_csv(out / CALIBRATION_FILE, table)
    figures: tuple[FigureRef, ...] = ()
    if plots:
        from exactdp.conversions.plots import reduction_figure

        rows = [{"scaled": r.scope, "delta": str(float(r.target_delta)),
                 "variance_reduction": str(float(r.variance_reduction))} for r in results]
        xlabel, which = _epsilon_label(results, epsilon_given)
        figures = (FigureRef(_save(reduction_figure(rows, f"certified variance reduction; {design}", xlabel), out,
                                   "calibration"),
                             "The certified variance reduction 1 − c at each target δ: every noise variance can be "
                             f"multiplied by c and the design still meets the target (ε, δ), {which}."),)
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
    report = Report(
        title="exactdp calibrate — certified variance reduction",
        summary=(f"How much less noise {design or 'the design'} could add and still meet its privacy target, with "
                 "a certified bracket on the answer."),
        headline=tuple(heads), citation=citation, method=method,
        provenance=(("design", design or "(given on the command line)"),) + _versions(), figures=figures,
        sections=(Section("All rows", ("The contents of calibration.csv.",), tuple(table), "rows"),))
    return write_report(out, report)
