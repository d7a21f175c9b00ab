"""The trade-off and grid texts of a sweep pair from the double-double kernels.

:func:`tradeoff_texts` gives, for the distinct ``(log value, relative error)`` keys of a
pair's trade-off vertices, the 25-digit texts that
:func:`exactdp.runs.numtext.vertex_values` prints, and the grid lines that
:func:`exactdp.sweep.pair.grid_rows` writes, computed by :mod:`exactdp.kernels.dectext`
(double-word arithmetic with a rigorous bound; a text is taken only where the bound
decides its rounding).  A vertex the kernel leaves undecided takes
:func:`~exactdp.runs.numtext.vertex_value`; a grid point it leaves undecided (or any
input outside its range) makes :func:`tradeoff_texts` return ``None``, and the caller
computes the pair with MPFR as before.  ``tests/test_ddtext.py`` compares both with
references computed in mpmath at high precision.
"""

from __future__ import annotations

import functools
from decimal import Decimal

import numpy as np

from exactdp.kernels.dectext import TEXT_WIDTH, dd_tables, exp_texts, grid_texts
from exactdp.runs.numtext import bound_texts_float, vertex_value

__all__ = ["EXP_EXTRA", "tradeoff_texts", "vertex_texts", "decimal_of", "rows_text", "all_floats"]

#: relative distance between e^x and the number whose 25-digit text the sweep prints
#: (mpmath's ``mpf_exp`` at 136 bits: < 2^-103, ``tests/test_sweep_format.py``), doubled
EXP_EXTRA = 2.0**-102
_TABLES = dd_tables()
_P13 = 10**13


def rows_text(buf, lens) -> list:
    """The texts in the rows of a kernel's character buffer (ASCII codes): row i's first
    ``lens[i]`` characters.

    In one pass when every row holds a text without spaces (the kernels' texts: digits,
    ``.``, ``e`` and signs): the rest of each row blanked, the buffer decoded once and split
    on the blanks; otherwise row by row."""
    w = TEXT_WIDTH
    b = buf.astype(np.uint8)
    n = lens.shape[0]
    if n and lens.min() > 0 and not (b == 32).any():
        b[np.arange(w)[None, :] >= lens[:, None]] = 32
        out = b.tobytes().decode("ascii").split()
        if len(out) == n:
            return out
    raw = buf.astype(np.uint8).tobytes().decode("ascii")
    return [raw[w * i: w * i + m] for i, m in enumerate(lens.tolist())]


def all_floats(xs) -> bool:
    """Whether every element of ``xs`` is a Python float (the type, exactly)."""
    return set(map(type, xs)) <= _FLOAT_TYPE


_FLOAT_TYPE = {float}


def decimal_of(text: str):
    """``(high, low, e)`` of a 25-significant-digit decimal text (``q = high·10^13 + low``,
    value ``q·10^(e−24)``), or ``None`` for any other text."""
    sign, digits, exponent = Decimal(text).as_tuple()
    if sign or len(digits) != 25 or digits[0] == 0 or not isinstance(exponent, int):
        return None
    q = int("".join(map(str, digits)))
    return q // _P13, q % _P13, exponent + 24


def vertex_texts(keys) -> tuple | None:
    """``(texts, decimals)`` of distinct ``(log value, rel)`` keys (both floats): the text
    :func:`~exactdp.runs.numtext.vertex_value` gives, and its ``(high, low, e)`` (an
    ``(n, 3)`` int64 array); ``None`` when a key is not of floats or a text is not a
    positive 25-digit decimal."""
    lvs = [lv for lv, _ in keys]
    if not all_floats(lvs):
        return None
    buf, lens, dec, status = exp_texts(np.array(lvs, dtype=np.float64), *_TABLES, EXP_EXTRA)
    texts = rows_text(buf, lens)
    for i in np.flatnonzero(status).tolist():
        lv, rel = keys[i]
        text = vertex_value(lv, float(rel))[0]
        d = decimal_of(text)
        if d is None:
            return None
        texts[i] = text
        dec[i] = d
    return texts, dec


@functools.lru_cache(maxsize=4)
def _grid_decimals(texts: tuple):
    rows = [decimal_of(t) for t in texts]
    if any(r is None for r in rows):
        return None
    return np.array(rows, dtype=np.int64)


def tradeoff_texts(keys, ia, ib, grid_alpha_texts: tuple, grid_head: str) -> tuple | None:
    """``(vertex texts, grid lines)`` of a pair, or ``None`` (use the MPFR path).

    ``keys``: the distinct ``(log value, rel)`` of the vertices; ``ia``, ``ib``: each
    vertex's α and β as indices into ``keys``; ``grid_alpha_texts``: the common α grid's
    25-digit texts.  The grid lines are :func:`exactdp.sweep.pair.grid_rows`'s (the head
    first)."""
    rels = [rel for _, rel in keys]
    if not all_floats(rels):
        return None
    got = vertex_texts(keys)
    grid = _grid_decimals(grid_alpha_texts)
    if got is None or grid is None or not ia:
        return None
    texts, dec = got
    ia_, ib_ = np.array(ia, dtype=np.int64), np.array(ib, dtype=np.int64)
    va, vb = dec[ia_], dec[ib_]
    # sorted by (α ascending, β descending), ties in vertex order (lexsort is stable)
    order = np.lexsort((-vb[:, 1], -vb[:, 0], -vb[:, 2], va[:, 1], va[:, 0], va[:, 2]))
    rel = np.array(rels, dtype=np.float64)
    buf, lens, errf, status = grid_texts(va[order], vb[order], rel[ia_][order], rel[ib_][order], grid,
                                         _TABLES[0], _TABLES[1])
    if status.any():
        return None
    bounds = bound_texts_float(np.nextafter(errf, np.inf))
    lines = [grid_head]
    lines += [f"{t},{b},{e}\n" for t, b, e in zip(grid_alpha_texts, rows_text(buf, lens), bounds)]
    return texts, lines
