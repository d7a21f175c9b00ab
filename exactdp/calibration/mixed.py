"""Calibration inside a mixed design: the least noise of one kind, the rest of the design
fixed, whose exact (ε, δ) still meets a target (an exact, certified Tumult-style conversion).

For a :class:`~exactdp.kinds.Mixture`, every group of one kind is rescaled by a rational c —
discrete Laplace scales ``b → c·b``, discrete or continuous Gaussian variances ``σ² → c·σ²``
(their ρ divided by c) — and the smallest c whose exact δ_c(ε_t) is ≤ δ_t by the certified upper
bound is bracketed by the search of :mod:`exactdp.calibration.calibrate` (certified
feasible upper end, certified infeasible lower end, safeguarded secant on log δ).  The
other kinds (randomized response, (ε, δ) blocks, the other noise kind) stay as given.

>>> from exactdp import DiscreteGaussian
>>> from exactdp.calibration.mixed import calibrate_kind
>>> from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture
>>> year = Mixture(((DiscreteLaplace(50), 365), (DiscreteGaussian(25), 4)))
>>> res = calibrate_kind(year, "1e-9", 4, kind="discrete_laplace", width="1/1000")
>>> c = res.value                                  # certified: b = 50·c meets (4, 1e-9)
>>> bool(c < 1) and res.delta_at_scale <= 1e-9
True
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.calibration.calibrate import DEFAULT_WIDTH, CalibrationResult, Family, calibrate_design, simplest_between
from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, to_fraction

__all__ = ["KINDS", "scaled", "kind_family", "calibrate_kind"]

#: the kinds whose noise is calibrated, and what c multiplies
KINDS = {"discrete_laplace": "scale", "discrete_gaussian": "sigma2", "gaussian": "sigma2"}


def _check(design, kind: str) -> Mixture:
    if isinstance(design, Composition):
        design = Mixture(design.groups)
    if not isinstance(design, Mixture):
        raise InputError("design", design, "expected an exactdp Mixture (or Composition)")
    if kind not in KINDS:
        raise InputError("kind", kind, f"calibrates one of {', '.join(KINDS)}")
    if not any(_is(m, kind) for m, _ in design.groups):
        raise InputError("kind", kind, "the design has no mechanism of this kind to calibrate")
    return design


def _is(mech, kind: str) -> bool:
    return isinstance(mech, {"discrete_laplace": DiscreteLaplace, "discrete_gaussian": DiscreteGaussian,
                             "gaussian": Gaussian}[kind])


def scaled(design, kind: str, c) -> Mixture:
    """The design with every ``kind`` group's noise multiplied by ``c`` (scale ``b → c·b``,
    variance ``σ² → c·σ²``); the other groups unchanged."""
    design = _check(design, kind)
    c = to_fraction(c, "c")
    if c <= 0:
        raise InputError("c", c, "must be > 0")
    groups = []
    for m, n in design.groups:
        if _is(m, kind):
            m = DiscreteLaplace(m.scale * c, m.shift) if kind == "discrete_laplace" else type(m)(m.sigma2 * c, m.shift)
        groups.append((m, n))
    return Mixture(tuple(groups))


def _rho(mech) -> Fraction:
    """A zCDP-type size of one mechanism, only for the search's starting guess: ρ of a
    discrete Gaussian, ε²/2 of a pure or (ε, δ) part."""
    if isinstance(mech, (DiscreteGaussian, Gaussian)):
        return Fraction(mech.shift) ** 2 / (2 * mech.sigma2)
    eps = mech.pure_epsilon if mech.pure_epsilon is not None else mech.epsilon
    return Fraction(eps) ** 2 / 2


def kind_family(design, kind: str = "discrete_laplace") -> Family:
    """The :class:`~exactdp.calibration.calibrate.Family` ``c ↦ scaled(design, kind, c)``.

    Trial scalings are snapped to simple rationals: for the discrete Laplace the simplest
    1/c (its losses are ``shift/(c·b)``, so the exact loss grid stays coarse), for the
    discrete Gaussian the simplest c."""
    design = _check(design, kind)
    fixed = sum((_rho(m) * n for m, n in design.groups if not _is(m, kind)), Fraction(0))
    moving = sum((_rho(m) * n for m, n in design.groups if _is(m, kind)), Fraction(0))
    if kind == "discrete_laplace":
        def snap(lo, hi):
            return 1 / simplest_between(1 / hi, 1 / lo)

        def rho(c):
            return fixed + moving / (c * c)
    else:
        snap = simplest_between

        def rho(c):
            return fixed + moving / c

    return Family(f"the {kind} {KINDS[kind]}s (× c)", lambda c: scaled(design, kind, c), snap, rho)


def calibrate_kind(design, delta, eps, *, kind: str = "discrete_laplace", width=DEFAULT_WIDTH,
                   rel_tol: float = 1e-10) -> CalibrationResult:
    """The smallest certified rescaling c of one kind's noise meeting the target (ε, δ).

    Parameters
    ----------
    design : Mixture or Composition
        The design; the groups of ``kind`` are rescaled, the others kept.
    delta : rational in (0, 1)
        Target δ.
    eps : rational
        Target ε (required: a mixed design has no single zCDP default).
    kind : {"discrete_laplace", "discrete_gaussian", "gaussian"}
        Whose noise is calibrated (a Gaussian's ρ becomes ρ/c, discrete or continuous: the
        largest ρ is ρ/c).
    width : rational
        Width of the certified bracket on c (default 1e-6).
    rel_tol : float
        Certified relative accuracy of each exact evaluation.

    Returns
    -------
    CalibrationResult
        ``value`` (= ``upper``): the certified scaling to deploy — :func:`scaled` of the
        design at it meets the target by a certified exact evaluation
        (``delta_at_scale`` ≤ δ); ``lower`` is certified to miss it.

    Notes
    -----
    Method: :func:`exactdp.calibration.calibrate.calibrate_design` with
    :func:`kind_family`; each evaluation is :class:`exactdp.ExactAccountant` on the mixed
    design (route ``"mixed"``).  Monotonicity of δ in c is not assumed: the deployed end
    is certified by its own evaluation.
    """
    if eps is None:
        raise InputError("eps", None, "a mixed design needs an explicit target ε")
    fam = kind_family(design, kind)
    return calibrate_design(None, delta, eps, width=width, rel_tol=rel_tol, family=fam, scope=fam.label)
