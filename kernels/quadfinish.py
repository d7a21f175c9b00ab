"""Per-batch finishing kernels of the tilted-contour rule (one call per tilt, not per value).

:func:`grid_tilts` gives the grid tilts of many thresholds in one call and
:func:`finish_values` turns the signed sums of all queries on one tilt into their logs and
certified relative errors; :func:`finish_tilts` is ``finish_values`` on consecutive
segments of its inputs, each with the floats of its own tilt (one call for a batch of
tilts: each value the same call on the same numbers).  They repeat, value by value, the float operations of the
Python code they replace (``QuadratureTails._grid_lam``, the float path of
``QuadratureTails._finish`` with :func:`~exactdp.kernels.tilted.alias_bound`) in the same
order, with the same libm calls, so every number is bit-identical to the scalar path; a
value outside that path is flagged for the Python code.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.tilted import ALIAS_FALLBACK, alias_bound_at, moment_table, saddle_point_at
from exactdp.kernels.units import EPS64

__all__ = ["HUGE_MU", "grid_tilts", "finish_values", "finish_tilts", "GRID_OK", "GRID_HUGE", "GRID_PYTHON", "FINISH_OK",
           "FINISH_EMPTY", "FINISH_PYTHON"]

#: status of a value in :func:`finish_values`: done on the float path
FINISH_OK = 0
#: the signed sum is not positive and finite (log −inf, bound inf)
FINISH_EMPTY = 1
#: outside the float path (huge exponents, an aliasing fallback): the Python code answers
FINISH_PYTHON = 2

#: status of a threshold in :func:`grid_tilts`: on the grid
GRID_OK = 0
#: the tilt is huge (λ·max|A s²| > HUGE_MU): an exact rational saddle point is needed
GRID_HUGE = 1
#: the saddle point is not finite: the Python code answers (and refuses)
GRID_PYTHON = 2
#: above this tilted centre |A λ s²| a float λ cannot place the centre to 1e-4 (the
#: engine's tilts are then exact rationals; exactdp.engine.tilt.HUGE_MU is this)
HUGE_MU = 2.0**36
#: |log| above which a float64 exponent would lose relative accuracy (as in quadrature.py)
_FLOAT_LOG_MAX = 1e4


@kernel("Tuple((float64[:], int64[:]))(int64[:], int64[:], float64[:], float64[:], float64, boolean, float64, float64, "
        "float64)")
def grid_tilts(A, m, s2, s, V, gaussian, step, floor, mu_scale):
    """The grid tilt of each threshold s (float): the saddle point λ (``saddle_point(A, m,
    s2, s, s/V)``, s/V when every group is Gaussian, 0 for s ≤ 0) rounded to the grid
    ``j·step`` (j = round half even), at least ``floor``; with a status per threshold:
    :data:`GRID_OK`, :data:`GRID_HUGE` (λ·mu_scale > HUGE_MU: the caller takes the exact
    saddle point) or :data:`GRID_PYTHON` (λ not finite)."""
    n = s.shape[0]
    key = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    mc = moment_table(s2)  # the saddle points' s²-only constants, once
    for i in range(n):
        lam = 0.0
        if s[i] > 0:
            lam0 = s[i] / V
            lam = lam0 if gaussian else saddle_point_at(A, m, s2, mc, s[i], lam0)
        key[i] = lam
        if lam * mu_scale > HUGE_MU:
            status[i] = GRID_HUGE
        elif not math.isfinite(lam):
            status[i] = GRID_PYTHON
        else:
            lam_j = np.rint(lam / step) * step
            key[i] = lam_j if lam_j > floor else floor
            status[i] = GRID_OK
    return key, status


@kernel("Tuple((float64[:], float64[:], int64[:]))(float64[:], int64[:], float64[:, :], float64[:], int64, int64[:], "
        "int64[:], float64[:], int64[:], boolean)")
def finish_values(r, s, aux, tp, n_nodes, A, m, s2, small, gaussian):
    """``(log estimate, relative error, status)`` of each query on one (non-huge) tilt.

    Per query: its signed sum ``r`` and threshold ``s`` (|s| < 2⁵³); ``aux`` holds, per
    query (or in one column for all), the kernel-factor log, its error and the bound sums
    ``errsum``, ``sumabs``; ``tp`` the tilt's floats (λ, E, float(κ), κ's error, ρ(λ),
    ``exp(−T)`` of the sieve level, the Gaussian slack, V').  Status :data:`FINISH_OK`
    (done), :data:`FINISH_EMPTY` (r not positive and finite) or :data:`FINISH_PYTHON` (not
    on the float path)."""
    lam, exact_f, kappa_f, kappa_err, rho_lam, exp_mt, slack, V = tp[0], tp[1], tp[2], tp[3], tp[4], tp[5], tp[6], tp[7]
    n = r.shape[0]
    wide = aux.shape[1] == n
    log_est = np.empty(n)
    rel_out = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    # the aliasing bound's constants of this tilt (alias_bound forms the same per call)
    mc = moment_table(s2)
    log_tail = math.log(-math.expm1(-lam * float(n_nodes)))
    for i in range(n):
        ri = r[i]
        j = i if wide else 0
        log_est[i] = -np.inf
        rel_out[i] = np.inf
        if not (ri > 0 and math.isfinite(ri)):
            status[i] = FINISH_EMPTY
            continue
        lk = aux[0, j]
        lr = math.log(ri)
        small_v = lk + lr
        small_err = aux[1, j] + 2 * EPS64 * abs(lr) + kappa_err
        ls = lam * s[i]
        if not (abs(exact_f) < _FLOAT_LOG_MAX and abs(ls) < _FLOAT_LOG_MAX):
            status[i] = FINISH_PYTHON
            continue
        bigf = exact_f - ls
        est = bigf + kappa_f + small_v
        small_err += 4 * EPS64 * (abs(exact_f) + 2 * abs(ls) + abs(kappa_f) + abs(small_v) + 1)
        rel_r = (exp_mt + aux[2, j] + 3 * EPS64 * aux[3, j] + 1e-300) / ri
        log_r = exact_f - lam * s[i] + kappa_f + lk
        alias = alias_bound_at(lam, n_nodes, s[i], log_r, lk, rho_lam, V, A, m, s2, small, gaussian, mc, log_tail)
        if alias == ALIAS_FALLBACK:
            status[i] = FINISH_PYTHON
            continue
        rel = rel_r + alias / ri + math.expm1(small_err) + slack
        rel *= 1 + 1e-6
        log_est[i] = est
        rel_out[i] = rel
        status[i] = FINISH_OK
    return log_est, rel_out, status


@kernel("Tuple((float64[:], float64[:], int64[:]))(float64[:], int64[:], float64[:, :], float64[:, :], int64[:], "
        "int64, int64[:], int64[:], float64[:], int64[:], boolean)")
def finish_tilts(r, s, aux, tps, seg, n_nodes, A, m, s2, small, gaussian):
    """``(log estimate, relative error, status)`` of every query: the queries
    ``seg[t]:seg[t + 1]`` lie on tilt t, whose floats are ``tps[t]`` (as ``tp`` of
    :func:`finish_values`); ``aux`` has one column per query."""
    n = r.shape[0]
    log_est = np.empty(n)
    rel_out = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    for t in range(seg.shape[0] - 1):
        a = seg[t]
        b = seg[t + 1]
        if b <= a:
            continue
        e, rl, st = finish_values(r[a:b], s[a:b], aux[:, a:b], tps[t], n_nodes, A, m, s2, small, gaussian)
        log_est[a:b] = e
        rel_out[a:b] = rl
        status[a:b] = st
    return log_est, rel_out, status
