"""The tilted rule's scalar kernels against multiprecision sums (tests/harness.py).

* ``kernels.dgauss.tilted_moments(f, s²)``: the mean and variance of N_Z(f, s²), within
  1e-13 relative (the variance of a tiny-σ² factor down to e^{−500} included);
* ``kernels.dgauss.log_theta_tilde_ratio(f, s²)``: log θ̃(f) − log θ̃(0), within the
  rounding ``_dk_float`` charges for it (8u·(1 + 1/s²) per group, absolute);
* ``kernels.tilted.cgf_slope`` (K′, K″ of the lattice sum) within 1e-12 relative, and
  ``saddle_point`` solves K′(λ) = s to 1e-11 relative by the reference slope;
* ``kernels.quadfinish.grid_tilts``: the saddle point rounded to the grid ``j·step``.

σ² spans both forms of the kernels (direct sums below 1, the Poisson series above) and the
switch itself, from 1e-3 to 1e7 with the DHC values; f = 0, ±tiny, ±1/2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from exactdp.kernels import dgauss, quadfinish, tilted

from harness import cgf_slope_brute, dg_centred_moments, log_theta_shift_ratio

U = 2.0**-53

#: σ² across both forms, the switch at 1 and the DHC values
S2 = [1e-3, 0.05, 0.6677213239372959, 0.9999, 1.0, 1.0001, 1.12088774, 2.5025025, 4.48355097, 10.01001001,
      136.98630137, 909.0909090909091, 1e4, 1e7]
F = [0.0, -0.0, 1e-300, -1e-250, 3e-17, -2e-9, 1.2e-5, 0.001, 0.25, -0.3, 0.4999999999999999, 0.5, -0.5]


@pytest.mark.parametrize("s2", S2)
def test_tilted_moments_and_theta_ratio_against_direct_sums(s2):
    rng = np.random.default_rng(14)
    for f in F + list(rng.uniform(-0.5, 0.5, 6)):
        mean, var = dgauss.tilted_moments(f, s2)
        rm, rv = dg_centred_moments(f, s2)
        assert abs(mean - rm) <= 1e-13 * max(abs(rm), math.sqrt(rv)) + 1e-300, (f, s2, mean, rm)
        assert abs(var - rv) <= 1e-13 * rv + 1e-300, (f, s2, var, rv)
        lr = dgauss.log_theta_tilde_ratio(f, s2)
        ref = log_theta_shift_ratio(f, s2)
        assert abs(lr - ref) <= 8 * U * (1 + 1 / s2), (f, s2, lr, ref)


def _lattices(rng, n):
    for _ in range(n):
        G = int(rng.integers(1, 5))
        A = np.sort(rng.choice(np.arange(1, 2_000_000), G, replace=False)).astype(np.int64)
        A[0] = int(rng.integers(1, 50))
        m = rng.integers(1, 20, G).astype(np.int64)
        s2 = rng.choice(S2[:10], G).astype(float)
        yield A, m, s2


def test_cgf_slope_and_saddle_point_against_the_reference_slope():
    rng = np.random.default_rng(8)
    for A, m, s2 in _lattices(rng, 5):
        V = float(np.sum(m * A.astype(float) ** 2 * s2))
        for lam in rng.uniform(1e-9, 1e-4, 2) / max(1.0, float(A.max())) * 1e3:
            k1, k2 = tilted.cgf_slope(A, m, s2, lam)
            r1, r2 = cgf_slope_brute(A, m, s2, lam)
            assert abs(k1 - r1) <= 1e-12 * abs(r1) and abs(k2 - r2) <= 1e-12 * r2, (lam, k1, r1, k2, r2)
        for x in np.floor(np.concatenate([rng.uniform(1, 8, 2), rng.uniform(0.01, 40, 2)]) * math.sqrt(V)):
            if x < 1:
                continue
            lam = tilted.saddle_point(A, m, s2, x, x / V)
            r1, _ = cgf_slope_brute(A, m, s2, lam)
            assert lam > 0 and abs(r1 - x) <= 1e-11 * x, (x, lam, r1)


def test_grid_tilts_are_saddle_points_on_the_grid():
    rng = np.random.default_rng(9)
    for A, m, s2 in _lattices(rng, 10):
        V = float(np.sum(m * A.astype(float) ** 2 * s2))
        s = np.floor(np.concatenate([rng.uniform(1, 8, 5), rng.uniform(0.01, 40, 5), [0.0]]) * math.sqrt(V))
        step = 1e-3 / math.sqrt(V)
        key, status = quadfinish.grid_tilts(A, m, s2, s, V, False, step, step, float(A.max() * s2.max()))
        for x, k, st in zip(s, key, status):
            if st != quadfinish.GRID_OK:
                continue
            lam = tilted.saddle_point(A, m, s2, x, x / V) if x > 0 else 0.0
            j = np.rint(lam / step)
            assert k == max(j * step, step), (x, k, lam)


def test_moments_near_the_corrections_cut_off():
    """σ² between 1.5 and 3.2, where the Poisson corrections of the moments fall below half
    an ulp of f and are skipped: the skip must not cost accuracy."""
    rng = np.random.default_rng(54)
    for s2 in np.linspace(1.5, 3.2, 12):
        for f in np.concatenate([rng.uniform(-0.5, 0.5, 3), 10.0 ** rng.uniform(-12, -1, 3)]):
            mean, var = dgauss.tilted_moments(f, s2)
            rm, rv = dg_centred_moments(f, s2)
            assert abs(mean - rm) <= 1e-13 * max(abs(rm), math.sqrt(rv)) and abs(var - rv) <= 1e-13 * rv, (f, s2)
            assert abs(mean - rm) <= 2 * U * abs(rm) + 1e-300, (f, s2)  # within an ulp of the mean itself
