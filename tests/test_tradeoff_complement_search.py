"""β = f(α) where δ ≈ 1 at the dual's maximiser, and finite losses of two discrete-Gaussian
windows on coprime sub-grids: the shapes of the second audit's design 14 and the third audit's
tinyd design 11 (bench/audit.md, "branch betaslow").

* The dual search (:mod:`exactdp.accounting.dual_model`) fits its Gaussian model on ``log(1 − δ)``
  where the oracle gives the complement (α below 1/2: ``log δ ≈ −(1 − δ)`` carries no shape);
  ``DG(0.1, −6)×n + DG(2.81, 8)×m`` (lattice-free, atom sums) at α from 1e-9 to 1 − 1e-9.
* ``DG(0.084, −2)×n + DG(0.123, 3)×m + approx(0, 1e-200)×k``: the ball tables beyond the
  float ones are built atom by atom (``FiniteLoss._sparse_products``), not as a dense power
  of the 57,415-point grid (14 s at 256 bits on the audit's design, 0.3 s now).

Both against a Neyman–Pearson enumeration written in the test (exact Fraction losses, P- and
Q-masses in mpmath; helpers of tests/test_finite_tradeoff_deep.py), each query under a CPU budget.
"""

from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest
from test_finite_tradeoff_deep import _approx_atoms, _dg_atoms, _joint, _np_beta

from exactdp import Composition, ExactAccountant
from exactdp import DiscreteGaussian as G
from exactdp.kinds import ApproxDP, Mixture

DPS = 60
#: CPU seconds a query may take (branch: ≤ 0.4 s)
BUDGET = 5.0


def _power(atoms: list, count: int) -> list:
    """The ``count``-fold composition of one group's atoms, as a list of (loss, P, Q)."""
    return [(v, p, q) for v, (p, q) in _joint([atoms] * count).items()]


def _check(acc, joint: dict, slack, alpha: Fraction) -> None:
    t0 = time.process_time()
    got = acc.tradeoff([alpha])[0]
    cpu = time.process_time() - t0
    with mpmath.workdps(DPS):
        ref = _np_beta(joint, alpha)
        assert ref > 1e6 * slack
        assert got.lower <= ref + slack and ref - slack <= got.upper, (alpha, got.lower, got.upper, ref)
        assert got.upper - got.lower <= 1e-9 * ref, (alpha, (got.upper - got.lower) / ref)
    assert cpu <= BUDGET, (alpha, cpu)


@pytest.fixture(scope="module")
def lattice_free():
    n, m = 2, 6
    acc = ExactAccountant(Composition(((G("0.1", -6), n), (G("2.81", 8), m))), method="lattice-free")
    with mpmath.workdps(DPS):
        a, ta = _dg_atoms(Fraction(1, 10), -6, 680)
        b, tb = _dg_atoms(Fraction(281, 100), 8, 680)
        joint = _joint([_power(a, n), _power(b, m)])
    return acc, joint, 2 * (n * ta + m * tb)


@pytest.mark.parametrize("alpha", ["1e-9", "1e-3", "3/10", "1 - 1e-9"])
def test_lattice_free_beta_with_delta_near_one_against_the_enumeration(lattice_free, alpha):
    acc, joint, slack = lattice_free
    assert acc.route == "lattice-free" and float(acc.rho) < 500  # (the model's search, not the kink-first one)
    a = 1 - Fraction(1, 10**9) if alpha == "1 - 1e-9" else Fraction(alpha)
    _check(acc, joint, slack, a)


@pytest.fixture(scope="module")
def two_windows():
    n, m, k = 2, 4, 2
    acc = ExactAccountant(Mixture(((G("0.084", -2), n), (G("0.123", 3), m), (ApproxDP(0, "1e-200"), k))))
    with mpmath.workdps(DPS):
        x, tx = _dg_atoms(Fraction(84, 1000), -2, 900)
        y, ty = _dg_atoms(Fraction(123, 1000), 3, 900)
        joint = _joint([_power(x, n), _power(y, m)] + [_approx_atoms(Fraction(0), Fraction(1, 10**200))] * k)
    return acc, joint, 2 * (n * tx + m * ty)


@pytest.mark.parametrize("alpha", ["1e-3", "1/2", "1 - 1e-40"])
def test_two_windows_on_coprime_sub_grids_against_the_enumeration(two_windows, alpha):
    acc, joint, slack = two_windows
    fin = acc.answerer.finite
    # (the grid is filled: no sparse gain by atom count, but few products of atoms)
    assert not fin.sparse and 4 * fin.sparse_bound() > fin.size and fin._sparse_pays()
    a = 1 - Fraction(1, 10**40) if alpha == "1 - 1e-40" else Fraction(alpha)
    _check(acc, joint, slack, a)
