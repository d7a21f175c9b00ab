"""Count-dependent privacy for histograms: the shifted-log Gaussian mechanism and its
lower bounds (Fitzsimons, "Better Privacy Guarantees for Larger Groups", 2026).

Modules
-------
params       ShiftedLogParams (r, r0, c exact rationals), σ of eq. (3)
budget       v(n) (eq. 5–7), asymptotics, composition
conversion   v(n) → per-count (ε, δ): Bun–Steinke, Canonne–Kamath–Steinke, exact Gaussian
             (computed by exactdp.conversions.bounds)
mechanism    vectorised sampler with optional stochastic rounding (eq. 4)
utility      Lemma 4.1, exact expected error with clipping, quadrature twin, Monte Carlo,
             drift optimality (Section 4.1)
unequal      why N(n, r²n²) fails (Section 7, eq. 34–35)
bounds       lower bounds (14), (15), (19), (23), (24) and small-r template constants
constants    truncated-Gaussian constant (29), 1/π, the C⋆ bracket (32), Table 2
prior_opt    the optimised prior in (19) at finite n, r
report       all lower bounds, the best one, vacuity, ratio to the mechanism
checks       Proposition 2.2 (zero count) and 2.3 (r = 1)
plots        figures (imported on demand)

Precision: ``params.DPS``/``GUARD`` are :data:`exactdp.numerics.precision.DPS_LOW` and
``DPS_GUARD``; maximisations are :func:`exactdp.numerics.search.golden_max`.
"""

from __future__ import annotations

from exactdp.countdep.bounds import (
    ManyCountBound,
    UniformBound,
    best_uniform_bound,
    many_count_bound,
    two_count_bound,
    two_count_limit,
    two_count_small_r_constant,
    two_count_template,
    uniform_bound,
    uniform_limit,
    uniform_small_r_constant,
)
from exactdp.countdep.budget import (
    BudgetPoint,
    BudgetTable,
    ComposedBudget,
    asymptotic_budget,
    budget,
    budget_float,
    budget_table,
    compose,
)
from exactdp.countdep.checks import endpoint_r1_check, zero_count_check
from exactdp.countdep.constants import (
    CStarBracket,
    Table2,
    c_star_bracket,
    c_star_upper,
    mechanism_coefficient,
    table2,
    truncated_gaussian_coefficient,
    truncated_gaussian_constant,
    truncated_gaussian_finite_r,
    truncated_gaussian_moments,
    uniform_finite_r,
)
from exactdp.countdep.conversion import ApproxDP, cks_delta, per_count_dp, zcdp_to_dp
from exactdp.countdep.mechanism import sample, stochastic_round
from exactdp.countdep.params import ShiftedLogParams
from exactdp.countdep.prior_opt import OptimisedPrior, PriorEvaluation, evaluate_prior, optimise_prior
from exactdp.countdep.report import LowerBoundPoint, LowerBoundReport, lower_bound_report
from exactdp.countdep.unequal import UnequalEdge, gaussian_renyi, renyi_order_threshold, unequal_gaussian_edge
from exactdp.countdep.utility import (
    DriftOptimum,
    MonteCarloResult,
    UtilityPoint,
    UtilityReport,
    drift_error,
    expected_error,
    lemma41,
    log_grid,
    monte_carlo_error,
    optimal_drift,
    utility_report,
)

__all__ = [
    "ShiftedLogParams",
    "budget",
    "budget_float",
    "asymptotic_budget",
    "budget_table",
    "BudgetPoint",
    "BudgetTable",
    "ComposedBudget",
    "compose",
    "ApproxDP",
    "zcdp_to_dp",
    "per_count_dp",
    "cks_delta",
    "sample",
    "stochastic_round",
    "lemma41",
    "drift_error",
    "optimal_drift",
    "DriftOptimum",
    "expected_error",
    "utility_report",
    "UtilityPoint",
    "UtilityReport",
    "log_grid",
    "monte_carlo_error",
    "MonteCarloResult",
    "renyi_order_threshold",
    "gaussian_renyi",
    "unequal_gaussian_edge",
    "UnequalEdge",
    "two_count_bound",
    "two_count_limit",
    "two_count_template",
    "two_count_small_r_constant",
    "many_count_bound",
    "ManyCountBound",
    "uniform_bound",
    "best_uniform_bound",
    "UniformBound",
    "uniform_limit",
    "uniform_small_r_constant",
    "truncated_gaussian_moments",
    "truncated_gaussian_coefficient",
    "truncated_gaussian_constant",
    "truncated_gaussian_finite_r",
    "uniform_finite_r",
    "mechanism_coefficient",
    "c_star_upper",
    "c_star_bracket",
    "CStarBracket",
    "table2",
    "Table2",
    "optimise_prior",
    "evaluate_prior",
    "OptimisedPrior",
    "PriorEvaluation",
    "lower_bound_report",
    "LowerBoundReport",
    "LowerBoundPoint",
    "endpoint_r1_check",
    "zero_count_check",
]
