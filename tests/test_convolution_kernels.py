"""The lattice convolution's kernels (``kernels/convolution.py``) against exact references.

``atom_tails(suffix, q, r, probs, lo, d, thresholds)`` is ``Σ_c p_c·P(d·T ≥ s − v_c)`` with
``P(d·T ≥ y) = suffix[⌈y/d⌉ − lo]`` clipped to the table (``suffix[0]`` below it, 0 above
it).  The reference indexes the table with Python's exact integer ceiling division and sums
the products with ``math.fsum`` (correctly rounded); the kernel's Neumaier sum of the same
non-negative products must be within 4u of it (u = 2⁻⁵³).  Any wrong index moves the value
by a difference of two distinct table entries, far more than that.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from exactdp.kernels.convolution import ATOM_LANES, atom_residues, atom_tails

U = 2.0**-53


def _reference(suffix, values, probs, lo, d, thresholds):
    n = len(suffix) - 1
    out = []
    for s in thresholds.tolist():
        terms = []
        for v, p in zip(values.tolist(), probs.tolist()):
            idx = -((v - s) // d) - lo  # ⌈(s − v)/d⌉ − lo, exactly in Python integers
            if idx >= n:
                continue
            terms.append(p * suffix[max(idx, 0)])
        out.append(math.fsum(terms))
    return out


def _check(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got.tolist(), ref):
        assert abs(g - r) <= 4 * U * r, (g, r)


@pytest.mark.parametrize("d", [1, 2, 7, 949, 2**40 + 3])
@pytest.mark.parametrize("n_thr", [0, 1, ATOM_LANES - 1, ATOM_LANES, 2 * ATOM_LANES + 1])
def test_atom_tails_against_exact_indexing(d, n_thr):
    rng = np.random.default_rng(d * 31 + n_thr)
    n_atoms = 400
    span = 10**6 * max(1, d // 1000)
    values = rng.integers(-span, span, n_atoms).astype(np.int64)
    values[:4] = [0, -1, 1, d]  # residues 0 and d − 1, exact multiples
    probs = rng.random(n_atoms) * 10.0 ** rng.integers(-300, 0, n_atoms)
    suffix = np.sort(rng.random(2001))[::-1].copy()  # distinct entries: a wrong index shows
    lo = int(rng.integers(-1500, 10))
    # thresholds inside the table, below it (idx ≤ 0) and above it (idx ≥ n: no term)
    thr = rng.integers(-3 * span, 3 * span, n_thr).astype(np.int64)
    if n_thr:
        thr[0] = lo * d
    q, r = atom_residues(values, d)
    assert (q * d + r == values).all() and (r >= 0).all() and (r < d).all()
    _check(atom_tails(suffix, q, r, probs, lo, d, thr), _reference(suffix.tolist(), values, probs, lo, d, thr))


def test_atom_tails_every_index_case():
    """Every threshold lands each atom at idx ≤ 0, inside and ≥ n across a sweep of s."""
    d, lo = 5, -7
    values = np.arange(-40, 41, dtype=np.int64)
    probs = np.linspace(0.01, 1.0, values.size)
    suffix = np.linspace(1.0, 0.05, 12)  # (the last entry is outside the table: never used)
    thr = np.arange(-120, 121, dtype=np.int64)
    q, r = atom_residues(values, d)
    _check(atom_tails(suffix, q, r, probs, lo, d, thr), _reference(suffix.tolist(), values, probs, lo, d, thr))


def test_group_pmf_kept_is_a_copy_of_the_computed_one():
    """The kept pmf (engine/convolution.py) is handed out as a copy with the values and
    bound of a fresh computation."""
    from exactdp.engine import convolution

    convolution._PMFS.clear()
    first, rel1 = convolution.group_pmf(2.5, 3)
    first[:] = -1.0  # the caller's copy: the kept one is untouched
    again, rel2 = convolution.group_pmf(2.5, 3)
    convolution._PMFS.clear()
    fresh, rel3 = convolution.group_pmf(2.5, 3)
    assert rel1 == rel2 == rel3 and np.array_equal(again, fresh) and (again >= 0).all()
