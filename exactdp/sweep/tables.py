"""The pair files' numbers a sweep's summaries need, parsed once per pair as it arrives.

:func:`exactdp.sweep.summary.assemble` needs, of every pair, its ε–δ rows (the values of
summary.csv parsed at ``DPS_RESULT``), its grid curve (texts and float64 values of β) and
four diagnostics.  :class:`PairTables` holds them, parsed from the texts of the pair's
files: the driver adds each pair's texts when its result arrives (while the workers
compute the other pairs), so the serial assembly after the last pair only takes maxima
and the envelope; pairs it does not hold (found complete by ``resume``) are read from
their files.  A text added here is the one written to the pair's file, read as the file
is read (:func:`~exactdp.sweep.io.as_read`), so the numbers are the files' numbers.
"""

from __future__ import annotations

import json

import gmpy2
import numpy as np

from exactdp.numerics.precision import DPS_RESULT
from exactdp.runs.numtext import mpfr_context, parse_mpfr, prec_of
from exactdp.sweep.io import as_read, csv_columns, csv_rows, pair_paths, read_json

__all__ = ["PairTables", "INFO_FIELDS"]

#: the diagnostics of a pair's json file the manifest reports (worst errors, method)
INFO_FIELDS = ("worst_delta_rel_error", "worst_eps_rel_width", "worst_tradeoff_rel_error", "method")


class PairTables:
    """Parsed pair files of one sweep, keyed by pair ``(i, j)``.

    Attributes
    ----------
    curves : dict
        ``(i, j)`` → the ε–δ rows (dicts of texts, as :func:`~exactdp.sweep.io.read_csv`).
    records : dict
        ``(i, j)`` → per row ``(row, δ, max(δ − error, 0), δ upper, ε, ε lower, ε upper)``,
        each number ``mpmath.mpf(text)`` at ``DPS_RESULT`` as an MPFR value.
    grids : dict
        ``(i, j)`` → the grid file's ``alpha``, ``beta``, ``beta_error_bound`` columns.
    betas : dict
        ``(i, j)`` → the ``beta`` column as float64.
    infos : dict
        ``(i, j)`` → the :data:`INFO_FIELDS` of the pair's json file (as json reads them).
    """

    def __init__(self):
        self.ctx = mpfr_context(prec_of(DPS_RESULT))
        self._zero = gmpy2.mpfr(0)
        self._seen: dict = {}  # text -> value: the pairs share most texts (57 k distinct of 238 k)
        self._alpha = None  # the first grid's α texts (the others are checked against them)
        self.curves: dict = {}
        self.records: dict = {}
        self.grids: dict = {}
        self.betas: dict = {}
        self.infos: dict = {}

    def __contains__(self, key) -> bool:
        return key in self.curves

    def _parse(self, text):
        v = self._seen.get(text)
        if v is None:
            v = self._seen[text] = parse_mpfr(text, self.ctx)
        return v

    def add(self, key, curve_text: str, grid_text: str, info: dict) -> None:
        """Add pair ``key`` from the texts of its ε–δ and grid files and its diagnostics."""
        rows = csv_rows(as_read(curve_text))
        parse, ctx, zero = self._parse, self.ctx, self._zero
        recs = []
        for row in rows:
            est = parse(row["delta_exact"])
            lo = ctx.sub(est, parse(row["delta_error_bound"]))
            recs.append((row, est, zero if zero > lo else lo, parse(row["delta_upper"]),
                         parse(row["eps_exact"]), parse(row["eps_lower"]), parse(row["eps_upper"])))
        cols = csv_columns(as_read(grid_text))
        alpha = cols["alpha"]
        if self._alpha is None:
            self._alpha = alpha
        elif alpha == self._alpha:
            alpha = self._alpha  # one list for all pairs (the usual case)
        self.curves[key] = rows
        self.records[key] = recs
        self.grids[key] = {"alpha": alpha, "beta": cols["beta"], "beta_error_bound": cols["beta_error_bound"]}
        self.betas[key] = np.array(list(map(float, cols["beta"])), dtype=np.float64)
        self.infos[key] = json.loads(json.dumps({k: info[k] for k in INFO_FIELDS if k in info}))

    def add_files(self, out, i: int, j: int) -> None:
        """Add pair ``(i, j)`` from its files in the sweep folder ``out``."""
        files = pair_paths(out, i, j)
        self.add((i, j), files["curve"].read_text(encoding="utf-8"), files["grid"].read_text(encoding="utf-8"),
                 read_json(files["info"]))
