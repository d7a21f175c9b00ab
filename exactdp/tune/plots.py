"""Figures of a tune run (matplotlib object API, PNG and PDF via :func:`exactdp.figures.save`).

* ``sigma2_change`` — the variance multiplier σ'²/σ² of every (level, query) cell as a
  heat map (log scale, one colour per direction), and the total noise variance Σσ² of
  each level and of each query before and after (bars, log scale);
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
    """``before``/``after``: ``{(level, query): σ²}`` (floats; absent cells not measured)."""
    fig = Figure(figsize=(11.5, 4.8))
    ax = fig.add_subplot(1, 3, 1)
    grid = [[math.log10(after[(lev, q)] / before[(lev, q)]) if (lev, q) in before else math.nan
             for q in queries] for lev in levels]
    span = max([abs(v) for row in grid for v in row if not math.isnan(v)] + [1e-3])
    im = ax.imshow(grid, cmap="RdBu_r", vmin=-span, vmax=span, aspect="auto")
    ax.set_yticks(range(len(levels)), labels=levels, fontsize=7)
    ax.set_xticks(range(len(queries)), labels=[f"q{k + 1}" for k in range(len(queries))], fontsize=7)
    for y, row in enumerate(grid):
        for x, v in enumerate(row):
            if not math.isnan(v):
                ax.text(x, y, f"{10 ** v:.3g}", ha="center", va="center", fontsize=5)
    ax.set_title("σ'²/σ² per cell (blue: less noise)", fontsize=9)
    fig.colorbar(im, ax=ax, label="log10 σ'²/σ²", shrink=0.8)
    for k, (names, key) in enumerate(((levels, 0), (queries, 1)), start=2):
        ax = fig.add_subplot(1, 3, k)
        tot_b = [sum(v for c, v in before.items() if c[key] == n) for n in names]
        tot_a = [sum(v for c, v in after.items() if c[key] == n) for n in names]
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], tot_b, width=0.4, label="input", color="tab:gray")
        ax.bar([x + 0.2 for x in xs], tot_a, width=0.4, label="tuned", color="tab:blue")
        ax.set_yscale("log")
        ax.set_xticks(list(xs), labels=names if key == 0 else [f"q{i + 1}" for i in xs], rotation=60, fontsize=7)
        ax.set_title(f"Σσ² per {'level' if key == 0 else 'query'}", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return save(fig, outdir, stem)


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
