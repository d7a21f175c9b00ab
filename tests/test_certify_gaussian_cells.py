"""β(α), δ(ε) beside continuous Gaussians summed over cells (exactdp.certify.kinds_cells), against a
reference written here: the discrete part's joint loss atoms enumerated exactly (discrete Laplace's
three closed-form segments, a discrete Gaussian's pmf summed in mpmath with |x| ≤ R, the rest below
1e-60; randomized response), the continuous Gaussians' loss N(±μ, 2μ) by mpmath's Φ at 50 digits,
and Neyman–Pearson on the joint: ℓ solving Σ p_j Φ((ℓ − v_j − μ)/s) = α by bisection,
β = Σ q_j Φ̄((ℓ − v_j + μ)/s); δ(ε) = Σ p_j Φ̄((ε − v_j − μ)/s) − e^ε Σ q_j Φ̄((ε − v_j + μ)/s).
Off the tuned regime: α near 0 and 1, a tiny and a huge continuous σ²."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import mpmath
import pytest

from exactdp.certify import certify_points, kinds
from exactdp.certify.kinds import KindsCertifier
from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture, RandomizedResponse
from exactdp.mechanisms import DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError

DPS = 50


def _mp(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _outputs(mech) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """(P-mass, Q-mass) of each output of one mechanism (P centred at 0, Q at the shift)."""
    if isinstance(mech, DiscreteGaussian):
        s2, m = _mp(mech.sigma2), mech.shift
        r = int(mpmath.sqrt(s2) * 25) + abs(m) + 5
        w = {x: mpmath.exp(-mpmath.mpf(x * x) / (2 * s2)) for x in range(-r - abs(m), r + abs(m) + 1)}
        z = mpmath.fsum(w[x] for x in range(-r, r + 1))
        return [(w[x] / z, w[x - m] / z) for x in range(-r, r + 1)]
    if isinstance(mech, DiscreteLaplace):
        b, m = _mp(mech.scale), mech.shift
        r = int(b * 160) + abs(m) + 5
        w = {x: mpmath.exp(-abs(x) / b) for x in range(-r - abs(m), r + abs(m) + 1)}
        z = mpmath.fsum(w[x] for x in range(-r, r + 1))
        return [(w[x] / z, w[x - m] / z) for x in range(-r, r + 1)]
    if isinstance(mech, RandomizedResponse):
        e = mpmath.exp(_mp(mech.epsilon))
        return [(e / (e + 1), 1 / (e + 1)), (1 / (e + 1), e / (e + 1))]
    raise AssertionError(mech)


def _joint(groups) -> list[tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]]:
    """(loss, P-mass, Q-mass) of the discrete part's joint outputs, merged by loss (30 digits)."""
    atoms = {mpmath.mpf(0): (mpmath.mpf(1), mpmath.mpf(1))}
    for mech, count in groups:
        one = [(p, q) for p, q in _outputs(mech) if p > 0 and q > 0]
        for _ in range(count):
            new = defaultdict(lambda: [mpmath.mpf(0), mpmath.mpf(0), None])
            for v, (p, q) in atoms.items():
                for p1, q1 in one:
                    loss = v + mpmath.log(p1 / q1)
                    key = mpmath.nstr(loss, 30)
                    cell = new[key]
                    cell[0] += p * p1
                    cell[1] += q * q1
                    cell[2] = loss
            atoms = {c[2]: (c[0], c[1]) for c in new.values()}
    return [(v, p, q) for v, (p, q) in sorted(atoms.items())]


def _phi(x):
    return mpmath.ncdf(x)


def _reference(groups, mu: Fraction, kind: str, arg: Fraction) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        atoms = _joint(groups)
        m = _mp(mu)
        s = mpmath.sqrt(2 * m)
        if kind == "delta":
            e = _mp(arg)
            return (mpmath.fsum(p * _phi((v + m - e) / s) for v, p, _ in atoms)
                    - mpmath.exp(e) * mpmath.fsum(q * _phi((v - m - e) / s) for v, _, q in atoms))
        a = _mp(arg)

        def alpha(ell):
            return mpmath.fsum(p * _phi((ell - v - m) / s) for v, p, _ in atoms)

        lo, hi = atoms[0][0] - m - 60 * s - 10, atoms[-1][0] + m + 60 * s + 10
        with mpmath.workdps(20):
            for _ in range(60):  # bisection to a start, then Newton (α' = Σ p φ(·)/s > 0)
                mid = (lo + hi) / 2
                if alpha(mid) < a:
                    lo = mid
                else:
                    hi = mid
        ell = (lo + hi) / 2
        for _ in range(12):
            step = (alpha(ell) - a) / mpmath.fsum(p * mpmath.npdf((ell - v - m) / s) / s for v, p, _ in atoms)
            ell -= step
            if abs(step) < mpmath.mpf(10) ** -45 * (1 + abs(ell)):
                break
        else:
            raise AssertionError("Newton did not converge")
        return mpmath.fsum(q * _phi((v - m - ell) / s) for v, _, q in atoms)


DESIGN = ((DiscreteLaplace(Fraction(5, 2), 1), 2), (RandomizedResponse(Fraction(1, 2)), 1),
          (DiscreteGaussian(Fraction(251, 100), 2), 1))
CASES = [  # continuous σ², kind, argument
    (Fraction(4), "tradeoff", Fraction(1, 10)),
    (Fraction(4), "tradeoff", Fraction(1, 10**12)),
    (Fraction(4), "tradeoff", 1 - Fraction(1, 10**9)),
    (Fraction(4), "delta", Fraction(1)),
    (Fraction(1, 100), "tradeoff", Fraction(1, 2)),  # a tiny σ²: the Gaussian dominates (μ = 50)
    (Fraction(100), "tradeoff", Fraction(1, 10)),  # a huge σ² (beside 2.51): a narrow Gaussian among the atoms
]


@pytest.mark.parametrize("sigma2,kind,arg", CASES)
def test_cells_against_neyman_pearson_on_the_joint(monkeypatch, sigma2, kind, arg):
    monkeypatch.setattr(kinds, "CELLS", "always")
    gauss = Gaussian(sigma2, 1)
    design = Mixture(DESIGN + ((gauss, 1),))
    cert = KindsCertifier(design)
    enc = cert.delta(arg) if kind == "delta" else cert.tradeoff(arg)
    assert enc.method == "arb/kinds-gaussian-cells"
    ref = _reference(DESIGN, Fraction(gauss.rho), kind, arg)
    with mpmath.workdps(DPS):
        lo, hi = _mp(enc.lower_exact), _mp(enc.upper_exact)
        assert lo <= ref <= hi, (lo, ref, hi)
        assert hi - lo <= 1e-9 * ref, (lo, hi)


def test_cells_catch_a_perturbed_engine_point_and_agree_with_the_full_enumeration(monkeypatch):
    """The engine's β passes the cells' check; the same β raised by 1e-8 is caught; the cells'
    enclosure overlaps the independent full enumeration's (+gaussian-erfc)."""
    from exactdp import ExactAccountant

    design = Mixture(DESIGN + ((Gaussian(Fraction(4), 1), 2),))
    alpha = Fraction(1, 10)
    point = ExactAccountant(design).tradeoff([alpha])[0]
    monkeypatch.setattr(kinds, "CELLS", "always")
    cells = KindsCertifier(design)
    (enc,) = certify_points(design, "tradeoff", [alpha], [point], certifier=cells)
    assert enc.method == "arb/kinds-gaussian-cells"

    class Raised:
        value = point.value * (1 + mpmath.mpf(10) ** -8)
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(design, "tradeoff", [alpha], [Raised()], certifier=cells)
    monkeypatch.setattr(kinds, "CELLS", "never")
    full = KindsCertifier(design).tradeoff(alpha)
    assert full.method.endswith("+gaussian-erfc")
    assert max(full.lower_exact, enc.lower_exact) <= min(full.upper_exact, enc.upper_exact)


@pytest.mark.slow
def test_cells_take_what_the_full_enumeration_refuses():
    """A continuous Gaussian beside four decimal-variance discrete Gaussians (their loss grids share
    no short grid: over 3e6 joint atoms, beyond a reference here) was refused by --certify; the cells
    certify β, and the engine's own bracket (the Gaussian-beside oracle) overlaps the enclosure and
    passes its side check."""
    from exactdp import ExactAccountant

    groups = tuple((DiscreteGaussian(Fraction(v), 1), 1) for v in ("2.51", "3.07", "4.4", "3.93"))
    design = Mixture(groups + ((Gaussian(Fraction(4), 1), 1),))
    alpha = Fraction(1, 10)
    point = ExactAccountant(design).tradeoff([alpha])[0]
    (enc,) = certify_points(design, "tradeoff", [alpha], [point])
    assert enc.method == "arb/kinds-gaussian-cells" and enc.relative_width <= 1e-14
    with mpmath.workdps(DPS):
        assert _mp(enc.lower_exact) <= point.estimate + point.error_bound
        assert point.estimate - point.error_bound <= _mp(enc.upper_exact)


def test_cells_refuse_a_gaussian_too_narrow_for_the_discrete_spread(monkeypatch):
    monkeypatch.setattr(kinds, "CELLS", "always")
    design = Mixture(((DiscreteLaplace(Fraction(5, 2), 1), 40), (Gaussian(Fraction(10**12), 1), 1)))
    with pytest.raises(UncertifiedError, match="^--certify: continuous Gaussians .* cells of width"):
        KindsCertifier(design).tradeoff(Fraction(1, 10))
