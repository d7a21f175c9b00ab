"""The mixed route's edges: σ² or scales far below 1e-50 (refused, exit 3, never a traceback),
β at α = 1 (0) and α = 0 (1 − Q[P = 0]), δ's upper end at most 1, and OpenDP's ε search
probing δ far below the float range.  References are written here: the (ε, δ) blocks'
products enumerated atom by atom, the discrete Gaussian's TV distance as a 600-digit sum,
and δ(ε) of an integer Laplace + Gaussian pair enumerated over both supports."""

from fractions import Fraction

import mpmath
import pytest

from exactdp import ApproxDP, Composition, DiscreteGaussian, DiscreteLaplace, ExactAccountant, Gaussian, Mixture
from exactdp.cli import main
from exactdp.numerics.errors import UncertifiedError


def _run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


# ---------------------------------------------------------------- exit codes (sixth audit's exit-1 lines)
REFUSED = [
    (["epsilon", "--gaussian", "1e-400", "--delta", "1e-6"], "σ²"),
    (["epsilon", "--gaussian", "1e-310", "--delta", "1e-6"], "σ²"),
    (["epsilon", "--laplace", "1e-400", "--sigma2", "2", "--delta", "1e-6"], "--laplace"),
    (["epsilon", "--dlaplace", "1e-400", "--sigma2", "1", "--delta", "1e-6"], "--dlaplace"),
    (["tradeoff", "--gaussian", "1e-400", "--alpha", "1e-3"], "σ²"),
    (["tradeoff", "--gaussian", "1e-90", "--alpha", "1e-3"], "σ²"),
    (["tradeoff", "--dlaplace", "1e-400", "--sigma2", "2", "--alpha", "1e-3"], "--dlaplace"),
    (["delta", "--dlaplace", "1e-400", "--sigma2", "1", "--eps", "1"], "--dlaplace"),
]


@pytest.mark.parametrize("argv,field", REFUSED)
def test_far_below_float_range_is_refused_with_exit_3(argv, field, capsys):
    assert _run(argv) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "internal error" not in err and "Traceback" not in err
    assert field in err and "near-deterministic" in err


def test_delta_of_a_tiny_gaussian_is_answered_at_most_one():
    # N(0, 1e-400) against N(1, 1e-400) beside DG(2): δ(1) ≥ the tiny Gaussian's own δ(1) = Φ(μ/2 − 1/μ) −
    # e·Φ(−μ/2 − 1/μ), μ = 1e200, which is 1 − (far below 1e-100); the upper end was 1 + 1e-19
    got = ExactAccountant(Mixture.of([Gaussian("1e-400"), DiscreteGaussian("2")])).delta(["1"])[0]
    assert 1 - mpmath.mpf(10) ** -100 <= got.value <= 1 and float(got) == 1.0


# ---------------------------------------------------------------- β at α ∈ {0, 1}
def _block(eps, delta):
    """The canonical (ε, δ) pair (P, Q) on four atoms: P-only, two middle atoms, Q-only."""
    a = mpmath.e ** eps / (1 + mpmath.e ** eps)
    d = mpmath.mpf(delta)
    return [d, (1 - d) * a, (1 - d) * (1 - a), 0], [0, (1 - d) * (1 - a), (1 - d) * a, d]


def _q_where_p_is_zero(blocks):
    """Q[P = 0] of the product, atom by atom."""
    total = mpmath.mpf(0)
    joint = [(mpmath.mpf(1), mpmath.mpf(1))]
    for p, q in blocks:
        joint = [(jp * pp, jq * qq) for jp, jq in joint for pp, qq in zip(p, q)]
    for jp, jq in joint:
        if jp == 0:
            total += jq
    return total


@pytest.mark.parametrize("mechs,blocks", [
    ([DiscreteLaplace("1"), DiscreteGaussian("2")], []),
    ([ApproxDP("1", "1/10"), ApproxDP("1/2", "1/5"), DiscreteGaussian("2")], [("1", "0.1"), ("0.5", "0.2")]),
    ([ApproxDP("1", "1/10"), Gaussian("3"), DiscreteLaplace("1")], [("1", "0.1")]),
])
def test_beta_at_alpha_zero_and_one_exactly(mechs, blocks):
    with mpmath.workdps(50):
        ref0 = 1 - _q_where_p_is_zero([_block(mpmath.mpf(e), mpmath.mpf(d)) for e, d in blocks])
        got0, got1 = ExactAccountant(Mixture.of(mechs)).tradeoff(["0", "1"])
        assert got1.lower == 0 and got1.upper == 0  # β(1) = 0: was "exit 3, could not be bracketed"
        assert got0.lower <= ref0 <= got0.upper
        assert got0.upper - got0.lower <= mpmath.mpf(10) ** -40


# ---------------------------------------------------------------- δ ≤ 1
def test_delta_upper_end_is_clamped_to_one():
    with mpmath.workdps(600):  # TV of DG(1/1000) and its shift by 1: P[X = 0] = 1/Σ e^{−500 x²}
        tv = 1 / mpmath.nsum(lambda x: mpmath.e ** (-500 * x * x), [-mpmath.inf, mpmath.inf])
        lattice = ExactAccountant(Composition.of([DiscreteGaussian("1/1000")])).delta(["0"])[0]
        assert lattice.lower <= tv <= lattice.value <= 1 and float(lattice) <= 1.0
        mixed = ExactAccountant(Mixture.of([DiscreteLaplace("1/1000")] * 3 + [DiscreteGaussian("1/1000")]))
        got = mixed.delta(["0"])[0]  # (the true δ(0) is at least the Gaussian's TV, at most 1)
        assert tv - mpmath.mpf(10) ** -150 <= got.value <= 1 and float(got) <= 1.0
        assert got.lower <= 1


def test_python_api_refuses_rather_than_overflows():
    acc = ExactAccountant(Mixture.of([Gaussian("1e-400"), DiscreteGaussian("2")]))
    with pytest.raises(UncertifiedError, match="near-deterministic"):
        acc.epsilon(["1e-6"])
    with pytest.raises(UncertifiedError, match="near-deterministic"):
        acc.tradeoff(["1/1000"])
    assert acc.tradeoff(["1"])[0].upper == 0


# ---------------------------------------------------------------- OpenDP's ε search deep in the tail
def _delta_ref(eps, k=3, b=Fraction(5, 2), s2=Fraction(9, 4)):
    """δ(ε) of integer Laplace(b) + Gaussian(σ²) at shift k, both supports enumerated (30 digits)."""
    with mpmath.workdps(30):
        def pmf(w):
            z = mpmath.fsum(w(x) for x in range(-400, 401))
            return lambda x: w(x) / z
        lap = pmf(lambda x: mpmath.e ** (-abs(x) / mpmath.mpf(b)))
        gau = pmf(lambda x: mpmath.e ** (-x * x / (2 * mpmath.mpf(s2))))
        ee = mpmath.e ** mpmath.mpf(eps)
        ls = [(lap(x), lap(x - k)) for x in range(-200, 201)]
        gs = [(gau(x), gau(x - k)) for x in range(-40, 41)]
        return mpmath.fsum(max(0, pl * pg - ee * ql * qg) for pl, ql in ls for pg, qg in gs)


def test_opendp_epsilon_far_in_the_tail():
    dp = pytest.importorskip("opendp.prelude", reason="opendp is not installed")
    from exactdp.interop.opendp_measurements import make_exact_composition

    dp.enable_features("contrib", "honest-but-curious")
    try:  # (disabled again after: test_interop_opendp checks that the user must enable them)
        si = (dp.atom_domain(T=int), dp.absolute_distance(T=int))
        c = make_exact_composition([dp.m.make_laplace(*si, scale=2.5), dp.m.make_gaussian(*si, scale=1.5)]).map(3)
    finally:
        dp.disable_features("contrib", "honest-but-curious")
    assert 0 < c.delta(256.0) <= 5e-324  # (the mixed route's certified ball, below the float range)
    eps = c.epsilon(1e-20)  # (raised: OpenDP's search probes δ(256))
    assert _delta_ref(eps) <= 1e-20 < _delta_ref(eps * (1 - 1e-6))


def test_dp_accounting_tiny_gaussian_is_refused_not_overflowed():
    dp_accounting = pytest.importorskip("dp_accounting", reason="dp_accounting is not installed")
    from exactdp.interop.dp_accounting import ExactDiscreteGaussianAccountant

    acc = ExactDiscreteGaussianAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(1e-200), 2)  # (σ² = 1e-400: was OverflowError)
    with pytest.raises(UncertifiedError, match="near-deterministic"):
        acc.get_epsilon(1e-6)
    assert acc.get_delta(1.0) == 1.0  # (δ(1) ≥ 1 − 1e-100 as above; the float rounds up to 1)
