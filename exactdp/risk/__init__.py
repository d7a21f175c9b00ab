"""Bayesian disclosure risk of noisy counts, computed exactly.

Implements the risk measures of Kazan and Reiter, "Assessing statistical disclosure risk
for differentially private, hierarchical count data, with application to the 2020 U.S.
decennial census" (arXiv 2204.04253) as exact sums with stated truncation bounds, where
the paper uses Gibbs sampling and Monte Carlo:

* :mod:`.single` — posterior, risk ratio, expected risk and Bayes decision for one noisy
  block count;
* :mod:`.hierarchical` — block + block-group posterior by exact summation over ``X2``
  (approximate or exact ``Y1*`` noise), decision maps and decision probabilities
  marginalised over all released values;
* :mod:`.gibbs` — the paper's Gibbs sampler (for comparison only);
* :mod:`.attacks` — participation, misreporting and unknown-variable attacks;
* :mod:`.uniqueness` — the ℓ-level uniqueness attack of the supplement;
* :mod:`.sweep`, :mod:`.plots` — sweeps over ρ1, ρ2, ℓ and the figures;
* :mod:`.presets` — the 2020 PL 94-171 GVHR budgets.

Noise conventions: ``"paper"`` (σ² = 1/(2ρ)) and ``"production"`` (σ² = 1/ρ), from
:mod:`exactdp.dgauss.conventions`; every result records which one was used.  The
discrete Gaussian tables, truncation bounds and sums come from :mod:`exactdp.dgauss`
(:mod:`~exactdp.dgauss.tables`, :mod:`~exactdp.dgauss.sums`, :mod:`~exactdp.dgauss.mp`);
private helpers: ``_hsetup`` (the two-level model), ``_hengine`` (float64 log-odds with
error bounds), ``_hmp`` (its multiprecision twin), ``_validate`` (input checks).
"""

from __future__ import annotations

from exactdp.dgauss.conventions import CONVENTIONS, coefficient, variance
from exactdp.risk.attacks import ATTACKS, AttackAssessment, assess_attack
from exactdp.risk.gibbs import GibbsResult, gibbs_posterior
from exactdp.risk.hierarchical import (
    DEFAULT_D,
    DecisionMap,
    DecisionProbability,
    HierarchicalPosterior,
    HierarchicalSetup,
    decision_curve,
    decision_map,
    decision_probability,
    hierarchical_posterior,
)
from exactdp.risk.presets import PRESETS, BudgetPreset, preset
from exactdp.risk.single import (
    DEFAULT_PRIORS,
    Decision,
    ExpectedRisk,
    PosteriorPoint,
    decision,
    expected_risk,
    posterior,
    posterior_curve,
)
from exactdp.risk.sweep import sweep_ell, sweep_rho1, sweep_rho2
from exactdp.risk.uniqueness import UniquenessResult, uniqueness_attack, uniqueness_curve, uniqueness_posterior

__all__ = [
    "CONVENTIONS",
    "coefficient",
    "variance",
    "DEFAULT_PRIORS",
    "PosteriorPoint",
    "ExpectedRisk",
    "Decision",
    "posterior",
    "posterior_curve",
    "expected_risk",
    "decision",
    "DEFAULT_D",
    "HierarchicalSetup",
    "HierarchicalPosterior",
    "DecisionMap",
    "DecisionProbability",
    "hierarchical_posterior",
    "decision_map",
    "decision_probability",
    "decision_curve",
    "GibbsResult",
    "gibbs_posterior",
    "ATTACKS",
    "AttackAssessment",
    "assess_attack",
    "UniquenessResult",
    "uniqueness_posterior",
    "uniqueness_attack",
    "uniqueness_curve",
    "sweep_rho1",
    "sweep_rho2",
    "sweep_ell",
    "PRESETS",
    "BudgetPreset",
    "preset",
]
