"""The float64 tables of the finite-loss composition (:mod:`exactdp.engine.float_conv`) and the
mixed route's float rest bound (:func:`exactdp.accounting.mixed_balls.zcdp_rest`), against exact
rational / 80-digit references and against the independent brute force of ``tests/mixed_brute.py``
(many identical groups, windows of discrete Gaussians, tiny and huge scales, deep δ)."""

from __future__ import annotations

import random
from fractions import Fraction

import flint
import mixed_brute as brute
import mpmath
import numpy
import pytest

from exactdp import DiscreteGaussian, DiscreteLaplace, ExactAccountant, Mixture, RandomizedResponse
from exactdp.accounting import mixed_balls
from exactdp.engine import float_conv
from exactdp.engine.finite_loss import FiniteLoss, prec_ctx

REL = mpmath.mpf("1e-9")


@pytest.fixture(autouse=True)
def _digits():
    with mpmath.workdps(80):
        yield


def _exact_conv(a: list, b: list) -> list:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _check_model(vec: float_conv.FVec, exact: list) -> None:
    """``|x̂_i − y_i| ≤ R·y_i + A`` at every index (exact rationals)."""
    assert vec.length == len(exact)
    for i, y in enumerate(exact):
        k = i - vec.start
        xh = Fraction(float(vec.x[k])) if 0 <= k < len(vec.x) else Fraction(0)
        assert abs(xh - y) <= vec.R * y + vec.A, (i, float(xh), float(y))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_power_and_product_keep_their_error_model(seed):
    """Sub-probability vectors spanning 1 … 1e-200 (so that pruning at TAU happens in the powers)."""
    rng = random.Random(seed)
    vecs = []
    for n in (3, 17, 40):
        w = [Fraction(rng.randint(1, 10**6), 10**6) * Fraction(1, 10 ** rng.randint(0, 200)) for _ in range(n)]
        w[rng.randrange(n)] = Fraction(1)
        s = sum(w)
        vecs.append([x / s for x in w])
    with prec_ctx(200):
        fvs = [float_conv.from_balls([flint.arb(flint.fmpq(x.numerator, x.denominator)) for x in v]) for v in vecs]
    for fv, v in zip(fvs, vecs):
        assert fv is not None
        _check_model(fv, v)
    p3 = float_conv.power(fvs[1], 3)
    _check_model(p3, _exact_conv(_exact_conv(vecs[1], vecs[1]), vecs[1]))
    prod = float_conv.conv(fvs[0], float_conv.power(fvs[2], 2))
    _check_model(prod, _exact_conv(vecs[0], _exact_conv(vecs[2], vecs[2])))


def test_float_tables_enclose_the_ball_tables():
    """Every mass, prefix and suffix ball of the float path contains the 128-bit ball of the
    arb path (many identical groups and discrete-Gaussian windows: pruned tails)."""
    from exactdp.kinds.dgauss_window import GaussianWindow

    fin = FiniteLoss(((DiscreteLaplace(50, 1), 365), (GaussianWindow(DiscreteGaussian(25), 6), 6),
                      (RandomizedResponse("1/4", 3), 20)))
    ft, at = fin._build_float(128), fin._build(128)
    assert ft is not None and ft[0].owner is not None
    for j in range(3):
        for i in range(0, len(at[j]), 7):
            a, f = at[j][i], ft[j][i]
            assert f.lower() <= a.lower() and a.upper() <= f.upper(), (j, i, a, f)


MIXES = [
    Mixture(((DiscreteLaplace(50, 1), 60), (DiscreteGaussian(25), 2))),  # windows beside many identical groups
    Mixture(((RandomizedResponse("1/1000"), 300), (DiscreteLaplace("1/3", 2), 2))),  # tiny ε, huge count
    Mixture(((DiscreteLaplace(100, 1), 40), (RandomizedResponse(1, 1000), 30))),  # large scale, deep top atoms
    # daily counts beside decimal discrete Gaussians: sub-lattices of strides 37, 74 and 100 on the
    # grid 1/185 (the sparse rows of float_conv.conv; the ball path took 95 CPU-s at count 365)
    Mixture(((DiscreteLaplace(10, 1), 12), (DiscreteGaussian("5/2"), 1), (DiscreteGaussian("37/10"), 1))),
]


@pytest.mark.parametrize("mix", MIXES, ids=["windows", "tiny-eps", "huge-scale", "strides"])
def test_float_path_against_brute_force(mix):
    atoms = brute.joint(mix.groups)
    acc = ExactAccountant(mix)
    fin = acc.answerer.finite
    top = float(fin.value(fin.size - 1))
    far = top / 4 if mix.gaussians is not None else top * 0.9  # (a window's deficit, 1e-330, bounds deep δ)
    eps = ["0", "1/3", "2", str(Fraction(top / 8)), str(Fraction(far)), "-1/2"]
    for e, pt in zip(eps, acc.delta(eps)):
        lo, hi = brute.delta(atoms, Fraction(e))
        assert pt.value >= lo and pt.lower <= hi, (e, pt, lo, hi)
        if hi > mpmath.mpf("1e-4000"):
            assert pt.upper - pt.lower <= REL * hi, (e, pt.lower, pt.upper)
    assert fin.tables(128)[0].owner is not None  # (the float path answered)
    for d, pt in zip(["1e-3", "1e-12"], acc.epsilon(["1e-3", "1e-12"])):
        true = brute.epsilon(atoms, Fraction(d))
        slack = true * mpmath.mpf(10) ** -(brute.DPS - 10)
        assert pt.lower - slack <= true <= pt.upper + slack and pt.upper - pt.lower <= REL * pt.upper, (d, pt, true)
    for a, pt in zip(["1e-9", "1/10", "0.9"], acc.tradeoff(["1e-9", "1/10", "0.9"])):
        true = brute.beta(atoms, Fraction(a))
        slack = true * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -60
        assert pt.lower <= true + slack and true <= pt.upper + slack, (a, pt, true)


def test_deep_delta_falls_back_to_balls():
    """δ near 1e-300 is below the float tables' absolute error: the 256-bit ball tables answer,
    on the right side (the top atom of 120 1000-ary randomized responses has mass ≈ 1e-308)."""
    mix = Mixture(((RandomizedResponse(1, 1000), 120), (DiscreteLaplace("1/3", 2), 2)))
    atoms = brute.joint(mix.groups)
    acc = ExactAccountant(mix)
    e = Fraction(2 * 132 - 1, 2)
    pt = acc.delta([str(e)])[0]
    lo, hi = brute.delta(atoms, e)
    assert mpmath.mpf("1e-330") < lo < mpmath.mpf("1e-300")
    assert pt.value >= lo and pt.lower <= hi and pt.upper - pt.lower <= REL * hi
    assert 256 in acc.answerer.finite._cache


@pytest.mark.parametrize("seed", [5, 6])
def test_zcdp_rest_is_an_upper_bound(seed):
    """The float rest bound against the 80-digit sums of ``m·min(1, e^{−(t−ρ)²/(4ρ)})``."""
    rng = random.Random(seed)
    n = 300
    idx = numpy.array(sorted(rng.sample(range(5000), n)), dtype=numpy.int64)
    mass = numpy.array([rng.random() * 10.0 ** -rng.randint(0, 250) for _ in range(n)])
    d, step, rho = Fraction(rng.randint(-400, 4000), 37), Fraction(1, rng.choice([7, 40, 400])), Fraction(5, 8)
    order = numpy.array(rng.sample(range(n), n))
    rest = mixed_balls.zcdp_rest(d, step, idx, mass, rho, order)
    rm = mpmath.mpf(rho.numerator) / rho.denominator
    s = mpmath.mpf(0)
    for j in range(n - 1, -1, -1):
        k = int(order[j])
        t = mpmath.mpf(d.numerator) / d.denominator - int(idx[k]) * mpmath.mpf(step.numerator) / step.denominator
        cap = mpmath.mpf(1) if t <= rm else mpmath.exp(-((t - rm) ** 2) / (4 * rm))
        s += mpmath.mpf(float(mass[k])) * cap
        assert rest[j] >= s, (j, rest[j], s)
        assert rest[j] <= 1.1 * s + n * 2.0 ** -1000  # (the power-of-two bound loses at most 2^(1/16))
    assert rest[n] == 0


@pytest.mark.parametrize("seed", [4, 5])
def test_sparse_rows_keep_their_error_model(seed):
    """Vectors on sub-lattices of different strides (a discrete Laplace's two loss values, windows
    of discrete Gaussians beside a fine common grid): the convolution forms only the rows of
    nonzero weights; its values and error model against exact rational convolutions, and the
    budget's shape bound on the nonzeros holds."""
    rng = random.Random(seed)
    vecs = []
    for n, stride in ((4, 37), (9, 5), (6, 1)):
        w = [Fraction(0)] * ((n - 1) * stride + 1)
        for k in range(n):
            w[k * stride] = Fraction(rng.randint(1, 10**6), 10**6) * Fraction(1, 10 ** rng.randint(0, 120))
        s = sum(w)
        vecs.append(([x / s for x in w], n, stride))
    with prec_ctx(200):
        fvs = [float_conv.from_balls([flint.arb(flint.fmpq(x.numerator, x.denominator)) for x in v])
               for v, _, _ in vecs]
    (a, na, sa), (b, nb, sb), (c, nc, sc) = vecs
    ab = float_conv.conv(fvs[0], fvs[1])
    _check_model(ab, _exact_conv(a, b))
    abc = float_conv.conv(ab, float_conv.power(fvs[2], 3))
    exact = _exact_conv(_exact_conv(a, b), _exact_conv(_exact_conv(c, c), c))
    _check_model(abc, exact)
    _, shape = float_conv.power_ops(len(c), 3, nc, sc)
    full = float_conv.product_shape(float_conv.product_shape((len(a), na, sa), (len(b), nb, sb)), shape)
    assert full[0] == len(exact) and sum(1 for y in exact if y) <= full[1]
