"""Continuous Laplaces beside discrete Gaussians too fine for exact windows, no continuous
Gaussian (:mod:`exactdp.accounting.laplace_atoms`; refused before), against a reference written
here, nothing of exactdp's engine: the discrete Gaussians' joint loss atoms enumerated from their
pmfs at 70 digits (``tests/mixed_brute.py``), each against the Laplaces' hockey-stick
``E_P[(1 − e^{t−L})₊]`` with L decomposed as in ``tests/test_laplace_beside.py`` (each Laplace an
atom at ±μ or its continuous piece; the c continuous pieces' tilted Irwin–Hall density integrated
by ``mpmath.quad`` from ``max(t, −cμ)`` on, its error estimate ×100 in the bracket).  Atoms of
P-mass below 1e-13 of the δ asked are not integrated: their mass is added to the upper end.
Off the tuned regime too: ε = 0, δ near 1e-100, ε(1e-100), β near 0 and 1, μ = 20 and 1/500,
and a design of too many atoms, still refused with the remedy.  Never a wrong side; brackets ≤
1e-9 relative."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from test_laplace_beside import laplace_split
from test_laplace_inversion import _f, _inside, atoms_delta

from exactdp import DiscreteGaussian, ExactAccountant, InputError, Mixture
from exactdp.kinds.laplace import Laplace

REL = mpmath.mpf("1e-9")
ROUTE = "dg-atoms-laplace-closed-form"
#: two discrete Gaussians on incommensurable grids: too fine for exact windows
FINE = ((DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1))


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def lap_kernel(mu_q: Fraction, count: int, t: Fraction, dps: int = 20) -> tuple:
    """``(lo, hi)`` of ``E_P[(1 − e^{t − L})₊]`` for ``count`` Laplaces of ``μ`` (no Gaussian)."""
    with mpmath.workdps(dps):
        mu = _m(mu_q)
        total, err = mpmath.mpf(0), mpmath.mpf(0)
        for mass, tt, c, dens in laplace_split(mu_q, count, t):
            if c == 0:
                total += mass * max(-mpmath.expm1(tt), 0)
                continue
            lo_u = max(tt, -c * mu)
            if lo_u >= c * mu:
                continue

            def f(u, tt=tt, dens=dens):
                return dens(u) * -mpmath.expm1(tt - u)

            knots = [-c * mu + 2 * mu * k for k in range(c + 1)]
            pts = [lo_u] + [k for k in knots if lo_u < k < c * mu] + [c * mu]
            val, e = mpmath.quad(f, pts, error=True)
            total += mass * val
            err += mass * abs(e)
        slack = 100 * err + abs(total) * mpmath.mpf(10) ** (10 - dps)
        return total - slack, total + slack


def ref_delta(atoms: tuple, mu, count: int, eps, scale) -> tuple:
    """:func:`test_laplace_inversion.atoms_delta` against the Laplaces' kernel alone."""
    return atoms_delta(atoms, lambda t: lap_kernel(mu, count, t), eps, scale)


DESIGNS = {
    "one": (Laplace(1), 1),
    "two": (Laplace(1), 2),
    "three": (Laplace("1/2"), 3),
    "huge-mu": (Laplace("1/20"), 1),
    "tiny-mu": (Laplace(500), 2),
}
QUERIES = {
    "one": (["1/2"], []),
    "two": (["0", "4"], ["1e-6"]),
    "three": (["5/2"], []),
    "huge-mu": (["0", "19", "23"], []),
    "tiny-mu": (["0", "3"], ["1e-100"]),
}
_ATOMS: dict = {}


def _design(name):
    lap, count = DESIGNS[name]
    acc = ExactAccountant(Mixture(((lap, count),) + FINE))
    if "fine" not in _ATOMS:
        _ATOMS["fine"] = brute.joint(FINE)
    return acc, _ATOMS["fine"], lap.epsilon, count


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_and_epsilon(name):
    acc, atoms, mu, count = _design(name)
    assert ROUTE in acc.diagnostics().method, acc.diagnostics().method
    es, targets = QUERIES[name]
    for e, pt in zip(es, acc.delta(es)):
        _inside(pt, *ref_delta(atoms, mu, count, e, pt.upper), (name, e))
    for target in targets:
        pt = acc.epsilon([target])[0]
        tq = _m(Fraction(target))
        assert pt.upper - pt.lower <= REL * max(pt.upper, 1), (name, target, pt)
        # δ(ε_lower) ≥ target ≥ δ(ε_upper): the true ε inside
        assert ref_delta(atoms, mu, count, _f(pt.lower), tq)[1] >= tq, (name, target, "lower")
        assert ref_delta(atoms, mu, count, _f(pt.upper), tq)[0] <= tq, (name, target, "upper")


def test_deep_delta():
    """δ near 1e-100 (μ = 2: the Laplaces' spread is wider than the atoms' gaps out there)."""
    acc, atoms, mu, count = _design("two")
    pt = acc.delta(["73"])[0]
    lo, hi = ref_delta(atoms, mu, count, "73", pt.upper)
    assert 1e-115 < hi < 1e-95, hi
    _inside(pt, lo, hi, "deep")


def _np_point(atoms: tuple, mu_q: Fraction, t) -> tuple:
    """``(α, β)`` of the Neyman–Pearson test rejecting P when the loss ``log(dP/dQ)`` is below t
    (not an atom: ``α = P(ℓ < t)``, ``β = Q(ℓ > t)``):
    one Laplace (atoms μ, −μ of P-mass ½, e^{−μ}/2, density e^{(l−μ)/2}/4 between) beside the
    discrete Gaussians' atoms; ``P(L > s) = ½ + (1 − e^{(s−μ)/2})/2`` and ``Q(L > s) = E_P e^{−L}1{L > s}
    = e^{−μ}/2 + e^{−μ/2}(e^{−s/2} − e^{−μ/2})/2`` on ``[−μ, μ)``."""
    d, _ = atoms
    mu = _m(mu_q)
    a = q = mpmath.mpf(0)
    for k, (pk, qk) in d.items():
        s = t - _m(k)
        if s < -mu:
            pl, ql = mpmath.mpf(1), mpmath.mpf(1)
        elif s >= mu:
            pl, ql = mpmath.mpf(0), mpmath.mpf(0)
        else:
            pl = mpmath.mpf(1) / 2 - mpmath.expm1((s - mu) / 2) / 2
            ql = mpmath.exp(-mu) / 2 + mpmath.exp(-mu / 2) * (mpmath.exp(-s / 2) - mpmath.exp(-mu / 2)) / 2
        a += pk * pl
        q += qk * ql
    return 1 - a, q


@pytest.mark.parametrize("alpha", ["1e-9", "1/2", "1 - 1e-9"])
def test_tradeoff_against_the_neyman_pearson_points(alpha):
    """β(α) at α near 0, 1/2 and near 1 against an exact point of the curve: the test rejecting
    below a threshold t (bisected so that α_t is near the α asked; the engine is asked at α_t's
    70-digit value, within 1e-60 of it, and the slope e^t of the curve there widens the
    reference by that much)."""
    acc, atoms, mu, count = _design("huge-mu" if alpha == "1/2" else "one")
    with mpmath.workdps(70):
        goal = 1 - mpmath.mpf("1e-9") if alpha == "1 - 1e-9" else mpmath.mpf(Fraction(alpha).numerator) / \
            Fraction(alpha).denominator
        lo_t, hi_t = mpmath.mpf(-80), mpmath.mpf(80)
        with mpmath.workdps(20):  # (α_t increases in t; t need only be near)
            for _ in range(40):
                mid = (lo_t + hi_t) / 2
                if _np_point(atoms, mu, mid)[0] < goal:
                    lo_t = mid
                else:
                    hi_t = mid
        t = (lo_t + hi_t) / 2 + mpmath.mpf(2) ** -80  # (off the atoms' rational grid)
        a_t, b_t = _np_point(atoms, mu, t)
        slack = mpmath.mpf(10) ** -60 * mpmath.exp(t + 1) + 4 * brute.TAIL
        pt = acc.tradeoff([_f(a_t)])[0]
        assert pt.upper >= b_t - slack and pt.lower <= b_t + slack, (alpha, pt.lower, pt.upper, b_t)
        assert pt.upper - pt.lower <= REL * pt.upper, (alpha, pt.lower, pt.upper)


#: three groups of σ² ≈ 150 on incommensurable grids: ~10⁷ joint atoms at 40 nats
TOO_MANY = ((DiscreteGaussian("150"), 1), (DiscreteGaussian("151.7"), 1), (DiscreteGaussian("149.3"), 1))


def test_too_many_atoms_refused_with_the_remedy():
    """Beyond the sum's budget at its shallowest depth (40 nats) the refusal names kind = "approx_dp"."""
    with pytest.raises(InputError, match="approx_dp"):
        ExactAccountant(Mixture(((Laplace(1), 1),) + TOO_MANY))


def _dg_joint(sigma2s, tail, dps: int = 30) -> tuple:
    """``({loss: P-mass}, left-out mass)`` of discrete Gaussians N_Z(0, σ²) against shift 1, from
    their pmfs on windows ``|x| ≤ k`` with ``e^{−k²/(2σ²)} ≤ tail/10`` (normalised on the window),
    joint pairs of mass below ``tail²`` left out (their mass counted)."""
    with mpmath.workdps(dps):
        parts = []
        for s2 in map(Fraction, sigma2s):
            k = int(mpmath.ceil(mpmath.sqrt(2 * _m(s2) * -mpmath.log(tail / 10)))) + 2
            w = {x: mpmath.exp(-_m(Fraction(x * x) / (2 * s2))) for x in range(-k, k + 1)}
            z = mpmath.fsum(w.values())
            parts.append({Fraction(1 - 2 * x) / (2 * s2): w[x] / z for x in w})
        out, left = dict(parts[0]), mpmath.mpf(2) * tail  # (each window's outside: ≤ tail/10 … a bound)
        for part in parts[1:]:
            new: dict = {}
            for ka, pa in out.items():
                for kb, pb in part.items():
                    p = pa * pb
                    if p < tail * tail:
                        left += p
                        continue
                    new[ka + kb] = new.get(ka + kb, 0) + p
            out = new
        return out, left


def test_more_atoms_than_the_budget_at_200_nats():
    """Two discrete Gaussians of σ² ≈ 150 (245,021 joint atoms at 200 nats: refused before) beside a
    Laplace of μ = 1: enumerated from 40 or 80 nats, against the pmfs' atoms here (windows to 1e-20,
    left-out mass on the upper end) and the single Laplace's closed form (``tests/laplace_reference.py``,
    checked there against its quadrature: ``1 − e^{(x−μ)/2}`` on [0, μ]; with the symmetry
    ``1 − e^x + e^x D(−x)``, the same on [−μ, 0) and ``1 − e^x`` below −μ; checked here at a few
    points); ε = 0, 3/2 and ε(1e-6)."""
    from laplace_reference import single_closed

    dgs = ((DiscreteGaussian("150"), 1), (DiscreteGaussian("151.7"), 1))
    acc = ExactAccountant(Mixture(((Laplace(1), 1),) + dgs))
    assert ROUTE in acc.diagnostics().method
    atoms, left = _dg_joint(["150", "151.7"], mpmath.mpf("1e-20"), dps=20)

    def kern(x):  # (x an mpf)
        return mpmath.mpf(0) if x >= 1 else -mpmath.expm1((x - 1) / 2) if x >= -1 else -mpmath.expm1(x)

    with mpmath.workdps(30):
        for x in (Fraction(-3, 2), Fraction(-1, 3), Fraction(1, 2)):
            d = single_closed(1, 1, x) if x >= 0 else -mpmath.expm1(_m(x)) + mpmath.exp(_m(x)) * single_closed(1, 1, -x)
            assert abs(kern(_m(x)) - d) < mpmath.mpf("1e-25")

    with mpmath.workdps(20):  # (the kernel factors: p·kern(e − a) = p − e^{(e−1)/2}·p e^{−a/2} on [−1, 1], …)
        table = sorted((_m(a), p, p * mpmath.exp(-_m(a) / 2), p * mpmath.exp(-_m(a))) for a, p in atoms.items())
    with mpmath.workdps(30):
        assert abs(kern(mpmath.mpf("0.3")) - (1 - mpmath.exp((mpmath.mpf("0.3") - 1) / 2))) < mpmath.mpf("1e-28")

    def ref(e) -> tuple:
        with mpmath.workdps(20):
            e = _m(e)
            mid = [r for r in table if e - 1 < r[0] <= e + 1]  # (x = e − a in [−1, 1))
            low = [r for r in table if r[0] > e + 1]  # (x < −1)
            tot = (mpmath.fsum(r[1] for r in mid) - mpmath.exp((e - 1) / 2) * mpmath.fsum(r[2] for r in mid)
                   + mpmath.fsum(r[1] for r in low) - mpmath.exp(e) * mpmath.fsum(r[3] for r in low))
            return tot * (1 - mpmath.mpf(10) ** -12) - mpmath.mpf(10) ** -18, tot * (1 + mpmath.mpf(10) ** -12) + left

    for e, pt in zip(["0", "3/2"], acc.delta(["0", "3/2"])):
        lo, hi = ref(e)
        assert pt.upper >= lo and pt.lower <= hi, (e, pt.lower, pt.upper, lo, hi)
        assert pt.upper - pt.lower <= REL * hi, (e, pt.lower, pt.upper)
    pt = acc.epsilon(["1e-6"])[0]
    assert pt.upper - pt.lower <= REL * pt.upper
    assert ref(_f(pt.lower))[1] >= mpmath.mpf("1e-6") >= ref(_f(pt.upper))[0]
