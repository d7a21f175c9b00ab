"""Vectorised float64 evaluation of two-level posterior log-odds with error bounds (private).

For one released block-group value ``x2*`` (reduced coordinates) and arrays of ``y1*`` and
``x1*``, compute the posterior log-odds ``Λ(x1*, y1*)`` of "the target has c" and a bound
``err`` with ``|Λ_true - Λ| ≤ err``.  Sums over ``X2`` run in the log domain
(log-sum-exp) over the window ``[max(c, x2* - K2), x2* + K2]`` (``c`` = 0 or 1, the exact
lower limit ``X2 ≥ X1``); the terms left out are at most ``kmax · Σ_{j>K2} exp(-a2 j²)``
on each side (``kmax = 1`` bounds both Y1* kernels).

Error model (binary64; every bound is counted in ``EPS64 = 2⁻⁵²``, twice the unit roundoff
u, see :mod:`exactdp.numerics.precision`): every log-term carries an absolute error ≤
``4·EPS64·|term| + kernel error`` (products of a correctly rounded coefficient and an exact
integer square; for the exact Y1* kernel add the relative error of the convolved pmf and
``log(1 + error_bound/h̃)`` for its truncation); exp/log add ≤ 4 ulp; a log-sum-exp turns the
term errors into the weighted relative error ``Σ w_i (e^{err_i} - 1)/Σ w_i`` and adds
``γ_n`` for the n-term positive sum (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., §4.2).  Cells whose sign of ``Λ`` is not
certified are returned as ambiguous; the caller resolves them in multiprecision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from exactdp.dgauss.mp import half_tail_sum_bound
from exactdp.dgauss.sums import sum_pmf
from exactdp.numerics.precision import DPS_LOW, EPS64
from exactdp.numerics.search import least_int
from exactdp.risk._hsetup import HierarchicalSetup
from exactdp.risk.single import log_prior_odds

__all__ = ["Engine", "RowResult"]

_LOG_TINY = -700.0  # tails below exp(-700) relative to the kernel maximum 1


def _gamma(n: int) -> float:
    nu = (n + 8) * EPS64
    return nu / (1 - nu)


def _lse(logs: np.ndarray, errs: np.ndarray, axis: int = -1):
    """log Σ exp(logs) along ``axis`` and an absolute error bound (``-inf`` terms skipped)."""
    finite = np.isfinite(logs)
    M = np.max(np.where(finite, logs, -np.inf), axis=axis, keepdims=True)
    Msafe = np.where(np.isfinite(M), M, 0.0)
    diff = np.where(finite, logs - Msafe, -np.inf)
    s = np.sum(np.exp(diff), axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        out = Msafe + np.log(s)
    n = logs.shape[axis]
    # weighted relative error of the sum: Σ w_i (e^{err_i} - 1) / Σ w_i (tiny terms with large
    # errors barely matter)
    term_err = np.where(finite, np.minimum(errs + 5 * EPS64 * (np.abs(diff) + 1), 700.0), 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        rel = np.sum(np.exp(diff) * np.expm1(term_err), axis=axis, keepdims=True) / np.where(s > 0, s, 1.0)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    err = 1.01 * (np.log1p(rel) + _gamma(n) + 5 * EPS64 * (np.abs(np.log(np.where(s > 0, s, 1.0))) + np.abs(out) + 1))
    out = np.squeeze(out, axis=axis)
    err = np.squeeze(err, axis=axis)
    out = np.where(np.isfinite(np.squeeze(M, axis=axis)), out, -np.inf)
    return out, err


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log(1/(1+exp(-x))) computed stably."""
    return -np.logaddexp(0.0, -x)


@dataclass(frozen=True)
class RowResult:
    """Log-odds on a (x1*, y1*) grid for one x2* (reduced coordinates)."""

    log_odds: np.ndarray  # shape (n_x1, n_y)
    error_bound: np.ndarray  # same shape: |true log-odds − log_odds| ≤ error_bound


class Engine:
    """Float64 evaluator bound to one :class:`HierarchicalSetup`."""

    def __init__(self, setup: HierarchicalSetup):
        self.setup = setup
        self.a1 = float(setup.a1)
        self.a2 = float(setup.a2)
        self.b = float(setup.b)
        with mpmath.workdps(DPS_LOW):
            self.lpo = float(log_prior_odds(setup.p))
        # X2 window half-width: one-sided tail of exp(-a2 j²) below exp(-700)
        a2 = setup.a2
        K0 = max(2, int(math.ceil(math.sqrt(-_LOG_TINY / float(a2)))))
        with mpmath.workdps(DPS_LOW):
            K2 = least_int(lambda K: mpmath.log(half_tail_sum_bound(a2, K)) <= _LOG_TINY, K0, lowest=K0)
            self.log_tail = float(mpmath.log(half_tail_sum_bound(a2, K2)))
            # Σ_z exp(-a2 z²) ≤ 1 + sqrt(pi/a2)
            z2 = 1.0 + math.sqrt(math.pi / float(a2))
        self.K2 = K2
        self._h = None
        if setup.y_noise == "exact":
            h = sum_pmf(setup.a1, setup.d)
            self._h = h
            with np.errstate(divide="ignore"):
                self._logh = np.log(h.values)
            self.kernel_rel = h.rel_error
            self.kernel_abs = (h.error_bound + 1e-290) * z2
        else:
            self.kernel_rel = 0.0
            self.kernel_abs = 0.0

    # ------------------------------------------------------------------ kernels
    def _logk(self, u: np.ndarray):
        """(log k(u), abs error) for the adversary's Y1* kernel (unnormalised for approx)."""
        if self._h is None:
            val = -self.b * (u.astype(np.float64) ** 2)
            return val, 4 * EPS64 * np.abs(val)
        idx = u - self._h.offset
        ok = (idx >= 0) & (idx < self._logh.size)
        val = np.full(u.shape, -np.inf)
        val[ok] = self._logh[idx[ok]]
        safe = np.where(np.isfinite(val), val, 0.0)
        # rounding (relative) + component truncation: h̃ ≤ h ≤ h̃ + error_bound
        with np.errstate(over="ignore"):
            trunc = np.log1p(np.exp(np.minimum(math.log(self._h.error_bound) - safe, 700.0)))
        err = np.where(np.isfinite(val), 1.01 * self.kernel_rel + 4 * EPS64 * np.abs(safe) + trunc, 0.0)
        # entries < 1e-290 may have lost relative accuracy (underflow); their absolute
        # error (< 1e-290) is covered by ``kernel_abs``
        small = np.isfinite(val) & (val < math.log(1e-290))
        err = np.where(small, 0.0, err)
        return val, err

    def window(self, x2s: int, lower: int):
        lo = max(lower, x2s - self.K2)
        hi = max(lo, x2s + self.K2)
        return np.arange(lo, hi + 1, dtype=np.int64), lo > lower

    def _log_S(self, x2s: int, ys: np.ndarray, x: int):
        """log S_x(x2*, y1*) for all ys, its error bound, and the per-term arrays."""
        X, cut_low = self.window(x2s, x)
        lg = -self.a2 * ((x2s - X).astype(np.float64) ** 2)
        lk, ek = self._logk(ys[:, None] + x - X[None, :])
        terms = lg[None, :] + lk
        errs = 4 * EPS64 * np.abs(lg)[None, :] + ek + 2 * EPS64 * np.abs(terms)
        errs = np.where(np.isfinite(terms), errs, 0.0)
        lse, err = _lse(terms, errs)
        # truncated X2 tails (one or two sides) + exact-kernel truncation, relative to S
        log_abs = self.log_tail + (math.log(2.0) if cut_low else 0.0)
        rel = np.exp(np.minimum(log_abs - lse, 50.0))
        if self.kernel_abs > 0:
            rel = rel + np.exp(np.minimum(math.log(self.kernel_abs) - lse, 50.0))
        err = err + 1.01 * rel
        return lse, err, X, terms, errs

    # ------------------------------------------------------------------ log-odds
    def row(self, x2s: int, x1_values: np.ndarray, ys: np.ndarray) -> RowResult:
        """Log-odds for every (x1*, y1*) at block-group value ``x2s`` (reduced coordinates)."""
        x1_values = np.asarray(x1_values, dtype=np.int64)
        ys = np.asarray(ys, dtype=np.int64)
        base = self.lpo + self.a1 * (2 * x1_values.astype(np.float64) - 1)
        base_err = 4 * EPS64 * (abs(self.lpo) + np.abs(base) + 1)
        lS0, e0, X0, t0, te0 = self._log_S(x2s, ys, 0)
        lS1, e1, X1, t1, te1 = self._log_S(x2s, ys, 1)
        if self.setup.model == "joint":
            lo = base[:, None] + (lS1 - lS0)[None, :]
            err = base_err[:, None] + (e0 + e1 + 4 * EPS64 * (np.abs(lS0) + np.abs(lS1)))[None, :]
            return RowResult(lo, err)
        # gibbs-variant: log K01 - log K10 with Λ_X = base + log k(y+1-X) - log k(y-X)
        lkA, ekA = self._logk(ys[:, None] + 1 - X0[None, :])  # on the X0 grid
        lkB, ekB = self._logk(ys[:, None] - X0[None, :])
        with np.errstate(invalid="ignore"):
            dk = lkA - lkB
        dk_ok = np.isfinite(dk)
        dk = np.where(dk_ok, dk, 0.0)
        dk_err = np.where(dk_ok, ekA + ekB + 2 * EPS64 * np.abs(dk), np.inf)
        lam = base[:, None, None] + dk[None, :, :]  # (nx1, ny, nX0)
        lam_err = base_err[:, None, None] + dk_err[None, :, :]
        # Where one kernel value lies outside the convolved support (true value ≤ error_bound),
        # Λ_X is not representable: drop the term and bound it by its weight t (σ ≤ 1).
        bad0 = np.isfinite(t0) & ~dk_ok
        num01 = np.where(bad0[None, :, :], -np.inf, t0[None, :, :] + _log_sigmoid(lam))
        err01 = te0[None, :, :] + lam_err + 4 * EPS64 * (np.abs(np.where(np.isfinite(num01), num01, 0.0)) + 1)
        err01 = np.where(np.isfinite(num01), err01, 0.0)
        lN01, eN01 = _lse(num01, err01)
        drop01, _ = _lse(np.where(bad0, t0, -np.inf), np.zeros_like(t0))
        # X1 grid starts one later (X ≥ 1): align with X0 grid
        off = int(X1[0] - X0[0])
        n1 = X1.size
        lam1 = lam[:, :, off : off + n1]
        lam1_err = lam_err[:, :, off : off + n1]
        if lam1.shape[2] != n1:  # pragma: no cover - windows always nest
            raise RuntimeError("window mismatch")
        bad1 = np.isfinite(t1) & ~dk_ok[:, off : off + n1]
        num10 = np.where(bad1[None, :, :], -np.inf, t1[None, :, :] + _log_sigmoid(-lam1))
        err10 = te1[None, :, :] + lam1_err + 4 * EPS64 * (np.abs(np.where(np.isfinite(num10), num10, 0.0)) + 1)
        err10 = np.where(np.isfinite(num10), err10, 0.0)
        lN10, eN10 = _lse(num10, err10)
        drop10, _ = _lse(np.where(bad1, t1, -np.inf), np.zeros_like(t1))
        # tails relative to the numerators (σ ≤ 1; the left-out gaussian mass is as for S),
        # plus the dropped edge terms and the exact-kernel truncation
        log_abs = self.log_tail + math.log(2.0)
        r01 = np.exp(np.minimum(log_abs - lN01, 50.0)) + np.exp(np.minimum(drop01[None, :] - lN01, 50.0))
        r10 = np.exp(np.minimum(log_abs - lN10, 50.0)) + np.exp(np.minimum(drop10[None, :] - lN10, 50.0))
        if self.kernel_abs > 0:
            r01 = r01 + np.exp(np.minimum(math.log(self.kernel_abs) - lN01, 50.0))
            r10 = r10 + np.exp(np.minimum(math.log(self.kernel_abs) - lN10, 50.0))
        lo = lN01 - lS0[None, :] - lN10 + lS1[None, :]
        err = eN01 + eN10 + (e0 + e1)[None, :] + 1.01 * (r01 + r10) + 4 * EPS64 * (
            np.abs(lN01) + np.abs(lN10) + np.abs(lS0)[None, :] + np.abs(lS1)[None, :]
        )
        return RowResult(lo, err)
