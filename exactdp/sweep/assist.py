"""A second process for a sweep's assembly: the envelope's GDP column and the figures.

After the last pair the assembly runs serially on one core while the other is idle:
for the DHC sweep ~4 s, of which the figures ~2 s and the GDP column of envelope.csv
(401 mpmath ``erfinv``/``ncdf``) ~0.5 s.  :class:`Assistant` starts one spawned process
while the workers compute; it imports the figures' code and computes the GDP column
then (the column depends only on the allocation's ρ and the α grid), and during the
assembly it draws each figure as soon as its rows exist, while the driver's process
goes on with the next file.  The same functions with the same arguments run there, so
the files are the same bytes; their order and error handling are the serial code's.

The process is loky's (as the sweep's workers): started by fork + exec, so a script
calling ``run_sweep`` needs no ``if __name__ == "__main__"`` guard, and it exits when
the driver's process dies.  Use it as a context manager: leaving the block on an error
kills it, otherwise waits for it.  Should the process die (killed, out of memory), its
work is done here instead, so a sweep never fails for want of it.
"""

from __future__ import annotations

from concurrent.futures import BrokenExecutor

__all__ = ["Assistant", "gdp_column_of_grid", "draw_figure"]


def _start(plots: bool) -> None:
    import exactdp.sweep.summary  # noqa: F401  (the GDP column's code)

    if plots:
        import exactdp.sweep.plots  # noqa: F401  (matplotlib: ~1 s of CPU)


def gdp_column_of_grid(settings, rho) -> tuple:
    """The common α grid's texts and the GDP column of envelope.csv on them."""
    from exactdp.sweep.pair import grid_alphas
    from exactdp.sweep.summary import gdp_column

    texts = grid_alphas(settings)[0]
    return texts, gdp_column(texts, rho)


def draw_figure(name: str, *args) -> list:
    """``exactdp.sweep.plots.<name>(*args)``: the paths of the figure's files."""
    from exactdp.sweep import plots

    return getattr(plots, name)(*args)


class Assistant:
    """One helper process for :func:`exactdp.sweep.summary.assemble` (see the module).

    Parameters
    ----------
    rho : Fraction
        The allocation's total ρ (the GDP column's μ = √(2ρ)).
    settings : SweepSettings
        The sweep's settings (the α grid).
    plots : bool
        Whether figures will be drawn (their code is imported at start only then).
    """

    def __init__(self, rho, settings, plots: bool):
        from joblib.externals.loky import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(max_workers=1, initializer=_start, initargs=(bool(plots),))
        self._gdp = self._pool.submit(gdp_column_of_grid, settings, rho)
        self._figures: list = []

    def gdp_column(self, grid_texts) -> list | None:
        """The GDP column for these grid texts, or ``None`` (other texts, or no helper
        process any more: compute it here)."""
        try:
            texts, column = self._gdp.result()
        except BrokenExecutor:
            return None
        return list(column) if list(texts) == list(grid_texts) else None

    def draw(self, name: str, *args) -> None:
        """Draw one figure there: ``exactdp.sweep.plots.<name>(*args)`` (it returns the
        paths written; named, so that this process need not import matplotlib)."""
        try:
            fut = self._pool.submit(draw_figure, name, *args)
        except BrokenExecutor:
            fut = None
        self._figures.append((fut, name, args))

    def figures(self) -> list:
        """Wait for the figures; the paths of each, in the order they were asked (a figure
        the process could not draw because it died is drawn here)."""
        out = []
        for fut, name, args in self._figures:
            try:
                if fut is None:
                    raise BrokenExecutor
                out.append(fut.result())
            except BrokenExecutor:
                out.append(draw_figure(name, *args))
        return out

    def __enter__(self) -> Assistant:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._pool.shutdown(wait=True, kill_workers=exc_type is not None)
