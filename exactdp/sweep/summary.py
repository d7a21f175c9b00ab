"""Assemble a sweep's outputs from its pair files (always in pair order).

* ``summary.csv`` — per target δ: the overall exact δ at the Bureau's ε (max over pairs,
  with the certified bracket [max of lower bounds, max of upper bounds] and the argmax
  pair), the overall exact ε at δ (max over pairs of the per-pair bracket), the minimum
  over pairs, and the spread max/min.  The overall privacy profile of the release is
  the maximum over neighbour pairs, so these maxima are the guarantee.
* ``envelope.csv`` — the overall trade-off curve (:mod:`exactdp.sweep.envelope`).
* ``spread_matrix.csv`` — δ_pair/δ_max at the δ nearest 1e-10, for the heatmap.
* ``release.csv`` — whole-release rows (pair ∘ P.L. 94-171 chain), when requested.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import gmpy2
import mpmath

from exactdp.numerics.exact import fraction_str, to_fraction
from exactdp.numerics.precision import DPS_RESULT, to_mpf
from exactdp.runs.numtext import fmt_mpfr, mpfr_context, mpfr_to_raw, prec_of
from exactdp.sweep.envelope import ENVELOPE_COLUMNS, gdp_beta, interpolate, lower_hull, mpfr_arithmetic, pair_curve
from exactdp.sweep.io import atomic_write_text, pair_paths, read_csv, release_path
from exactdp.sweep.pair import fmt, fmt_bound
from exactdp.sweep.pathkey import path_key
from exactdp.sweep.tables import PairTables

__all__ = ["assemble", "SUMMARY_COLUMNS", "RELEASE_COLUMNS", "HEATMAP_DELTA"]

SUMMARY_COLUMNS = (
    "delta_target", "eps_bureau",
    "delta_overall", "delta_overall_lower", "delta_overall_upper", "delta_argmax_pair", "delta_argmax_ties",
    "delta_min", "delta_argmin_pair", "delta_spread",
    "eps_overall", "eps_overall_lower", "eps_overall_upper", "eps_argmax_pair", "eps_min", "eps_argmin_pair",
    "n_pairs",
)
RELEASE_COLUMNS = (
    "path_i", "path_j", "delta_target", "rho_dhc", "rho_pl94", "rho_sum", "eps_bureau_rho_sum",
    "delta_exact", "delta_upper", "delta_error_bound", "eps_exact", "eps_lower", "eps_upper",
    "eps_exact_dhc_only",
)
HEATMAP_DELTA = Fraction(1, 10**10)
_DPS = DPS_RESULT


def _csv(rows) -> str:
    return "".join(",".join(str(v) for v in r) + "\n" for r in rows)


def _summary(records: dict, deltas) -> tuple[list, dict]:
    """Rows of summary.csv and the headline numbers (certified brackets).

    ``records``: :attr:`~exactdp.sweep.tables.PairTables.records`.  The numbers are
    ``mpmath.mpf(text)`` at ``DPS_RESULT``, differences and the spread ratio rounded to
    nearest there, and the maxima/minima exact comparisons; they are carried as MPFR
    values of that precision (:mod:`exactdp.runs.numtext`: the same correctly rounded
    numbers, without mpf objects).
    """
    ctx = mpfr_context(prec_of(_DPS))
    rows: list[tuple] = [SUMMARY_COLUMNS]
    keys = sorted(records)
    out = {}
    for r_idx, d in enumerate(deltas):
        recs = [(key,) + records[key][r_idx] for key in keys]
        eps_bs = {rec[1]["eps_bureau"] for rec in recs}
        if len(eps_bs) != 1:
            raise ValueError(f"pairs disagree on the Bureau's ε at δ={d}: the paths spend different ρ")
        amax = max(recs, key=lambda t: t[2])  # first in pair order among equal estimates
        amin = min(recs, key=lambda t: t[2])
        lo = max(t[3] for t in recs)
        hi = max(t[4] for t in recs)
        ties = sum(1 for t in recs if t is not amax and t[4] >= amax[3])
        emax = max(recs, key=lambda t: t[5])
        emin = min(recs, key=lambda t: t[5])
        spread = ctx.div(amax[2], amin[2]) if amin[2] > 0 else gmpy2.inf()
        name = lambda t: f"{t[0][0]}-{t[0][1]}"  # noqa: E731
        rows.append((d, eps_bs.pop(), fmt_mpfr(amax[2], 20), fmt_mpfr(lo, 20), fmt_mpfr(hi, 20), name(amax), ties,
                     fmt_mpfr(amin[2], 20), name(amin), fmt_mpfr(spread, 8),
                     fmt_mpfr(emax[5], 20), fmt_mpfr(max(t[6] for t in recs), 20),
                     fmt_mpfr(max(t[7] for t in recs), 20), name(emax), fmt_mpfr(emin[5], 20), name(emin), len(recs)))
        out[d] = {"eps_bureau": rows[-1][1], "delta_overall": rows[-1][2], "delta_overall_upper": rows[-1][4],
                  "delta_argmax_pair": name(amax), "eps_overall": rows[-1][10], "eps_overall_upper": rows[-1][12],
                  "eps_argmax_pair": name(emax)}
    return rows, out


def gdp_column(grid_txt, rho: Fraction) -> list:
    """The ``beta_gdp`` texts of envelope.csv: ``fmt(gdp_beta(α, μ))``, μ = √(2ρ), at
    ``DPS_RESULT`` for every α text of the grid."""
    with mpmath.workdps(_DPS):
        mu = mpmath.sqrt(2 * to_mpf(rho))
        return [fmt(gdp_beta(mpmath.mpf(t), mu)) for t in grid_txt]


def _envelope(grids: dict, rho: Fraction, vertices, gdp_txt=None, betas=None) -> tuple[list, dict]:
    """Pointwise minimum over pairs of the gridded curves, then its lower convex hull.

    ``grids[key]`` holds a pair's grid file as columns (texts); ``vertices(key)`` returns
    its sampled curve as MPFR values at ``DPS_RESULT`` (for the convexity gap of the
    minimising pair at each grid point, computed with the same correctly rounded steps
    as :func:`~exactdp.sweep.envelope.interpolate` on mpf values).  ``gdp_txt``: the
    :func:`gdp_column` of the grid if already known; ``betas[key]``: the ``beta`` column
    as float64 if already converted."""
    import numpy as np

    keys = sorted(grids)
    grid_txt = grids[keys[0]]["alpha"]
    for k in keys:
        if grids[k]["alpha"] != grid_txt:
            raise ValueError(f"pair {k[0]}-{k[1]} was evaluated on another α grid")
    grid = [mpmath.mpf(t) for t in grid_txt]
    ar = mpfr_arithmetic(mpfr_context(prec_of(_DPS)))
    # compare in float first (fast), settle near-ties exactly
    if betas is None:
        betas = {k: list(map(float, grids[k]["beta"])) for k in keys}
    floats = np.array([betas[k] for k in keys], dtype=np.float64)
    best = []
    for m in range(len(grid)):
        vals = floats[:, m]
        lo = float(vals.min())
        cands = [keys[c] for c in np.flatnonzero(vals <= lo * (1 + 1e-12))]
        key = min(cands, key=lambda k: (ar.parse(grids[k]["beta"][m]), k)) if len(cands) > 1 else cands[0]
        gap = interpolate(vertices(key), ar.parse(grid_txt[m]), ar=ar)[2]
        best.append((mpmath.mpf(grids[key]["beta"][m]), grids[key]["beta_error_bound"][m],
                     fmt_bound(mpmath.mp.make_mpf(mpfr_to_raw(gap))), key))
    pts = [(mpmath.mpf(0), mpmath.mpf(1))] + [(a, c[0]) for a, c in zip(grid, best)] + [(mpmath.mpf(1), mpmath.mpf(0))]
    hull = lower_hull(pts)
    on = set(hull)
    if gdp_txt is None:
        gdp_txt = gdp_column(grid_txt, rho)
    rows: list[tuple] = [ENVELOPE_COLUMNS]
    worst_gap = mpmath.mpf(0)
    worst_err = mpmath.mpf(0)
    h = 0
    for m, a in enumerate(grid):
        idx = m + 1
        while hull[h + 1] < idx:
            h += 1
        (x0, y0), (x1, y1) = pts[hull[h]], pts[hull[h + 1]]
        env = y0 + (y1 - y0) * (a - x0) / (x1 - x0) if idx not in on else pts[idx][1]
        b, e, g, key = best[m]
        worst_gap, worst_err = max(worst_gap, mpmath.mpf(g)), max(worst_err, mpmath.mpf(e))
        rows.append((grid_txt[m], fmt(env), int(idx in on), fmt(b), f"{key[0]}-{key[1]}", e, g, gdp_txt[m]))
    return rows, {"grid_points": len(grid), "worst_beta_error_bound": fmt_bound(worst_err),
                  "worst_beta_interp_gap": fmt_bound(worst_gap)}


def _heatmap(curves: dict, deltas, n_paths: int):
    target = min(deltas, key=lambda d: abs(to_fraction(d) - HEATMAP_DELTA) / HEATMAP_DELTA)
    r = list(deltas).index(target)
    vals = {k: mpmath.mpf(v[r]["delta_exact"]) for k, v in curves.items()}
    top = max(vals.values())
    mat = [[None] * n_paths for _ in range(n_paths)]
    for (i, j), v in vals.items():
        mat[i - 1][j - 1] = mat[j - 1][i - 1] = v / top
    rows = [("path",) + tuple(range(1, n_paths + 1))]
    for i in range(n_paths):
        rows.append((i + 1,) + tuple("" if x is None else fmt(x, 12) for x in mat[i]))
    return target, rows, [[float("nan") if x is None else float(x) for x in row] for row in mat]


def _release(out, rel_pairs, deltas, alloc, pl, curves) -> list:
    rows: list[tuple] = [RELEASE_COLUMNS]
    for i, j in rel_pairs:
        rel = read_csv(release_path(out, i, j)["curve"])
        own = curves.get((i, j))
        for r_idx, row in enumerate(rel):
            rows.append((i, j, row["delta_target"], fraction_str(alloc.total_rho), fraction_str(pl.total_rho),
                         fraction_str(alloc.total_rho + pl.total_rho), row["eps_bureau"], row["delta_exact"],
                         row["delta_upper"], row["delta_error_bound"], row["eps_exact"], row["eps_lower"],
                         row["eps_upper"], own[r_idx]["eps_exact"] if own else ""))
    return rows


def assemble(out, alloc, pairs, settings, rel_pairs=(), pl=None, *, plots=True, assistant=None,
             tables=None) -> dict:
    """Write summary.csv, envelope.csv, spread_matrix.csv (and release.csv, plots).

    ``assistant``: an :class:`exactdp.sweep.assist.Assistant` started for this sweep (the
    GDP column and the figures are then computed in its process, with the same code);
    without one everything runs here.  ``tables``: a
    :class:`~exactdp.sweep.tables.PairTables` holding pairs already parsed from the texts
    of their files (the driver's, filled as the results arrived); the other pairs are
    read from their files.

    Returns
    -------
    dict
        Headline numbers and worst certified errors, for the manifest.

    Notes
    -----
    Method: the pairs' numbers are those of their files (read, or parsed from the same
    texts as they were written), taken in pair order, so the result is independent of
    how (and in how many runs) the pairs were computed.  Error bound: the overall δ is
    bracketed by the maxima of the pairs' certified lower and upper bounds, the overall
    ε by the maxima of the pairs' ε brackets.
    """
    from pathlib import Path

    out = Path(out)
    deltas = list(settings.deltas)
    held = tables if tables is not None else PairTables()
    for i, j in pairs:
        if (i, j) not in held:
            held.add_files(out, i, j)
    keys = set(map(tuple, pairs))
    pick = (lambda d: d) if len(held.curves) == len(keys) else (lambda d: {k: d[k] for k in keys})
    curves, records, grids, infos = pick(held.curves), pick(held.records), pick(held.grids), pick(held.infos)
    # the figures (function of exactdp.sweep.plots by name, arguments): drawn as soon as
    # their rows exist when a helper process draws them (this process then never imports
    # matplotlib), else here at the end; listed in the order eps_delta, tradeoff, heatmap
    figures: list = []
    pdir = out / "plots"
    draw = assistant.draw if assistant is not None else (lambda name, *a: figures.append((name, a)))
    with mpmath.workdps(_DPS):
        srows, headline = _summary(records, deltas)
        atomic_write_text(out / "summary.csv", _csv(srows))
        heat_delta, hrows, heat = _heatmap(curves, deltas, alloc.n_paths)
        if plots:
            draw("plot_eps_delta", srows, pdir, "eps_delta", alloc.total_rho)
            draw("plot_spread_heatmap", heat, pdir, heat_delta, "spread_heatmap", path_key(alloc))
        ar = mpfr_arithmetic(mpfr_context(prec_of(_DPS)))
        vertices = functools.lru_cache(maxsize=None)(
            lambda k: pair_curve(read_csv(pair_paths(out, *k)["tradeoff"]), ar))
        gdp_txt = assistant.gdp_column(grids[min(grids)]["alpha"]) if assistant is not None and grids else None
        erows, env_info = _envelope(grids, alloc.total_rho, vertices, gdp_txt, pick(held.betas))
        if plots:
            draw("plot_tradeoff", erows, pdir, "tradeoff", alloc.total_rho)
        atomic_write_text(out / "envelope.csv", _csv(erows))
        atomic_write_text(out / "spread_matrix.csv", _csv(hrows))
        if rel_pairs:
            atomic_write_text(out / "release.csv", _csv(_release(out, rel_pairs, deltas, alloc, pl, curves)))
    worst = {
        "delta_rel_error": max(v["worst_delta_rel_error"] for v in infos.values()),
        "eps_rel_width": max(v["worst_eps_rel_width"] for v in infos.values()),
        "tradeoff_vertex_rel_error": max(v["worst_tradeoff_rel_error"] for v in infos.values()),
    }
    files = ["summary.csv", "envelope.csv", "spread_matrix.csv"] + (["release.csv"] if rel_pairs else [])
    if plots:
        if assistant is not None:
            drawn = assistant.figures()
        else:
            from exactdp.sweep import plots as figs

            drawn = [getattr(figs, name)(*a) for name, a in figures]
        files += [str(p.relative_to(out)) for k in (0, 2, 1) for p in drawn[k]]
    return {"headline": headline, "worst_certified": {k: fmt_bound(v) for k, v in worst.items()},
            "envelope": env_info, "heatmap_delta": heat_delta, "files": files,
            "methods": _count(v["method"] for v in infos.values())}


def _count(items) -> dict:
    out: dict = {}
    for it in items:
        out[it] = out.get(it, 0) + 1
    return dict(sorted(out.items()))
