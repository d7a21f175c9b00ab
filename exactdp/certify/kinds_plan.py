"""Where to look for ε(δ) beside continuous Gaussians: a float64 plan over the enumerated atoms.

:meth:`~exactdp.certify.kinds.KindsCertifier.epsilon` brackets ε(δ) by proving ``δ(a) > δ ≥ δ(b)`` on
Arb balls; before that it only has to *find* a narrow ``[a, b]``.  Each Arb evaluation sums an
``erfc`` over every joint atom, so a secant search in Arb alone costs tens of evaluations.  This
module finds the root in float64 first (vectorised over the atoms' midpoints: ``log δ_F(x) =
logsumexp(log p_i + log d(x − v_i))`` with ``d(t) = Φ̄((t − μ)/s) − e^t Φ̄((t + μ)/s)``, ``s = √(2μ)``,
through ``scipy.special.log_ndtr``), and hands back a bracket a little wider than its float
accuracy.  Nothing here is a bound: the caller keeps the bracket only when its Arb midpoints
straddle δ, and every end it reports is proved on Arb balls as before.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp

from exactdp.certify.kind_atoms import Atoms

__all__ = ["applies", "bracket"]

#: relative half-width of the bracket handed back (float64 sums of up to ~1e6 terms are good to
#: far better; the Arb search narrows it further)
_SLACK = 1e-10


def applies(cert) -> bool:
    """Whether the plan models the certifier's design: continuous Gaussians beside enumerated atoms,
    no randomized response by its noise parameter."""
    return bool(cert.mu) and cert.noise is None


def _arrays(A: Atoms) -> tuple[np.ndarray, np.ndarray]:
    """``(v, log p)`` of the atoms as float64 (the midpoints; cached on the atoms)."""
    got = getattr(A, "_plan_arrays", None)
    if got is None:
        keys = np.array([float(k) for k in A.keys])
        v = float(A.C) + float(A.g) * keys
        p = np.array([float(x.mid()) for x in A.P])
        with np.errstate(divide="ignore"):
            got = (v, np.log(p))
        A._plan_arrays = got  # type: ignore[attr-defined]
    return got


def _log_delta(v: np.ndarray, logp: np.ndarray, mu: float, x: float) -> float:
    """float64 ``log Σ p_i d(x − v_i)`` (module docstring)."""
    s = math.sqrt(2 * mu)
    t = x - v
    la = log_ndtr(-(t - mu) / s)  # log Φ̄((t − μ)/s)
    lb = t + log_ndtr(-(t + mu) / s)  # log e^t Φ̄((t + μ)/s)
    with np.errstate(divide="ignore", invalid="ignore"):
        ld = la + np.log1p(-np.exp(np.minimum(lb - la, 0.0)))
    ld = np.where(np.isfinite(ld), ld, -np.inf)
    return float(logsumexp(logp + ld))


def bracket(cert, atoms: tuple, dt: Fraction) -> tuple[Fraction, Fraction] | None:
    """A narrow ``(a, b)`` around the root of ``δ(ε) = dt`` from the float64 plan, or None (another
    kind of atoms, a target at or below the (ε, δ) blocks' floor, ε(δ) = 0, or no sign change found)."""
    A, kappa_ball, p_inf_ball = atoms  # (KindsCertifier.atoms at the query's level)
    if not isinstance(A, Atoms) or not len(A):
        return None
    kappa, p_inf = float(kappa_ball.mid()), float(p_inf_ball.mid())
    target = (float(dt) - p_inf) / kappa
    if not target > 0:
        return None
    v, logp = _arrays(A)
    mu = float(cert.mu)
    lt = math.log(target)

    def g(x: float) -> float:
        return _log_delta(v, logp, mu, x) - lt

    lo, hi = 0.0, 1.0
    if not g(lo) > 0:
        return None
    for _ in range(80):
        if g(hi) <= 0:
            break
        lo, hi = hi, 2 * hi
    else:
        return None
    try:
        root = brentq(g, lo, hi, xtol=1e-15 * (hi + 1), rtol=1e-15, maxiter=200)
    except (ValueError, RuntimeError):
        return None
    w = _SLACK * (abs(root) + 1)
    a, b = Fraction(max(root - w, 0.0)), Fraction(root + w)
    return (a, b) if a < b else None
