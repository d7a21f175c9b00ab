"""Issue 14 (kern7): ``kernels/convolution.py::atom_tails`` without a division per atom
and with thresholds summed side by side returns the bits of the kernel it replaced.

The reference is ``atom_tails`` as it was at main cc7036b, frozen verbatim (plain
``numba.njit`` with the project's options, Neumaier's step written out).  The new kernel
reads the atoms' values as ``q·d + r`` and forms ``⌈(s − v)/d⌉ = q_s − q + [r_s > r]``;
any different index, skipped term or summation order shows up as a differing bit.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from exactdp.kernels.convolution import ATOM_LANES, atom_residues, atom_tails

_JIT = dict(cache=True, fastmath=False, nogil=True, error_model="numpy")


@numba.njit("float64[:](float64[:], int64[:], float64[:], int64, int64, int64[:])", **_JIT)
def old_atom_tails(suffix, atom_values, atom_probs, lo, d, thresholds):
    out = np.empty(thresholds.shape[0])
    n = suffix.shape[0] - 1
    for t in range(thresholds.shape[0]):
        s = thresholds[t]
        acc = 0.0
        comp = 0.0
        for c in range(atom_values.shape[0]):
            y = s - atom_values[c]
            k = -((-y) // d)  # ceil(y/d)
            idx = k - lo
            if idx <= 0:
                v = suffix[0]
            elif idx >= n:
                continue
            else:
                v = suffix[idx]
            term = atom_probs[c] * v
            tot = acc + term  # neumaier_add
            if abs(acc) >= abs(term):
                comp += (acc - tot) + term
            else:
                comp += (term - tot) + acc
            acc = tot
        out[t] = acc + comp
    return out


def _bits(a):
    return np.asarray(a, dtype=np.float64).view(np.uint64)


@pytest.mark.parametrize("d", [1, 2, 7, 949, 2**40 + 3])
@pytest.mark.parametrize("n_thr", [0, 1, ATOM_LANES - 1, ATOM_LANES, 2 * ATOM_LANES + 1])
def test_atom_tails_same_bits(d, n_thr):
    rng = np.random.default_rng(d * 31 + n_thr)
    n_atoms = 3000
    span = 10**6 * max(1, d // 1000)
    values = rng.integers(-span, span, n_atoms).astype(np.int64)
    values[:4] = [0, -1, 1, d]  # residues 0 and d − 1, exact multiples
    probs = rng.random(n_atoms) * 10.0 ** rng.integers(-300, 0, n_atoms)
    suffix = np.sort(rng.random(2001))[::-1].copy()
    lo = int(rng.integers(-1500, 10))
    # thresholds inside the table, below it (idx ≤ 0) and above it (idx ≥ n: skipped)
    thr = rng.integers(-3 * span, 3 * span, n_thr).astype(np.int64)
    if n_thr:
        thr[0] = lo * d
    q, r = atom_residues(values, d)
    assert (q * d + r == values).all() and (r >= 0).all() and (r < d).all()
    got = atom_tails(suffix, q, r, probs, lo, d, thr)
    ref = old_atom_tails(suffix, values, probs, lo, d, thr)
    assert got.shape == ref.shape
    assert (_bits(got) == _bits(ref)).all()


def test_atom_tails_every_index_case():
    """Every threshold lands each atom at idx ≤ 0, inside and ≥ n across a sweep of s."""
    d, lo = 5, -7
    values = np.arange(-40, 41, dtype=np.int64)
    probs = np.linspace(0.01, 1.0, values.size)
    suffix = np.linspace(1.0, 0.0, 12)
    thr = np.arange(-120, 121, dtype=np.int64)
    q, r = atom_residues(values, d)
    got = atom_tails(suffix, q, r, probs, lo, d, thr)
    assert (_bits(got) == _bits(old_atom_tails(suffix, values, probs, lo, d, thr))).all()


def test_group_pmf_kept_is_the_computed_one():
    """The kept pmf (engine/convolution.py) is handed out as a copy with the bits and bound
    of a fresh computation."""
    from exactdp.engine import convolution

    convolution._PMFS.clear()
    first, rel1 = convolution.group_pmf(2.5, 3)
    first[:] = -1.0  # the caller's copy: the kept one is untouched
    again, rel2 = convolution.group_pmf(2.5, 3)
    convolution._PMFS.clear()
    fresh, rel3 = convolution.group_pmf(2.5, 3)
    assert rel1 == rel2 == rel3 and (_bits(again) == _bits(fresh)).all() and (again >= 0).all()
