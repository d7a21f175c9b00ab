"""β = f(α) beside randomized response by noise parameter, by the exact Neyman–Pearson split on
the joint atoms (``exactdp/accounting/rr_neyman_pearson.py``), against enumerations written here.

Smaller designs of the second audit's shapes: design 34 (``DG(1.2377, 7)×35, RR(1)×8,
RRN(1/2)×4``: β at the randomized responses' irrational kinks, where the dual's stencils stopped
at 7e-8 relative) and design 27 (``DG(0.0014, 3)×31, RRN(1/2, k 5)×14``: β ≈ 1e-43277, far below
1e-4000 and below the windows' deficit e^{−760}; refused "[0, 1]" by the dual).  The references
are the joint atoms ``(loss, P, Q)`` at 70 digits, sorted by loss, and the Neyman–Pearson test
rejecting them in increasing order (``test_rr_tradeoff.ref_beta``); the deep design's discrete
Gaussians are enumerated here on ``x ∈ [−60, 63]`` (the rest of the mass below e^{−10⁶}),
normalised by the sum over that range (the rest is below e^{−10⁶} relative as well).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from test_rr_tradeoff import DPS, _mix, ref_atoms, ref_beta

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.accounting.mixed_windows import rr_twin, windowed_twin
from exactdp.accounting.rr_neyman_pearson import beta_rr_atoms
from exactdp.kinds import ApproxDP, DiscreteLaplace, Mixture, RandomizedResponse

REL = mpmath.mpf("1e-9")
ALPHAS = [Fraction(1, 10**12), Fraction(1, 1000), Fraction(1, 2), 1 - Fraction(1, 10**9)]


def _deep_dg(sigma2: str, shift: int, count: int) -> dict:
    """``{loss: [P, Q]}`` of ``count`` copies of N_Z(0, σ²) against N_Z(shift, σ²), x ∈ [−60, 60 + s]."""
    s2, s = Fraction(sigma2), shift
    with mpmath.workdps(DPS):
        def w(x: int) -> mpmath.mpf:
            f = Fraction(x * x) / (2 * s2)
            return mpmath.exp(-mpmath.mpf(f.numerator) / f.denominator)

        z = mpmath.fsum(w(x) for x in range(-60 - s, 61 + s))
        one = {Fraction(s * s - 2 * s * x) / (2 * s2): [w(x) / z, w(x - s) / z] for x in range(-60, 61 + s)}
        out = {Fraction(0): [mpmath.mpf(1), mpmath.mpf(1)]}
        for _ in range(count):
            new: dict = {}
            for ka, (pa, qa) in out.items():
                for kb, (pb, qb) in one.items():
                    got = new.setdefault(ka + kb, [mpmath.mpf(0), mpmath.mpf(0)])
                    got[0] += pa * pb
                    got[1] += qa * qb
            out = new
        return out


def _deep_atoms(rest: dict, rr: list) -> list:
    with mpmath.workdps(DPS):
        out = [(mpmath.mpf(v.numerator) / v.denominator + lr, pv * pa, qv * qa)
               for v, (pv, qv) in rest.items() for lr, pa, qa in ref_atoms(rr, ())]
        out.sort(key=lambda t: t[0])
        return out


def _check(got, ref: mpmath.mpf, err: mpmath.mpf):
    with mpmath.workdps(DPS):
        assert got.lower <= ref + err and ref - err <= got.upper, (got, ref)
        assert got.upper - got.lower <= REL * got.upper  # (relative, also below 1e-4000)
        assert got.value == got.lower  # the conservative side


def test_deep_beta_below_the_floor():
    """Design 27's shape: ``DG(0.0014, 3)×3, RRN(1/2, k 5)×3``, β ≈ 1e-4188 … 1e-4190."""
    rr = [(Fraction(1, 2), 5, 3)]
    mix = _mix(rr, ((DiscreteGaussian("0.0014", 3), 3),))
    rest = _deep_dg("0.0014", 3, 3)
    atoms = _deep_atoms(rest, rr)
    plus = _deep_atoms(rest, [(Fraction(1, 2), 5, 4)])  # (one event more: the bracket must exclude it)
    got = ExactAccountant(mix).tradeoff(ALPHAS)
    for a, g in zip(ALPHAS, got):
        b, err = ref_beta(atoms, a)
        assert b < mpmath.mpf("1e-4000")
        _check(g, b, err)
        wrong, _ = ref_beta(plus, a)
        assert not g.lower <= wrong <= g.upper


def test_deep_beta_is_answered_by_the_split():
    """The joint atoms' route answers the deep design (not the dual, which refused "[0, 1]")."""
    acc = ExactAccountant(_mix([(Fraction(1, 2), 5, 3)], ((DiscreteGaussian("0.0014", 3), 3),)))
    lo, hi = beta_rr_atoms(acc, Fraction(1, 1000))
    assert 0 < lo <= hi <= lo * (1 + REL)


@pytest.mark.parametrize("rr,rest", [
    ([(Fraction(1, 2), 2, 2)], ((DiscreteGaussian("1.2377", 7), 2), (RandomizedResponse(1), 2))),
    ([(Fraction(1, 2), 2, 3), (Fraction(1, 3), 4, 1)], ((DiscreteGaussian("1.2377", 7), 1),
                                                         (RandomizedResponse(1), 3))),
    ([(Fraction(1, 2), 2, 2)], ((DiscreteGaussian("1.2377", 7), 1), (ApproxDP("1/2", "1/1000"), 1))),  # (P[L = ±∞])
])
def test_kinks_beside_discrete_gaussians(rr, rest):
    """Design 34's shape (through the windowed twin of the discrete Gaussians' oracle, or windows)."""
    atoms = ref_atoms(rr, rest)
    got = ExactAccountant(_mix(rr, rest)).tradeoff(ALPHAS)
    for a, g in zip(ALPHAS, got):
        _check(g, *ref_beta(atoms, a))


#: the sixth audit's rrnbeta #0 shape (``DG(3.083, −3)×4 + RRN(9/10, k 3)×2 + DLap(7/3, −4)×7``), smaller
_ORACLE_RR = [(Fraction(9, 10), 3, 2)]
_ORACLE_REST = ((DiscreteGaussian("3.083", -3), 2), (DiscreteLaplace(Fraction(7, 3), -4), 2))
_ORACLE_ALPHAS = [Fraction(1, 10**12), Fraction(1, 1000), Fraction(1, 2), 1 - Fraction(1, 10**40)]


def test_beside_an_oracle_by_the_windowed_twin():
    """rrnbeta #0's shape: the discrete Gaussians are the oracle (δ_G(0) far from 1, no windowed twin
    of :func:`windowed_twin`), and β is the Neyman–Pearson split on :func:`rr_twin`'s joint atoms (it
    took the dual 24.6 CPU-s); α near 0 and near 1 (the split atom proposed from the upper tail)."""
    acc = ExactAccountant(_mix(_ORACLE_RR, _ORACLE_REST))._route_acc
    assert acc.gauss is not None and acc.rr is not None and windowed_twin(acc) is None
    twin = rr_twin(acc)
    assert twin is not None and twin.gauss is None
    atoms = ref_atoms(_ORACLE_RR, _ORACLE_REST)
    plus = ref_atoms([(Fraction(9, 10), 3, 3)], _ORACLE_REST)  # (one response more: excluded)
    got = ExactAccountant(_mix(_ORACLE_RR, _ORACLE_REST)).tradeoff(_ORACLE_ALPHAS)
    for a, g in zip(_ORACLE_ALPHAS, got):
        b, err = ref_beta(atoms, a)
        _check(g, b, err)
        lo, hi = beta_rr_atoms(twin, a)  # (the split itself answers, not the dual)
        with mpmath.workdps(DPS):
            assert lo <= b + err and b - err <= hi and hi - lo <= REL * hi
        wrong, _ = ref_beta(plus, a)
        assert not g.lower <= wrong <= g.upper


def test_rr_twin_declines_without_randomized_responses_by_noise():
    """No twin where there is no randomized response by noise (the other routes answer)."""
    acc = ExactAccountant(Mixture(_ORACLE_REST))._route_acc
    assert rr_twin(acc) is None
