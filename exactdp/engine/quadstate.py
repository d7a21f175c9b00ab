"""The state of the sieved tilted-contour rule (:mod:`exactdp.engine.quadrature`): one
sieve level (the kept nodes and their weights) and a tilt evaluated on it (the node
factors, their certified bounds and the exact parts of the exponent)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from exactdp.engine.values import TailValue

__all__ = ["Tilt", "SieveLevel", "tail_values"]


def tail_values(ss, ests, rels, method: str, kept: int, total: int, lam: float, _tnew=tuple.__new__) -> list:
    """``[tail_value(s, e, r, method, kept, total, lam) for s, e, r in zip(ss, ests, rels)]``:
    the same objects, built in one loop (the values of one tilt share their last four fields)."""
    tv = TailValue
    return [_tnew(tv, (s, e, r, method, kept, total, lam)) for s, e, r in zip(ss, ests, rels)]


@dataclass
class Tilt:
    """One tilt λ of the rule on one sieve level: node factors G_n, bounds, exact exponent."""

    lam: float
    lamq: Fraction
    exact: Fraction  # E = λ²V'/2 − Σ_direct m f²/(2s²)
    exact_f: float
    rho_lam: float  # K(λ) − λ²V'/2 = float(E − λ²V'/2) + κ  (≤ 0)
    kappa: Any  # mpf
    kappa_err: float
    s0: int
    f: np.ndarray
    G: np.ndarray
    aG: np.ndarray  # |G|·w
    err: np.ndarray
    sumabs: float
    errsum: float
    log1m: float
    sieve: SieveLevel
    err_hs: np.ndarray | None = None  # err + γ0 + 16u, the hockey-stick sums' per-node bound
    fin: np.ndarray | None = None  # the floats finish_values needs (λ, E, κ, κ_err, ρ, e^{−T}, slack, V')
    aux: np.ndarray | None = None  # (4, 1): a tail's log K, its error, errsum, sumabs
    key: object = None  # the tilt's cache key: λ as a float or a Fraction (equal to lamq)


@dataclass
class SieveLevel:
    """One sieve level: the kept nodes, their weights and the tilts evaluated on them."""

    T: float
    umax: np.ndarray
    nodes: np.ndarray
    w: np.ndarray
    tilts: OrderedDict
    n_nodes: int
    trig: tuple | None = None  # (cos θ_n, sin θ_n, sin(θ_n/2)), built on first use
    max_tilts: int = 24  # tilts kept (LRU): at least 24, as many as _TILT_BYTES holds
