"""Sampling the shifted-log Gaussian mechanism (eq. 4) with optional stochastic rounding."""

from __future__ import annotations

import numpy as np

from exactdp.countdep.params import ShiftedLogParams
from exactdp.numerics.exact import InputError

__all__ = ["sample", "stochastic_round"]


def _counts_array(counts) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.dtype.kind == "O" or arr.dtype.kind == "f":
        try:
            as_int = np.asarray([int(x) for x in np.ravel(arr)], dtype=np.int64).reshape(arr.shape)
        except (TypeError, ValueError):
            raise InputError("counts", counts, "counts must be integers") from None
        if arr.dtype.kind == "f" and not np.array_equal(as_int, arr):
            raise InputError("counts", counts, "counts must be integers")
        arr = as_int
    if arr.dtype.kind not in "iu":
        raise InputError("counts", counts, "counts must be integers")
    if np.any(arr < 0):
        raise InputError("counts", counts, "a count must be >= 0")
    return arr.astype(np.int64)


def stochastic_round(y, rng: np.random.Generator) -> np.ndarray:
    """Round each y ≥ 0 to ⌊y⌋ or ⌈y⌉ with conditional mean y.

    Outputs ⌊y⌋ + 1 with probability y − ⌊y⌋.  Post-processing, so privacy is unchanged;
    for an integer true count n the conditional expected error is exactly |y − n|
    (z ↦ |z − n| is linear between consecutive integers).

    Notes
    -----
    One uniform draw per entry (``rng.random``); float64.  Reference: Fitzsimons (2026),
    remark after Corollary 3.2.
    """
    y = np.asarray(y, dtype=np.float64)
    fl = np.floor(y)
    return (fl + (rng.random(y.shape) < (y - fl))).astype(np.int64)


def sample(
    params: ShiftedLogParams,
    counts,
    rng: np.random.Generator,
    *,
    size=None,
    rounding: bool = False,
) -> np.ndarray:
    """Release noisy counts x̂ = [(x + c)·exp(σZ − σ²) − c]₊, independent Z per cell.

    Parameters
    ----------
    params : ShiftedLogParams
    counts : array_like of int
        True counts (``>= 0``), any shape.
    rng : numpy.random.Generator
        Source of randomness (seed it for reproducibility).
    size : int or tuple, optional
        Number of independent repetitions; the output has shape ``size + counts.shape``.
    rounding : bool
        Apply :func:`stochastic_round` to return integers.

    Returns
    -------
    numpy.ndarray
        float64 releases, or int64 when ``rounding``.

    Notes
    -----
    Float64 arithmetic with σ rounded to a double; the release is a post-processing of
    N(log(x+c) − σ², σ²) (eq. 10), whose budget is v(n) of (5)–(6).  This is a
    statistical sampler (numpy's ziggurat normal), not a side-channel–hardened one.
    Reference: Fitzsimons (2026), eq. (4) and the remark after Corollary 3.2.
    """
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng", rng, "pass a numpy.random.Generator, e.g. numpy.random.default_rng(seed)")
    x = _counts_array(counts).astype(np.float64)
    sigma = params.sigma_float()
    shape = x.shape if size is None else tuple(np.atleast_1d(size)) + x.shape
    z = rng.standard_normal(shape)
    c = float(params.c)
    y = np.maximum((x + c) * np.exp(sigma * z - sigma * sigma) - c, 0.0)
    if rounding:
        return stochastic_round(y, rng)
    return y
