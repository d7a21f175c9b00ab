"""The mixed-kinds certificate's meet in the middle (:mod:`exactdp.certify.kinds_mitm`) against the
independent brute force of ``tests/mixed_brute.py`` (every mechanism from its output distributions,
70 digits): δ(ε), ε(δ), β(α) on designs small enough for both, with the full enumeration's budgets
lowered so that it refuses and the meet in the middle answers; exact ties (pair losses equal to ε);
the pairs' sides against direct rational comparisons; a value off by 1e-12 is caught."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from test_certify_kinds import _contains  # (the enclosure meets the reference, widened by its rounding)

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
from exactdp.certify.kinds import METHOD, MITM_METHOD, KindsCertifier
from exactdp.numerics.errors import UncertifiedError

F = Fraction

MIXES = {  # incommensurate grids: the full product is the product of the groups' atom counts
    "dlap+rr+dg": ((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1), (DiscreteGaussian(4), 1)),
    "dlap+rr4+approx": ((DiscreteLaplace("3", 2), 2), (RandomizedResponse("3/7", 4), 2), (ApproxDP("1/2", "1e-9"), 2)),
    "dg-shift2+dlap+rr": ((DiscreteGaussian("9/4", 2), 1), (DiscreteLaplace("7/10", 1), 2),
                          (RandomizedResponse("2/3"), 1), (ApproxDP("1", "1e-12"), 1)),
}


BUDGET = 60  # the full enumeration's budget, lowered below these designs (hundreds of joint atoms)


@pytest.fixture(autouse=True)
def _small_budget(monkeypatch):
    """Designs beyond :data:`BUDGET` joint atoms go to the meet in the middle (halves unrestricted)."""
    monkeypatch.setattr(kinds, "fits", lambda parts: kind_atoms.size_bound(parts) <= BUDGET)
    with mpmath.workdps(80):
        yield


@pytest.fixture(scope="module")
def joint():
    return {name: brute.joint(groups) for name, groups in MIXES.items()}


def test_the_old_path_refuses_these_designs(monkeypatch):
    monkeypatch.setattr(kinds, "USE_MITM", False)
    monkeypatch.setattr(kind_atoms, "MAX_GRID", BUDGET)
    monkeypatch.setattr(kind_atoms, "MAX_PRODUCTS", BUDGET)
    for groups in MIXES.values():
        with pytest.raises(UncertifiedError, match="without --certify"):
            KindsCertifier(Mixture(groups)).delta(1)


@pytest.mark.parametrize("name", sorted(MIXES))
def test_delta_epsilon_beta_against_brute_force(name, joint):
    cert = KindsCertifier(Mixture(MIXES[name]))
    ref = joint[name]
    for e in (F(0), F(1, 3), F(1), F(5), F(40)):
        enc = cert.delta(e)
        assert enc.method == MITM_METHOD and "x" in enc.params["halves"]
        assert _contains(enc, *brute.delta(ref, e)), (name, e, enc)
        assert enc.relative_width <= 1e-14 or enc.upper <= mpmath.mpf(10) ** -340
    for d in (F(2, 10**3), F(3, 10**9)):
        enc = cert.epsilon(d)
        assert _contains(enc, brute.epsilon(ref, d)), (name, d, enc)
        assert enc.relative_width <= 1e-14
    for a in (F(1, 10), F(1, 10**12), F(1, 2), 1 - F(1, 10**6)):
        enc = cert.tradeoff(a)
        b = brute.beta(ref, a)
        assert _contains(enc, b, absolute=mpmath.mpf(10) ** -64), (name, a, enc)
        assert enc.relative_width <= 1e-14 or (b < mpmath.mpf(10) ** -60 and enc.upper < mpmath.mpf(10) ** -60)


def test_exact_ties_at_the_threshold(monkeypatch):
    """Pair losses equal to ε on the rational grid: ε = 0 with symmetric atoms (RR beside an (ε, 0)
    block of the same ε: L ∈ {−1, 0, 0, 1}), and ε = 3/2 = 3 − 3/2 across incommensurate halves."""
    monkeypatch.setattr(kinds, "fits", lambda parts: False)
    for groups, eps in ((((RandomizedResponse("1/2"), 1), (ApproxDP("1/2", 0), 1)), (F(0), F(1), F(1, 2))),
                        (((DiscreteLaplace("1/3", 1), 1), (RandomizedResponse("3/2"), 1)), (F(3, 2), F(0), F(9, 2)))):
        ref = brute.joint(groups)
        cert = KindsCertifier(Mixture(groups))
        for e in eps:
            enc = cert.delta(e)
            assert enc.method == MITM_METHOD
            assert _contains(enc, *brute.delta(ref, e)) and enc.relative_width <= 1e-30, (groups, e, enc)
        d = brute.delta(ref, eps[0])[0]  # ε(δ(tie)) = the tie itself
        dt = F(mpmath.nstr(d * (1 + mpmath.mpf(10) ** -30), 40))
        enc = cert.epsilon(dt)
        assert _contains(enc, brute.epsilon(ref, dt))
        for a in (F(1, 10), F(1, 2), F(9, 10)):
            assert _contains(cert.tradeoff(a), brute.beta(ref, a), absolute=mpmath.mpf(10) ** -64)


def test_pair_sides_against_rational_comparisons():
    """``Pairs.index``: the first atom of B with ``a + b > t`` (or ``≥ t``), by direct Fraction sums."""
    with precision(128):
        parts = [kind_atoms.group_atoms(m, c, 40.0) for m, c in MIXES["dlap+rr4+approx"]]
        pairs = kinds_mitm.Pairs(kind_atoms.compose(parts[:1]), kind_atoms.compose(parts[1:]))
    A, B = pairs.A, pairs.B
    rng = random.Random(5)
    sums = sorted({A.value(i) + B.value(j) for i in range(len(A)) for j in range(len(B))})
    for t in [*rng.sample(sums, 12), F(0), F(-100), F(100), F(1, 7)]:
        for strict in (True, False):
            got = pairs.index(t, strict)
            for i in range(len(A)):
                want = sum(1 for j in range(len(B)) if (A.value(i) + B.value(j) <= t if strict
                                                       else A.value(i) + B.value(j) < t))
                assert got[i] == want, (t, strict, i)


@dataclass(frozen=True)
class _Point:
    value: object


def test_engine_values_pass_and_a_wrong_one_is_caught():
    mix = Mixture(MIXES["dlap+rr+dg"])
    acc = ExactAccountant(mix)
    pts = delta(acc, [F(1)]).points
    encs = certify_points(mix, "delta", [F(1)], pts)
    assert encs[0].method == MITM_METHOD
    for kind, fn, arg in (("epsilon", epsilon, F(1, 10**6)), ("tradeoff", tradeoff, F(1, 20))):
        assert certify_points(mix, kind, [arg], fn(mix, [arg]).points)[0].method == MITM_METHOD
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "delta", [F(1)], [_Point(pts[0].value * (1 - mpmath.mpf(10) ** -12))])
    eps = epsilon(mix, [F(1, 10**6)]).points[0]
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "epsilon", [F(1, 10**6)], [_Point(eps.value * (1 - mpmath.mpf(10) ** -12))])
    beta = tradeoff(mix, [F(1, 20)]).points[0]
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(mix, "tradeoff", [F(1, 20)], [_Point(beta.value * (1 + mpmath.mpf(10) ** -12))])


def test_continuous_gaussians_keep_the_full_enumeration(monkeypatch):
    """With continuous Gaussians the design is enumerated in full (``+gaussian-erfc``), or beyond the
    full enumeration summed over cells (tests/test_certify_gaussian_cells.py), or refused (cells off)."""
    cont = ((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 1), (Gaussian(4), 2))
    monkeypatch.setattr(kind_atoms, "MAX_GRID", 5)
    monkeypatch.setattr(kind_atoms, "MAX_PRODUCTS", 5)
    monkeypatch.setattr(kinds, "fits", lambda parts: False)
    assert KindsCertifier(Mixture(cont)).delta(1).method == "arb/kinds-gaussian-cells"
    monkeypatch.setattr(kinds, "CELLS", "never")
    with pytest.raises(UncertifiedError, match="without --certify"):
        KindsCertifier(Mixture(cont)).delta(1)
    monkeypatch.setattr(kind_atoms, "MAX_GRID", 4_000_000)
    monkeypatch.setattr(kind_atoms, "MAX_PRODUCTS", 3_000_000)
    assert KindsCertifier(Mixture(cont)).delta(1).method == METHOD + "+gaussian-erfc"


def test_cli_certify_json_names_the_path(capsys):
    from exactdp.cli import main

    assert main(["delta", "--dlaplace", "5/2x3", "--rr", "1/2", "--sigma2", "4", "--eps", "1", "--certify",
                 "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["points"][0]
    assert p["certificate_method"] == MITM_METHOD
    lo, hi = map(F, p["enclosure"])
    assert F(p["delta"]) >= hi >= lo > 0


def test_beyond_both_budgets_is_refused(monkeypatch):
    """Halves beyond their budget: the full enumeration is tried and refuses (exit 3, one remedy)."""
    monkeypatch.setattr(kinds_mitm, "MAX_HALF", 10)
    monkeypatch.setattr(kind_atoms, "MAX_GRID", BUDGET)
    monkeypatch.setattr(kind_atoms, "MAX_PRODUCTS", BUDGET)
    with pytest.raises(UncertifiedError, match="without --certify"):
        KindsCertifier(Mixture(MIXES["dlap+rr+dg"])).delta(1)


def test_a_randomized_response_without_an_exact_epsilon_is_refused():
    """A kind named like randomized response whose loss is not an exact rational (say ln R of a noise
    parameter) is refused in one line (exit 3), not enumerated."""

    class RandomizedResponse:
        kind = "randomized_response"
        epsilon = None
        k = 2

    with pytest.raises(UncertifiedError, match="randomized_response.*exact rational"):
        kind_atoms.group_atoms(RandomizedResponse(), 1, 40.0)
