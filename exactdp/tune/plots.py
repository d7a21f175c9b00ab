"""Figures of a tune run (matplotlib object API, PNG and PDF via :func:`exactdp.figures.save`).

* ``sigma2_change`` — the variance multiplier σ'²/σ² of every (level, query) cell as a
  heat map (log scale, one colour per direction, each cell's number written in it);
* ``sigma2_totals`` — the total noise variance Σσ² of each level and of each query
  before and after (bars, log scale);
* ``eps_delta`` — the exact overall privacy profile (max over every neighbour pair) of
  the input and of the tuned allocation, ε(δ) from the certified upper ends, with the
  target (ε, δ) marked.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from exactdp.figures import save

__all__ = ["plot_sigma2_change", "plot_eps_delta"]


def plot_sigma2_change(levels, queries, before, after, outdir, stem="sigma2_change") -> list:
    """``before``/``after``: ``{(level, query): σ²}`` (floats; absent cells not measured).

    Two figures sized for an A4 page at their printed width (7 inches, numbers ≥ 8 pt):
    ``stem`` — the heat map of σ'²/σ² per cell with every cell's number written in it
    (queries ``q1``, ``q2``, … in the allocation's order; the report's table names them);
    ``sigma2_totals`` — Σσ² per level and per query before and after (bars).
    """
    n_q = len(queries)
    fig = Figure(figsize=(7.2, 1.6 + 0.42 * len(levels)))
    ax = fig.add_subplot(1, 1, 1)
    grid = [[math.log10(after[(lev, q)] / before[(lev, q)]) if (lev, q) in before else math.nan
             for q in queries] for lev in levels]
    span = max([abs(v) for row in grid for v in row if not math.isnan(v)] + [1e-3])
    im = ax.imshow(grid, cmap="RdBu_r", vmin=-span, vmax=span, aspect="auto")
    ax.set_yticks(range(len(levels)), labels=levels, fontsize=9)
    ax.set_xticks(range(n_q), labels=[f"q{k + 1}" for k in range(n_q)], fontsize=9)
    size = 9 if n_q <= 10 else (8 if n_q <= 14 else 7)
    for y, row in enumerate(grid):
        for x, v in enumerate(row):
            if not math.isnan(v):
                ink = "white" if abs(v) > 0.6 * span else "black"
                ax.text(x, y, f"{10 ** v:.3g}", ha="center", va="center", fontsize=size, color=ink)
    ax.set_title("Variance multiplier σ'²/σ² per (level, query) cell (blue: less noise; blank: not measured)",
                 fontsize=9)
    fig.colorbar(im, ax=ax, label="log10 σ'²/σ²", shrink=0.9, pad=0.02)
    fig.tight_layout()
    paths = save(fig, outdir, stem)
    fig = Figure(figsize=(7.2, 3.6))
    for k, (names, key) in enumerate(((levels, 0), (queries, 1)), start=1):
        ax = fig.add_subplot(1, 2, k)
        tot_b = [sum(v for c, v in before.items() if c[key] == n) for n in names]
        tot_a = [sum(v for c, v in after.items() if c[key] == n) for n in names]
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], tot_b, width=0.4, label="input", color="tab:gray")
        ax.bar([x + 0.2 for x in xs], tot_a, width=0.4, label="tuned", color="tab:blue")
        ax.set_yscale("log")
        ax.set_ylim(min(tot_b + tot_a) / 2, max(tot_b + tot_a) * 2)
        ax.set_xticks(list(xs), labels=names if key == 0 else [f"q{i + 1}" for i in xs],
                      rotation=60 if key == 0 else 0, fontsize=8)
        ax.set_title(f"Σσ² per {'level' if key == 0 else 'query'} (full chain)", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return paths + save(fig, outdir, "sigma2_totals")


def plot_eps_delta(curves: dict, target_eps: float, target_delta: float, outdir, stem="eps_delta") -> list:
    """``curves``: label → ``(deltas, eps_upper)`` (floats): the exact overall ε(δ)."""
    fig = Figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    for (label, (ds, es)), style in zip(curves.items(), ("o-", "s-", "^-")):
        ax.plot(es, ds, style, ms=3, label=label)
    ax.plot([target_eps], [target_delta], "k*", ms=10, label="target (ε, δ)")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ")
    ax.set_title("Exact overall privacy profile (max over neighbour pairs)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, outdir, stem)
