"""Progress of the commands that run many cases (``product``, ``portfolio``,
``census-2020``): a tqdm bar on a terminal, else one line per tenth of the cases or per
minute (:class:`~exactdp.sweep.runtime.ProgressLines`, as the sweep's), nothing when quiet."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["CaseProgress"]


class CaseProgress:
    """A ``progress(k, n, label)`` callback (:func:`~exactdp.census.product_accounting.family_rows`)
    that draws the bar; the total is taken from the first call.  ``close()`` when done.

    Parameters
    ----------
    desc : str
        The bar's label (``"exactdp product"``).
    quiet : bool
        Draw nothing.
    unit : str
        What a step is (``"case"``).
    """

    def __init__(self, desc: str, quiet: bool = False, unit: str = "case"):
        self.desc, self.quiet, self.unit = desc, quiet, unit
        self._bar: Any = None
        self._done = 0

    def _open(self, total: int):
        if not sys.stderr.isatty():
            from exactdp.sweep.runtime import ProgressLines

            return ProgressLines(total, self.desc)
        from tqdm import tqdm

        return tqdm(total=total, file=sys.stderr, unit=self.unit, desc=self.desc, dynamic_ncols=True)

    def __call__(self, k: int, n: int, label: str = "") -> None:
        if self.quiet:
            return
        if self._bar is None:
            self._bar = self._open(n)
        self._bar.update(k - self._done)
        self._done = k

    def close(self) -> None:
        """Close the bar (a finished bar stays on the terminal)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
