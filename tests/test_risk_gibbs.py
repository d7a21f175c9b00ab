"""The paper's Gibbs sampler agrees with the exact two-level posterior.

The exact posterior is itself checked against a brute-force sum in
test_risk_hierarchical.py; here the sampler (seeded numpy Generator, independent chains)
must land within Z_BOUND standard errors of it on a grid of inputs, for both X1 updates.

Z_BOUND = 4.5: with 12 comparisons the chance of a false alarm for a correct sampler is
≈ 12 · 6.8e-6 < 1e-4 (two-sided normal tail), and the standard error is the spread of 48
independent chain means (a t-distribution with 47 degrees of freedom would give ≈ 3e-4).
"""

from __future__ import annotations

import numpy as np
import pytest

from exactdp.numerics.exact import InputError
from exactdp.risk import HierarchicalSetup, gibbs_posterior, hierarchical_posterior
from exactdp.risk.presets import PRESETS

Z_BOUND = 4.5
P = PRESETS["paper"]
GRID = [(2, 1, -1), (0, -2, 5), (1, 3, -20), (4, 0, 10), (1, 1, 30), (-1, 6, 2)]


@pytest.mark.parametrize("model", ["joint", "gibbs-variant"])
def test_gibbs_agrees_with_exact_posterior(model):
    s = HierarchicalSetup(P.rho_block, P.rho_block_group, 27, "1/2", model=model)
    rng = np.random.default_rng(20220408)
    for D in GRID:
        exact = float(hierarchical_posterior(s, *D).posterior)
        g = gibbs_posterior(s, *D, n_samples=250, burn_in=25, n_chains=48, rng=rng)
        assert g.standard_error > 0
        z = (g.posterior - exact) / g.standard_error
        assert abs(z) < Z_BOUND, (D, g.posterior, exact, g.standard_error)
        assert g.truncation_bound < 1e-200


def test_gibbs_x2_frequencies_match_exact_x2_posterior():
    # Table 8 analogue at D = (2, 1, -1): empirical X2 frequencies vs the exact marginal
    # (binomial standard error of a frequency, chains treated as independent draws ⇒ generous bound).
    s = HierarchicalSetup(P.rho_block, P.rho_block_group, 27, "1/2")
    exact = hierarchical_posterior(s, 2, 1, -1)
    g = gibbs_posterior(s, 2, 1, -1, n_samples=400, burn_in=40, n_chains=50, rng=np.random.default_rng(7))
    freq = dict(zip(g.x2_values, g.x2_freq))
    n = g.n_samples * g.n_chains
    for v, pr in zip(exact.x2_values[:5], exact.x2_probs[:5]):
        pr = float(pr)
        se = (pr * (1 - pr) / n) ** 0.5 * 3  # ×3 for autocorrelation within chains
        assert abs(freq.get(v, 0.0) - pr) < Z_BOUND * se


def test_gibbs_with_exact_noise_and_known_count():
    s = HierarchicalSetup("1/2", "1/3", 3, "1/3", y_noise="exact", known=4)
    exact = hierarchical_posterior(s, 5, 6, 0).posterior
    g = gibbs_posterior(s, 5, 6, 0, n_samples=300, burn_in=30, n_chains=40, rng=np.random.default_rng(11))
    assert abs((g.posterior - exact) / g.standard_error) < Z_BOUND
    assert min(g.x2_values) >= 4  # X2 ≥ known


def test_gibbs_input_errors():
    s = HierarchicalSetup(P.rho_block, P.rho_block_group, 27, "1/2")
    with pytest.raises(InputError, match="n_chains"):
        gibbs_posterior(s, 1, 1, 0, n_chains=1)
    with pytest.raises(InputError, match="n_samples"):
        gibbs_posterior(s, 1, 1, 0, n_samples=0)
    with pytest.raises(InputError, match="x1_star"):
        gibbs_posterior(s, 1.5, 1, 0)
