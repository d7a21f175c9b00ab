"""``--certify`` on mixed designs with four or more incommensurate groups (issues 33, 35): the
mixed-kinds meet in the middle over pruned halves (:func:`exactdp.certify.kinds_mitm.pruned`).

References are independent: an exact enumeration written here (the discrete Gaussian's pmf on a
window by mpmath at 70 digits, its left-out mass bounded by the window's tail) convolved with the
other kinds by ``tests/mixed_brute.py``; a half's atoms against direct Fraction sums of the groups'
loss values and mpmath products of their masses; a perturbed engine value is caught; designs beyond
reach are refused in one line that names the reason and the remedy."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import mixed_brute as brute
import mpmath
import pytest
from test_certify_kinds import _contains

from exactdp import (
    ApproxDP,
    DiscreteGaussian,
    DiscreteLaplace,
    ExactAccountant,
    Gaussian,
    Mixture,
    RandomizedResponse,
    delta,
    epsilon,
    tradeoff,
)
from exactdp.certify import certify_points, kind_atoms, kinds, kinds_mitm
from exactdp.certify.balls import precision
from exactdp.certify.kinds import MITM_METHOD, KindsCertifier
from exactdp.kinds import Laplace, RandomizedResponseNoise
from exactdp.numerics.errors import UncertifiedError

F = Fraction
#: four discrete Gaussians of distinct decimal variances (grids 20, 50/3, 100/7, 100/9) beside an
#: (ε, δ) block: small enough for the brute force
SMALL = ((DiscreteGaussian("0.05"), 1), (DiscreteGaussian("0.06"), 1), (DiscreteGaussian("0.07"), 1),
         (DiscreteGaussian("0.09"), 1), (ApproxDP("1/4", "1e-9"), 1))
#: the window of the reference's discrete Gaussians: the mass beyond it is below e^{−NATS}
NATS = 80


def _dg_reference(sigma2) -> tuple:
    """``({loss: [P, Q]}, tail)`` of N_Z(0, σ²) against N_Z(1, σ²) on ``|x| ≤ k`` (mpmath, normalised
    by the theta series to 1e-100), ``tail`` ≥ the P- and Q-mass outside."""
    s2 = F(sigma2)
    with mpmath.workdps(brute.DPS):
        k = int(math.ceil(math.sqrt(2 * float(s2) * NATS))) + 1
        w = {x: mpmath.exp(-mpmath.mpf(x * x) / (2 * mpmath.mpf(s2.numerator) / s2.denominator))
             for x in range(-k - 60, k + 62)}
        z = mpmath.fsum(w.values())  # (terms beyond |x| = k + 60 are far below 1e-100)
        out = {}
        for x in range(-k, k + 2):
            out[F(1 - 2 * x) / (2 * s2)] = [w[x] / z, w[x - 1] / z]
        tail = 4 * mpmath.exp(-mpmath.mpf(k * k) / (2 * float(s2)) + 1) / z
        return out, tail


@pytest.fixture(scope="module")
def small_joint():
    acc = ({F(0): [mpmath.mpf(1), mpmath.mpf(1)]}, mpmath.mpf(0))
    for mech, count in SMALL:
        one = _dg_reference(mech.sigma2) if isinstance(mech, DiscreteGaussian) else brute.atoms_of(mech)
        for _ in range(count):
            acc = brute.convolve(acc, one)
    return acc


@pytest.fixture
def _meet(monkeypatch):
    """The small design goes to the meet in the middle (its full enumeration fits the real budgets)."""
    monkeypatch.setattr(kinds, "fits", lambda parts: False)
    with mpmath.workdps(80):
        yield


def test_four_decimal_gaussians_beside_other_kinds_against_brute_force(small_joint, _meet):
    cert = KindsCertifier(Mixture(SMALL))
    tail = small_joint[1]
    for e in (F(0), F(1, 2), F(2), F(6)):
        enc = cert.delta(e)
        assert enc.method == MITM_METHOD
        lo, hi = brute.delta(small_joint, e)
        assert _contains(enc, lo, hi, absolute=tail), (e, enc)
        assert enc.relative_width <= 1e-14
    for d in (F(1, 100), F(3, 10**7)):
        enc = cert.epsilon(d)
        assert _contains(enc, brute.epsilon(small_joint, d), absolute=mpmath.mpf(10) ** -30), (d, enc)
        assert enc.relative_width <= 1e-14
    for a in (F(1, 10), F(1, 2), F(99, 100)):
        enc = cert.tradeoff(a)
        assert _contains(enc, brute.beta(small_joint, a), absolute=10 * tail), (a, enc)
        assert enc.relative_width <= 1e-14


def test_a_pruned_half_against_direct_enumeration():
    """The atoms of one half (three incommensurate groups) against Fraction sums of the groups' own
    values and mpmath products of their masses; at a level τ > 0 what is dropped is inside ``lost``."""
    with precision(128), mpmath.workdps(50):
        parts = [kind_atoms.group_atoms(m, c, 30.0) for m, c in (*SMALL[:2], (RandomizedResponse("1/2"), 1))]
        ref: dict = {}
        for idx in product(*(range(len(p.coeffs)) for p in parts)):
            v = sum((p.c + p.s * i for p, i in zip(parts, idx)), F(0))
            m = mpmath.fprod(mpmath.mpf(p.coeffs[i].mid().str(40, radius=False)) for p, i in zip(parts, idx))
            ref[v] = ref.get(v, 0) + m
        full = kinds_mitm.pruned(parts, 0.0)
        assert [full.value(i) for i in range(len(full))] == sorted(ref)
        for i in range(len(full)):
            got = mpmath.mpf(full.P[i].mid().str(40, radius=False))
            assert abs(got - ref[full.value(i)]) <= mpmath.mpf(10) ** -30 * (ref[full.value(i)] + 1e-300)
        tau = 1e-6
        cut = kinds_mitm.pruned(parts, tau)
        kept = {cut.value(i) for i in range(len(cut))}
        assert len(cut) < len(full) and kept <= set(ref)
        dropped = sum(m for v, m in ref.items() if v not in kept)
        lost_parts = sum(float(p.lost.upper()) for p in parts)
        assert 0 < dropped <= mpmath.mpf(float(cut.lost.upper())) - lost_parts * (1 - 1e-12)


@dataclass(frozen=True)
class _Point:
    value: object


#: DLap ×4, RR ×4, (ε, δ) ×2 beside four decimal-variance discrete Gaussians: beyond the full
#: enumeration at the real budgets (refused before: its sparse merge weighs more than 3e6 products)
WIDE = ((DiscreteLaplace("5/2", 1), 4), (RandomizedResponse("1/2"), 4), (ApproxDP("1/4", "1e-9"), 2),
        (DiscreteGaussian("2.51"), 1), (DiscreteGaussian("3.07"), 1), (DiscreteGaussian("4.4"), 1),
        (DiscreteGaussian("3.93"), 1))


def test_real_budgets_engine_passes_and_a_wrong_value_is_caught():
    mix = Mixture(WIDE)
    cert = KindsCertifier(mix)
    assert cert.meets() and not kind_atoms.fits(
        [kind_atoms.group_atoms(m, c, kinds.LEVELS[0][1]) for m, c in WIDE])
    acc = ExactAccountant(mix)
    pts = delta(acc, [F(1)]).points
    enc = certify_points(mix, "delta", [F(1)], pts, certifier=cert)[0]
    assert enc.method == MITM_METHOD and enc.relative_width <= 1e-14
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "delta", [F(1)], [_Point(pts[0].value * (1 - mpmath.mpf(10) ** -12))], certifier=cert)
    eps = epsilon(acc, [F(1, 10**6)]).points
    assert certify_points(mix, "epsilon", [F(1, 10**6)], eps, certifier=cert)[0].method == MITM_METHOD
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "epsilon", [F(1, 10**6)], [_Point(eps[0].value * (1 - mpmath.mpf(10) ** -9))],
                       certifier=cert)
    beta = tradeoff(acc, [F(1, 10)]).points
    assert certify_points(mix, "tradeoff", [F(1, 10)], beta, certifier=cert)[0].method == MITM_METHOD
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "tradeoff", [F(1, 10)], [_Point(beta[0].value * (1 + mpmath.mpf(10) ** -9))],
                       certifier=cert)


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and "without --certify" in msg
    return msg


def test_beyond_reach_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(kinds_mitm, "MAX_HALF", 50)
    with pytest.raises(UncertifiedError) as exc:
        KindsCertifier(Mixture(WIDE)).delta(1)
    assert "beyond the meet in the middle" in _one_line(exc) and "atoms in one half" in _one_line(exc)


def test_continuous_gaussian_beside_a_met_discrete_part_is_refused_in_one_line(monkeypatch):
    """(With the cells off: they answer it, tests/test_certify_gaussian_cells.py.)"""
    monkeypatch.setattr(kind_atoms, "MAX_GRID", 5)
    monkeypatch.setattr(kind_atoms, "MAX_PRODUCTS", 5)
    monkeypatch.setattr(kinds, "CELLS", "never")
    with pytest.raises(UncertifiedError) as exc:
        KindsCertifier(Mixture(((Gaussian(4), 1), *SMALL[:3]))).delta(1)
    assert "continuous Gaussians beside a discrete part" in _one_line(exc)


def test_the_continuous_laplace_is_refused_in_one_line():
    with pytest.raises(UncertifiedError) as exc:
        KindsCertifier(Mixture(((Laplace(2), 2), (DiscreteLaplace("5/2", 1), 1)))).delta(1)
    assert re.search("continuous Laplace.*density.*a discrete Laplace", _one_line(exc))
    with pytest.raises(UncertifiedError) as exc:
        kind_atoms.group_atoms(RandomizedResponseNoise("1/2", 3), 1, 40.0)
    assert re.search("noise parameter.*loss ±log 4 is irrational", _one_line(exc))


#: randomized response by its noise parameter (loss ±log 4, irrational) beside rational kinds
NOISY = ((RandomizedResponseNoise("1/2", 3), 4), (DiscreteLaplace("5/2", 1), 2), (RandomizedResponse("1/3"), 1))


def _noisy_reference() -> list:
    """``[(loss, P-mass), ...]`` of NOISY from its output distributions (mpmath, 50 digits): randomized
    response's three outputs (true bucket ``1 − p + p/k``, each other ``p/k``), the discrete Laplace's
    pmf on ``|x| ≤ 400`` (mass beyond below 1e-69), randomized response's two outputs."""
    lr = mpmath.log(4)
    noise = [(lr, mpmath.mpf(2) / 3), (mpmath.mpf(0), mpmath.mpf(1) / 6), (-lr, mpmath.mpf(1) / 6)]
    r = mpmath.exp(-mpmath.mpf(2) / 5)
    c0 = (1 - r) / (1 + r)
    dlap = [((abs(x - 1) - abs(x)) * mpmath.mpf(2) / 5, c0 * r ** abs(x)) for x in range(-400, 401)]
    e3 = mpmath.exp(mpmath.mpf(1) / 3)
    rr = [(mpmath.mpf(1) / 3, e3 / (e3 + 1)), (-mpmath.mpf(1) / 3, 1 / (e3 + 1))]
    joint = [(mpmath.mpf(0), mpmath.mpf(1))]
    for one, count in ((noise, 4), (dlap, 2), (rr, 1)):
        for _ in range(count):
            acc: dict = {}
            for la, pa in joint:
                for lb, pb in one:
                    got = acc.setdefault(mpmath.nstr(la + lb, 40), [la + lb, mpmath.mpf(0)])
                    got[1] += pa * pb
            joint = [tuple(v) for v in acc.values()]
    return joint


def _np_beta(joint: list, alpha: F) -> mpmath.mpf:
    """The Neyman–Pearson β: accept the largest losses until their P-mass is 1 − α (the last one
    randomised); β their Q-mass ``P·e^{−loss}``."""
    left, beta = 1 - mpmath.mpf(alpha.numerator) / alpha.denominator, mpmath.mpf(0)
    for v, p in sorted(joint, key=lambda t: t[0], reverse=True):
        if left <= 0:
            break
        take = min(mpmath.mpf(1), left / p)
        beta += take * p * mpmath.exp(-v)
        left -= take * p
    return beta


def test_randomized_response_by_noise_parameter_against_its_outputs():
    with mpmath.workdps(50):
        joint = _noisy_reference()

        def ref_delta(e):
            return mpmath.fsum(p * (1 - mpmath.exp(e - v)) for v, p in joint if v > e)

        mix = Mixture(NOISY)
        cert = KindsCertifier(mix)
        for e in (F(0), F(1, 2), F(2), F(5)):
            enc = cert.delta(e)
            assert enc.method.endswith("+net-count") and enc.relative_width <= 1e-14
            assert _contains(enc, ref_delta(mpmath.mpf(e.numerator) / e.denominator), absolute=mpmath.mpf(10) ** -60)
        target = F(1, 10**4)
        enc = cert.epsilon(target)
        lo, hi = mpmath.mpf(enc.lower_exact.numerator) / enc.lower_exact.denominator, enc.upper
        assert enc.relative_width <= 1e-14
        assert ref_delta(lo * (1 - mpmath.mpf(10) ** -40)) > mpmath.mpf(1) / 10**4 >= ref_delta(hi)
        # the engine's points pass; a perturbed one is caught
        pts = delta(mix, [F(2)]).points
        certify_points(mix, "delta", [F(2)], pts, certifier=cert)
        with pytest.raises(UncertifiedError, match="disagree"):
            certify_points(mix, "delta", [F(2)], [_Point(pts[0].value * (1 - mpmath.mpf(10) ** -10))],
                           certifier=cert)
        eps = epsilon(mix, [target]).points
        certify_points(mix, "epsilon", [target], eps, certifier=cert)
        with pytest.raises(UncertifiedError, match="disagree"):
            certify_points(mix, "epsilon", [target], [_Point(eps[0].value * (1 - mpmath.mpf(10) ** -9))],
                           certifier=cert)
        for a in (F(1, 10), F(1, 2), F(1, 10**6), 1 - F(1, 10**9)):  # β by Neyman–Pearson on the joint outputs
            enc = cert.tradeoff(a)
            assert enc.relative_width <= 1e-9, (a, enc)
            assert _contains(enc, _np_beta(joint, a), absolute=mpmath.mpf(10) ** -60), a
        beta = tradeoff(mix, [F(1, 10)]).points  # the engine's point passes; a perturbed one is caught
        certify_points(mix, "tradeoff", [F(1, 10)], beta, certifier=cert)
        with pytest.raises(UncertifiedError, match="disagree"):
            certify_points(mix, "tradeoff", [F(1, 10)], [_Point(beta[0].value * (1 + mpmath.mpf(10) ** -8))],
                           certifier=cert)
    with pytest.raises(UncertifiedError) as exc:
        KindsCertifier(Mixture(((RandomizedResponseNoise("1/2", 3), 1), (RandomizedResponseNoise("1/3", 2), 1))))
    assert "different ratios R" in _one_line(exc)


def test_hockey_stick_at_a_ball_threshold_on_and_between_atoms():
    """``D(t) = Σ p_i (1 − e^{t − v_i})_+`` with t exactly at an atom, inside a wide ball around one,
    and between atoms, against mpmath at 50 digits."""
    from flint import arb

    from exactdp.certify.kind_atoms import Atoms
    from exactdp.certify.kinds_noise import hockey_stick_at

    with precision(128), mpmath.workdps(50):
        keys = list(range(-6, 7))
        masses = [F(k * k + 1, 1000) for k in keys]
        masses = [m / sum(masses) for m in masses]
        A = Atoms(F(1, 3), F(1, 2), keys, [arb(m.numerator) / m.denominator for m in masses], arb(0))
        vals = [mpmath.mpf(1) / 3 + mpmath.mpf(k) / 2 for k in keys]

        def ref(t):
            return mpmath.fsum(mpmath.mpf(m.numerator) / m.denominator * (1 - mpmath.exp(t - v))
                               for m, v in zip(masses, vals) if v > t)

        for t, rad in ((F(4, 3), 0), (F(4, 3), F(1, 10**6)), (F(1, 7), F(1, 10**30)), (F(-5, 2), 0)):
            tb = arb(t.numerator) / t.denominator + (arb(0, float(rad)) if rad else 0)
            got = hockey_stick_at(A, tb)
            lo, hi = (mpmath.mpf(x.str(45, radius=False)) for x in (got.lower(), got.upper()))
            want = ref(mpmath.mpf(t.numerator) / t.denominator)
            assert lo <= want * (1 + mpmath.mpf(10) ** -40) and want * (1 - mpmath.mpf(10) ** -40) <= hi, (t, got)
            assert hi - lo <= (4 * float(rad) + 1e-30) * (want + 1)
