"""β of a design whose every shift is 0: a wrong-side β the sixth audit found (bench/audit.md).

A design whose mechanisms all have shift 0 releases the same distribution on both neighbours
(P = Q).  Every test then has E_Q φ = E_P φ, so the trade-off is β(α) = 1 − α exactly.  The
lattice route answered it as a point ``to_mpf(1 − α)`` rounded to nearest with error bound 0
(``accounting/curve.py``, the ``identical`` branch of ``tradeoff``; now the exact distance to
1 − α rounded up is its error bound): the bracket [v, v] missed
the exact 1 − α whenever it is not a binary number at the working precision, and for
α = 1 − 10⁻³⁰⁰, 1 − 10⁻¹², 10⁻³⁰⁰ the reported (conservative, lower) end lies above it
(by 3.7e-42, 8.4e-42 and 1e-300 relative).

Reference (nothing of exactdp): the design's loss atoms written out in exact rationals — a
discrete Gaussian group of count c and shift Δ has the loss (cΔ² − 2ΔS)/(2σ²) at its sum S,
identically 0 for Δ = 0, so the joint loss is one atom 0 of P- and Q-mass 1 — and the
Neyman–Pearson test on them (accept the highest-loss atoms up to P-mass 1 − α).
"""

from fractions import Fraction

import pytest

from exactdp import Composition, DiscreteGaussian, ExactAccountant

GROUPS = ((Fraction(5, 2), 0, 5), (Fraction(37, 100), 0, 2))  # (σ², shift, count)


def _joint_atoms(groups) -> dict:
    """{loss: (P, Q)} of the composition of shift-0 groups, exactly.

    A group's loss at its sum S is (cΔ² − 2ΔS)/(2σ²): 0 for every S when Δ = 0 (checked on a
    window of S), so its P- and Q-pmfs, each summing to 1, put all their mass on the loss 0;
    the composition adds the losses and multiplies the masses."""
    joint = {Fraction(0): (Fraction(1), Fraction(1))}
    for s2, shift, count in groups:
        assert {Fraction(count * shift * shift - 2 * shift * s, 2) / s2 for s in range(-50, 51)} == {0}
        group = {Fraction(0): (Fraction(1), Fraction(1))}
        out = {}
        for la, (pa, qa) in joint.items():
            for lb, (pb, qb) in group.items():
                p0, q0 = out.get(la + lb, (Fraction(0), Fraction(0)))
                out[la + lb] = (p0 + pa * pb, q0 + qa * qb)
        joint = out
    return joint


def _np_beta(atoms: dict, alpha: Fraction) -> Fraction:
    """Neyman–Pearson: accept the highest-loss atoms until their P-mass is 1 − α; β is the
    Q-mass accepted (the boundary atom randomised)."""
    need, beta = 1 - alpha, Fraction(0)
    for loss in sorted(atoms, reverse=True):
        p, q = atoms[loss]
        take = min(p, need)
        beta += q * take / p
        need -= take
        if need == 0:
            break
    return beta


def _exact(x) -> Fraction:
    sign, man, exp, _ = x._mpf_
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


@pytest.mark.parametrize("alpha", ["0." + "9" * 300, "0.999999999999", "1e-300", "0.3", "1/2", "1/3", "1e-600"])
def test_identical_design_beta_bracket_contains_one_minus_alpha(alpha):
    acc = ExactAccountant(Composition(tuple((DiscreteGaussian(s2, shift), c) for s2, shift, c in GROUPS)))
    (pt,) = acc.tradeoff([alpha])
    truth = _np_beta(_joint_atoms(GROUPS), Fraction(alpha))
    assert truth == 1 - Fraction(alpha)
    assert _exact(pt.lower) <= truth <= _exact(pt.upper)
