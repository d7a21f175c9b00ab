"""The mixed-kinds certificate (:mod:`exactdp.certify.kinds`) against the independent brute force
of ``tests/mixed_brute.py`` (every mechanism from its output distributions, 70 digits), and the
continuous Gaussian against closed forms written here in mpmath: δ(ε), ε(δ), β(α) enclosures
contain the reference; a wrong engine value is caught; ``--certify --json`` reports the method."""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp import (
    ApproxDP,
    DiscreteGaussian,
    DiscreteLaplace,
    ExactAccountant,
    Gaussian,
    InputError,
    Mixture,
    RandomizedResponse,
    delta,
    epsilon,
    tradeoff,
)
from exactdp.certify import certifier_for, certify_points, kind_atoms
from exactdp.certify.kinds import METHOD, KindsCertifier
from exactdp.numerics.errors import UncertifiedError

F = Fraction
SLACK = mpmath.mpf("1e-55")  # relative: the reference's own rounding at 70 digits

MIXES = {
    "dlap+rr+dg": ((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1), (DiscreteGaussian(4), 1)),
    "dlap+rr4+approx": ((DiscreteLaplace("3", 2), 2), (RandomizedResponse("1/2", 4), 2), (ApproxDP("1/2", "1e-9"), 2)),
    "dg-shift2+approx": ((DiscreteGaussian("9/4", 2), 2), (ApproxDP("1", "1/1000"), 1),
                         (DiscreteLaplace("7/10", 1), 1)),
    "tiny-scale": ((DiscreteLaplace("1/50", 1), 1), (RandomizedResponse("40"), 1)),
}


@pytest.fixture(autouse=True)
def _digits():
    with mpmath.workdps(80):
        yield


def _contains(enc, lo, hi=None, absolute=None):
    """Whether the enclosure meets the reference's ``[lo, hi]`` (widened by its rounding)."""
    hi = lo if hi is None else hi
    absolute = mpmath.mpf(10) ** -4000 if absolute is None else absolute
    return enc.lower <= hi * (1 + SLACK) + absolute and lo * (1 - SLACK) - absolute <= enc.upper


@pytest.fixture(scope="module")
def joint():
    return {name: brute.joint(groups) for name, groups in MIXES.items()}


@pytest.mark.parametrize("name", sorted(MIXES))
def test_delta_against_brute_force(name, joint):
    cert = KindsCertifier(Mixture(MIXES[name]))
    for e in (F(0), F(1, 3), F(1), F(5), F(10**6)):
        enc = cert.delta(e)
        lo, hi = brute.delta(joint[name], e)
        assert _contains(enc, lo, hi), (name, e, enc)
        assert enc.method == METHOD
        # (beyond the discrete Gaussians' windows, e^-760, the enclosure is [0, left-out mass])
        assert enc.relative_width <= 1e-14 or enc.upper <= mpmath.mpf(10) ** -340


def test_huge_epsilon_is_exact():
    """Beyond the largest finite loss δ is exactly the (ε, δ) blocks' floor 1 − Π(1 − δ)^n."""
    cert = KindsCertifier(Mixture(MIXES["dlap+rr4+approx"]))
    enc = cert.delta(10**6)
    floor = 1 - (1 - F(1, 10**9)) ** 2
    assert enc.lower_exact <= floor <= enc.upper_exact and enc.relative_width < 1e-30
    pure = KindsCertifier(Mixture(((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1))))
    assert pure.delta(2).upper_exact == 0


@pytest.mark.parametrize("name", sorted(MIXES))
def test_epsilon_against_brute_force(name, joint):
    cert = KindsCertifier(Mixture(MIXES[name]))
    for d in (F(1, 10**3), F(3, 10**9)):
        if name == "dg-shift2+approx" and d < F(1, 1000):
            continue  # below that design's floor
        if name == "dg-shift2+approx":
            d = F(2, 1000)
        enc = cert.epsilon(d)
        assert _contains(enc, brute.epsilon(joint[name], d)), (name, d, enc)
        assert enc.relative_width <= 1e-14 or enc.upper_exact == 0


def test_deep_delta_and_its_epsilon(joint):
    """δ near 1e-300 and ε(1e-300) of a design with a discrete Gaussian (its window reaches e^-760)."""
    name = "dlap+rr+dg"
    cert = KindsCertifier(Mixture(MIXES[name]))
    enc = cert.epsilon(F(1, 10**300))
    ref = brute.epsilon(joint[name], F(1, 10**300))
    assert _contains(enc, ref) and enc.relative_width <= 1e-14
    d = cert.delta(enc.upper_exact)
    assert d.upper <= mpmath.mpf(10) ** -300 and d.lower > mpmath.mpf(10) ** -301
    lo, hi = brute.delta(joint[name], enc.upper_exact)
    assert _contains(d, lo, hi)


@pytest.mark.parametrize("name", sorted(MIXES))
def test_tradeoff_against_brute_force(name, joint):
    cert = KindsCertifier(Mixture(MIXES[name]))
    for a in (F(0), F(1, 10), F(1, 10**12), 1 - F(1, 10**12), F(1)):
        enc = cert.tradeoff(a)
        ref = brute.beta(joint[name], a)
        if ref < mpmath.mpf(10) ** -60:  # (the reference's rounding noise at β = 0)
            assert enc.lower_exact == 0 and enc.upper <= mpmath.mpf(10) ** -60
            continue
        # (the reference's β = 1 − Q(rejected) − …: absolute rounding 1e-68 at 70 digits)
        assert _contains(enc, ref, absolute=mpmath.mpf(10) ** -64), (name, a, enc, ref)
        assert enc.relative_width <= 1e-14


def test_sparse_merge_agrees(monkeypatch, joint):
    """The merge for loss values with no short common grid, forced on a design that has one."""
    monkeypatch.setattr(kind_atoms, "MAX_GRID", 1)
    name = "dlap+rr4+approx"
    cert = KindsCertifier(Mixture(MIXES[name]))
    for e in (F(0), F(2, 3)):
        assert _contains(cert.delta(e), *brute.delta(joint[name], e))
    assert _contains(cert.epsilon(F(1, 10**3)), brute.epsilon(joint[name], F(1, 10**3)))
    assert _contains(cert.tradeoff(F(1, 10)), brute.beta(joint[name], F(1, 10)))


_KINDS = st.one_of(
    st.builds(DiscreteLaplace, st.sampled_from(["1/3", "5/2", "7", "1/40"]), st.integers(-3, 3)),
    st.builds(RandomizedResponse, st.sampled_from(["0", "1/2", "3", "37/10"]), st.integers(2, 5)),
    st.builds(ApproxDP, st.sampled_from(["0", "1/4", "2"]), st.sampled_from(["0", "1e-9", "1/50"])),
    st.builds(DiscreteGaussian, st.sampled_from(["1/2", "3"]), st.integers(-2, 2)),
)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_KINDS, st.integers(1, 2)), min_size=1, max_size=3),
       st.lists(st.fractions(0, 12, max_denominator=7), min_size=1, max_size=3),
       st.fractions(0, 1, max_denominator=1000))
def test_property_random_mixes(groups, epsilons, alpha):
    mix = Mixture(tuple(groups))
    atoms = brute.joint(mix.groups)
    cert = KindsCertifier(mix)
    for e in epsilons:
        assert _contains(cert.delta(e), *brute.delta(atoms, e)), (groups, e)
    assert _contains(cert.tradeoff(alpha), brute.beta(atoms, alpha), absolute=mpmath.mpf(10) ** -64), (groups, alpha)


# -- continuous Gaussians: closed forms (mpmath) conditioned on the brute-force atoms ----------------------
def _alpha_beta(atoms, mu, ell):
    """P(L < ℓ) and Q(L ≥ ℓ) with L = discrete + N(±μ, 2μ), from the atoms' own P and Q masses."""
    d, _ = atoms
    sd = mpmath.sqrt(2 * mu)
    a = mpmath.fsum(p * mpmath.ncdf((ell - k - mu) / sd) for k, (p, q) in d.items())
    b = mpmath.fsum(q * (1 - mpmath.ncdf((ell - k + mu) / sd)) for k, (p, q) in d.items())
    return a, b


def _delta_cont(atoms, mu, x):
    """δ(x) of the atoms beside N(μ, 2μ): ``Σ P_ℓ (Φ((μ−t)/√(2μ)) − e^t Φ((−μ−t)/√(2μ)))``, t = x − ℓ."""
    d, _ = atoms
    sd = mpmath.sqrt(2 * mu)
    return mpmath.fsum(p * (mpmath.ncdf((mu - (x - k)) / sd) - mpmath.exp(x - k) * mpmath.ncdf((-mu - (x - k)) / sd))
                       for k, (p, _) in d.items())


def _bisect(f, lo, hi):
    """The root of an increasing f on [lo, hi] (f(lo) < 0 < f(hi)) to 2^-200 of the interval."""
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


CONT = ((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1), (Gaussian(4), 2))


def test_continuous_gaussian_against_closed_forms():
    atoms = brute.joint(CONT[:2])
    mu = F(1, 4)
    cert = KindsCertifier(Mixture(CONT))
    assert cert.full_method == METHOD + "+gaussian-erfc"
    for e in (F(0), F(1), F(5), F(30)):
        assert _contains(cert.delta(e), *brute.delta_gaussian(atoms, e, mu)), e
    with mpmath.workdps(70):
        for d in (F(1, 10**3), F(1, 10**12)):
            enc = cert.epsilon(d)
            m = mpmath.mpf(mu.numerator) / mu.denominator
            dm = mpmath.mpf(d.numerator) / d.denominator
            ref = _bisect(lambda x, dm=dm, m=m: dm - _delta_cont(atoms, m, x), 0, 40)
            assert _contains(enc, ref) and enc.relative_width <= 1e-14, (d, enc, ref)
        m = mpmath.mpf(mu.numerator) / mu.denominator
        for a in (F(1, 10), F(1, 10**12), 1 - F(1, 10**12)):
            am = mpmath.mpf(a.numerator) / a.denominator
            ell = _bisect(lambda x, am=am: _alpha_beta(atoms, m, x)[0] - am, -60, 60)
            enc = cert.tradeoff(a)
            assert _contains(enc, _alpha_beta(atoms, m, ell)[1]) and enc.relative_width <= 1e-14, (a, enc)


# -- the certificate beside the engine -----------------------------------------------------------------------
@dataclass(frozen=True)
class _Point:
    value: object


def test_engine_values_pass_and_a_wrong_one_is_caught():
    mix = Mixture(MIXES["dlap+rr+dg"])
    assert isinstance(certifier_for(mix), KindsCertifier)
    acc = ExactAccountant(mix)
    pts = delta(acc, [F(1), F(1, 3)]).points
    encs = certify_points(mix, "delta", [F(1), F(1, 3)], pts)
    assert all(e.method == METHOD for e in encs)
    for kind, fn, arg in (("epsilon", epsilon, F(1, 10**6)), ("tradeoff", tradeoff, F(1, 20))):
        certify_points(mix, kind, [arg], fn(mix, [arg]).points)
    wrong = [_Point(pts[0].value * (1 - mpmath.mpf(10) ** -12))]  # below the true δ: the wrong side
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "delta", [F(1)], wrong)
    beta = tradeoff(mix, [F(1, 20)]).points[0]
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "tradeoff", [F(1, 20)], [_Point(beta.value * (1 + mpmath.mpf(10) ** -12))])


def test_refusals():
    cert = KindsCertifier(Mixture(((ApproxDP("1", "1/100"), 2), (DiscreteLaplace(2), 1))))
    with pytest.raises(InputError, match="floor"):
        cert.epsilon(F(1, 1000))
    big = KindsCertifier(Mixture(((DiscreteGaussian(10**13), 1), (DiscreteLaplace(2), 1))))
    with pytest.raises(UncertifiedError, match="without --certify"):
        big.delta(1)

    class Other:
        kind = "laplace"

    other = KindsCertifier(Mixture(MIXES["tiny-scale"]))
    other.discrete = ((Other(), 1),)
    with pytest.raises(UncertifiedError, match="'laplace'"):
        other.delta(1)


def test_cli_certify_json(capsys):
    from exactdp.cli import main

    for cmd, flag, value, key in (("delta", "--eps", "1", "delta"), ("epsilon", "--delta", "1e-6", "epsilon"),
                                  ("tradeoff", "--alpha", "0.1", "beta")):
        assert main([cmd, "--dlaplace", "5/2x3", "--rr", "1/2", "--sigma2", "4", flag, value, "--certify",
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        p = out["points"][0]
        assert p["certificate_method"] == METHOD and out["diagnostics"]["route"] == "mixed"
        lo, hi = map(F, p["enclosure"])
        assert lo <= hi <= lo * (1 + F(1, 10**15))
        assert (F(p[key]) <= lo) if cmd == "tradeoff" else (F(p[key]) >= hi)


def test_cli_certify_beyond_the_budget_exits_3(capsys):
    from exactdp.cli import main

    assert main(["delta", "--dlaplace", "2", "--sigma2", "1e13", "--eps", "1", "--certify"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loss atoms" in err and "without --certify" in err
