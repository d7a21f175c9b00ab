"""The two-half kernel's walked ranks (issue 33, count-2 narrow class).

:func:`exactdp.kernels.half_sums.block_sums` sums A's atoms of a tile in value order, so
``θ − a`` moves little from one atom to the next: B's index is walked from the last one
(:func:`exactdp.kernels.half_sums._walk`) instead of looked up in B's cells for every atom.
Checks, each against a reference written here (nothing of the engine):

* the walk, from every start, finds the first midpoint ≥ x (NumPy's ``searchsorted``), ties
  and both ends included;
* a level of two synthetic halves (several tiles and probability shells, values spread so
  that the walk crosses many of B's atoms): δ(θ) and 1 − δ(θ) at a batch of thresholds
  against the pairwise sums ``Σ_a Σ_b P(a)P(b)(1 − e^{θ−a−b})₊`` and ``Σ P(a)P(b)min(1,
  e^{θ−a−b})`` (math.fsum of the exact-to-rounding terms): contained, ≤ 1e-9 relative wide.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from exactdp.kernels.half_sums import _walk

from exactdp.engine.halves import _Level


def test_walk_finds_the_first_midpoint_at_least_x():
    rng = np.random.default_rng(33)
    mid = np.sort(np.concatenate([rng.normal(size=300), np.full(7, 0.25), np.full(3, -1.5)]))
    xs = np.concatenate([rng.normal(size=60) * 1.5, [0.25, -1.5, mid[0], mid[-1], -50.0, 50.0]])
    for x in xs:
        want = int(np.searchsorted(mid, x, side="left"))
        for j in range(0, mid.size + 1, 7):
            assert _walk(mid, j, float(x)) == want
        assert _walk(mid, mid.size, float(x)) == want


def _half(rng, n, scale, shift):
    """A synthetic half: n distinct exact-float values (enclosures of zero width), log
    probabilities of a discretised Gaussian normalised in floats (the reference uses the same
    floats: it checks the sums, not the pmf)."""
    v = np.unique(np.round(rng.normal(shift, scale, size=n) * 2**20) / 2**20)
    lp = -0.5 * ((v - shift) / scale) ** 2
    lp = lp - math.log(math.fsum(np.exp(lp)))
    return SimpleNamespace(value_dn=v, value_up=v.copy(), log_p=lp, log_err=np.zeros(v.size),
                           log_omitted=-np.inf, size=v.size)


def _reference(a, b, th, complement):
    """``Σ_a Σ_b P(a)P(b)(1 − e^{θ−a−b})₊`` (or ``min(1, e^{θ−a−b})``), every term to a few
    units of rounding, summed exactly rounded."""
    d = th - (a.value_dn[:, None] + b.value_dn[None, :])  # θ − a − b (exact pairs: few-ulp error)
    w = a.log_p[:, None] + b.log_p[None, :]
    if complement:
        t = np.exp(w + np.minimum(d, 0.0))
    else:
        t = np.where(d < 0, np.exp(w) * -np.expm1(np.minimum(d, 0.0)), 0.0)
    return math.fsum(t.ravel())


@pytest.mark.parametrize("complement", [False, True])
def test_level_sums_against_pairwise_sums(complement):
    rng = np.random.default_rng(7)
    a = _half(rng, 1600, 3.0, 0.4)  # 3 tiles of ~530 atoms, shells down to ~e^{-20}
    b = _half(rng, 1200, 2.5, -0.3)
    level = _Level(a, b)
    ths = np.array([-6.0, -1.25, 0.0, 0.7, 3.3, 8.0, 12.5])
    lo, hi = level.sums(ths, ths.copy(), complement)
    for k, th in enumerate(ths):
        ref = _reference(a, b, float(th), complement)
        assert ref > 0
        l_ref = math.log(ref)
        # the reference is within ~1e-13 relative (few-ulp terms, exact sum)
        assert lo[k] <= l_ref + 1e-13 and l_ref - 1e-13 <= hi[k], (th, lo[k], l_ref, hi[k])
        assert hi[k] - lo[k] <= 1e-9, (th, hi[k] - lo[k])
