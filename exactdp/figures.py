"""Writing figures: every plot of exactdp is saved as PNG and PDF through :func:`save`.

Metadata that would change between runs (software version, creation date) is left out,
so re-running a job writes byte-identical figures.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["save"]

_META = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None}}


def save(fig, outdir, stem: str, *, tight: bool = False) -> list[Path]:
    """Write ``stem.png`` (150 dpi) and ``stem.pdf`` into ``outdir``; return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=150 if ext == "png" else None, metadata=_META[ext],
                    bbox_inches="tight" if tight else None)
        paths.append(p)
    return paths
