"""Per-batch finishing kernels of the tilted-contour rule (one call per tilt, not per value).

:func:`saddle_points` gives the saddle points of many thresholds in one call and
:func:`finish_values` turns the signed sums of all queries on one tilt into their logs and
certified relative errors.  Both repeat, value by value, the float operations of the
Python code they replace (``QuadratureTails.saddle``, the float path of
``QuadratureTails._finish`` with :func:`~exactdp.kernels.tilted.alias_bound`) in the same
order, with the same libm calls, so every number is bit-identical to the scalar path; a
value outside that path is flagged for the Python code.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.jit import kernel
from exactdp.kernels.tilted import ALIAS_FALLBACK, alias_bound, saddle_point

__all__ = ["saddle_points", "finish_values", "FINISH_OK", "FINISH_EMPTY", "FINISH_PYTHON"]

#: status of a value in :func:`finish_values`: done on the float path
FINISH_OK = 0
#: the signed sum is not positive and finite (log −inf, bound inf)
FINISH_EMPTY = 1
#: outside the float path (huge exponents, an aliasing fallback): the Python code answers
FINISH_PYTHON = 2

#: |log| above which a float64 exponent would lose relative accuracy (as in quadrature.py)
_FLOAT_LOG_MAX = 1e4
_U = 2.0**-52


@kernel("float64[:](int64[:], int64[:], float64[:], float64[:], float64, boolean)")
def saddle_points(A, m, s2, s, V, gaussian):
    """For each threshold s (float; > 0): ``saddle_point(A, m, s2, s, s/V)`` (or s/V when
    every group is Gaussian); 0 for s ≤ 0."""
    out = np.empty(s.shape[0])
    for i in range(s.shape[0]):
        if s[i] > 0:
            lam0 = s[i] / V
            out[i] = lam0 if gaussian else saddle_point(A, m, s2, s[i], lam0)
        else:
            out[i] = 0.0
    return out


@kernel("Tuple((float64[:], float64[:], int64[:]))(float64[:], int64[:], float64[:], float64[:], float64[:], "
        "float64[:], float64, float64, float64, float64, float64, float64, float64, int64, float64, int64[:], "
        "int64[:], float64[:], int64[:], boolean)")
def finish_values(r, s, log_k, log_k_err, errsum, sumabs, lam, exact_f, kappa_f, kappa_err, rho_lam, exp_mt,
                  slack, n_nodes, V, A, m, s2, small, gaussian):
    """``(log estimate, relative error, status)`` of each query on one (non-huge) tilt.

    Per query: its signed sum ``r``, threshold ``s`` (|s| < 2⁵³), kernel-factor log
    ``log_k`` with its error, and the bound sums ``errsum``/``sumabs``; per tilt: λ, the
    float exact exponent E, float(κ) and its error, ρ(λ), ``exp(−T)`` of the sieve level,
    the Gaussian slack.  Status :data:`FINISH_OK` (done), :data:`FINISH_EMPTY` (r not
    positive and finite) or :data:`FINISH_PYTHON` (not on the float path)."""
    n = r.shape[0]
    log_est = np.empty(n)
    rel_out = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    for i in range(n):
        ri = r[i]
        log_est[i] = -np.inf
        rel_out[i] = np.inf
        if not (ri > 0 and math.isfinite(ri)):
            status[i] = FINISH_EMPTY
            continue
        lk = log_k[i]
        lr = math.log(ri)
        small_v = lk + lr
        small_err = log_k_err[i] + 2 * _U * abs(lr) + kappa_err
        ls = lam * s[i]
        if not (abs(exact_f) < _FLOAT_LOG_MAX and abs(ls) < _FLOAT_LOG_MAX):
            status[i] = FINISH_PYTHON
            continue
        bigf = exact_f - ls
        est = bigf + kappa_f + small_v
        small_err += 4 * _U * (abs(exact_f) + 2 * abs(ls) + abs(kappa_f) + abs(small_v) + 1)
        rel_r = (exp_mt + errsum[i] + 3 * _U * sumabs[i] + 1e-300) / ri
        log_r = exact_f - lam * s[i] + kappa_f + lk
        alias = alias_bound(lam, n_nodes, s[i], log_r, lk, rho_lam, V, A, m, s2, small, gaussian)
        if alias == ALIAS_FALLBACK:
            status[i] = FINISH_PYTHON
            continue
        rel = rel_r + alias / ri + math.expm1(small_err) + slack
        rel *= 1 + 1e-6
        log_est[i] = est
        rel_out[i] = rel
        status[i] = FINISH_OK
    return log_est, rel_out, status
