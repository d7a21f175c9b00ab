"""Brute force on reduced versions of the product structures (nothing of the engine in the
references: :mod:`tests.harness` enumerations, explicit joint output distributions and an
explicit re-implementation of PHSafe's join and truncation).

* the worst case over cases of small SafeTab-P- and PHSafe-shaped product files, by the
  engine (:func:`exactdp.census.product_accounting.family_rows`) against the harness;
* SafeTab-P's adaptivity: the joint output of stage 1, the stat level it picks and the
  stage-2 table of that granularity has exactly the privacy profile of the non-adaptive
  pair N_Z(1, σ1²) ⊗ N_Z(1, σ2²) (the assumption "adaptivity does not change the worst
  case", ``allocations/README.md``);
* PHSafe's worst-case neighbour: every change of one person row plus unit rows, in a
  reduced world (τ = 3 and 1 instead of 10 and 6), is dominated by one of the two cases of
  the model, and both cases occur;
* the one assumption the PHSafe argument needs beyond exact dominance — at the production
  variances a table whose shift vector is shorter in L2 (by the margins that occur, ≥ 9 %)
  is more private: 2τ+1 against 2τ and 1, and against τ+1 and τ — on a grid of ε (float64
  profiles, the smallest variance of each τ, where the lattice matters most).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from exactdp.census.product_accounting import family_rows, family_tradeoff, product_cases
from exactdp.census.product_format import parse_product_text
from exactdp.census.products import ProductAllocation, load_product

import harness

# ----------------------------------------------------------------------------- engine vs brute force
HEAD = '''format = "exactdp-product/1"
name = "{name}"
description = "reduced"
product = "reduced"
relation = "reduced"
budget_rule = "decimal"
configured_rho = "{total}"
[provenance]
source = "tests"
'''

SAFETAB_P_SMALL = HEAD.format(name="p-small", total="3/4") + '''
[budgets]
state = "1/2"
county = "1/4"
[tables]
state-1 = { budget = "state", factor = "1/5", sensitivity_sq = 1 }
state-2 = { budget = "state", factor = "4/5", sensitivity_sq = 1 }
state-d = { budget = "state", sensitivity_sq = 1 }
county-1 = { budget = "county", factor = "1/5", sensitivity_sq = 1 }
county-2 = { budget = "county", factor = "4/5", sensitivity_sq = 1 }
[units]
adaptive-state = { state-1 = [1], state-2 = [1] }
only-state = { state-d = [1] }
adaptive-county = { county-1 = [1], county-2 = [1] }
[fixed]
adaptive-county = 1
[[choice]]
options = [ { adaptive-state = 1 }, { only-state = 1 } ]
'''

PHSAFE_SMALL = HEAD.format(name="ph-small", total="5/2") + '''
[budgets]
a = "1"
b = "1"
d = "1/2"
[tables]
a = { budget = "a", sensitivity_sq = 16 }
b = { budget = "b", sensitivity_sq = 16 }
d = { budget = "d", sensitivity_sq = 4 }
[units]
small = { a = [3], b = [3], d = [2] }
full = { a = [2], b = [3, 1], d = [2] }
[[choice]]
options = [ { small = 1 }, { full = 1 } ]
'''


def _mechs(prod, i):
    return [(m.sigma2, m.shift) for m, c in prod.case_composition(i).groups for _ in range(c)]


@pytest.mark.parametrize("text", [SAFETAB_P_SMALL, PHSAFE_SMALL])
def test_worst_case_over_cases_matches_brute_force(text):
    prod = ProductAllocation(**parse_product_text(text, "reduced.toml"))
    deltas = [Fraction(1, 10**3), Fraction(1, 10**6)]
    rows = family_rows(product_cases(prod), prod.configured_rho, deltas)
    with mpmath.workdps(harness.DPS):
        for row, d in zip(rows, deltas):
            eps = [harness.epsilon_brute(_mechs(prod, i), d) for i in range(1, prod.n_cases + 1)]
            assert row.eps_lower - mpmath.mpf("1e-25") <= max(eps) <= row.eps_upper + mpmath.mpf("1e-25")
            assert eps[row.eps_case - 1] == max(eps)
            r = harness.mp(prod.configured_rho)
            e_bs = r + 2 * mpmath.sqrt(r * mpmath.log(1 / harness.mp(d)))
            dl = [harness.delta_brute(_mechs(prod, i), e_bs) for i in range(1, prod.n_cases + 1)]
            assert row.delta_lower * (1 - mpmath.mpf("1e-9")) <= max(dl) <= row.delta_upper * (1 + mpmath.mpf("1e-9"))
            assert abs(row.eps_bun_steinke - e_bs) < mpmath.mpf("1e-30")
    alpha = Fraction(1, 20)
    (t,) = family_tradeoff(product_cases(prod), [alpha])
    betas = [harness.tradeoff_brute(_mechs(prod, i), alpha) for i in range(1, prod.n_cases + 1)]
    assert t.lower - mpmath.mpf("1e-12") <= min(betas) <= t.upper + mpmath.mpf("1e-12")


# ----------------------------------------------------------------------------- SafeTab-P adaptivity
def _pmf(s2, center, half):
    with mpmath.workdps(40):
        w = {x: mpmath.exp(-mpmath.mpf(x - center) ** 2 / (2 * harness.mp(s2))) for x in range(-half, half + 1)}
        z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * harness.mp(s2))) for x in range(-4 * half, 4 * half))
        return {x: v / z for x, v in w.items()}


def _adaptive_delta(s1, s2, threshold, fine_cells, person_cell, eps, half=14):
    """δ(ε) of SafeTab-P's stage 1 → stat level → stage 2 for one population group, by
    explicit enumeration of the joint output: the person's dataset has counts 1 (group
    total) and 1 in ``person_cell`` of the fine stage-2 table, the other dataset 0."""
    y1_p, y1_q = _pmf(s1, 1, half), _pmf(s1, 0, half)
    cell_p = {c: _pmf(s2, 1 if c == person_cell else 0, half) for c in range(fine_cells)}
    cell_q = {c: _pmf(s2, 0, half) for c in range(fine_cells)}
    tot_p, tot_q = _pmf(s2, 1, half), _pmf(s2, 0, half)
    with mpmath.workdps(40):
        e = mpmath.exp(harness.mp(eps))
        acc = []
        for y1 in y1_p:
            if y1 < threshold:  # stat level 0: the group total only (safetab_p_analytics.py:734-745)
                outs = [(tot_p[y], tot_q[y]) for y in tot_p]
            else:  # finer level: one count per cell (age bins x sex)
                outs = []
                for ys in itertools.product(*(list(cell_p[c]) for c in range(fine_cells))):
                    p = q = mpmath.mpf(1)
                    for c, y in enumerate(ys):
                        p *= cell_p[c][y]
                        q *= cell_q[c][y]
                    outs.append((p, q))
            for p2, q2 in outs:
                v = y1_p[y1] * p2 - e * y1_q[y1] * q2
                if v > 0:
                    acc.append(v)
        return mpmath.fsum(acc)


@pytest.mark.parametrize("threshold, fine_cells, person_cell", [(1, 2, 0), (0, 2, 1), (2, 3, 2)])
def test_safetab_p_adaptivity_does_not_change_the_profile(threshold, fine_cells, person_cell):
    s1, s2 = Fraction(1, 2), Fraction(2, 5)
    half = 8 if fine_cells == 3 else 12
    for eps in (Fraction(0), Fraction(1, 2), Fraction(2)):
        adaptive = _adaptive_delta(s1, s2, threshold, fine_cells, person_cell, eps, half)
        plain = harness.delta_brute([(s1, 1), (s2, 1)], eps)
        assert abs(adaptive - plain) <= mpmath.mpf("1e-25") + mpmath.mpf("1e-20") * plain, (eps, adaptive, plain)


# ----------------------------------------------------------------------------- PHSafe worst case
TAU_A, TAU_C = 3, 1  # reduced from 10 (persons in the household) and 6 (children)
# person types: (age class, relationship, race, age bin); bins matter for own children only
TYPES = {"H": ("adult", "head", 1, 0), "R": ("adult", "nonrelative", 1, 0), "O1": ("child", "own", 1, 1),
         "O2": ("child", "own", 2, 2), "G2": ("child", "grand", 2, 1)}
# reduced tables: (universe, tau, cell of a member) after private_tabulations.py: PH2/PH7 (cell from the
# unit), PH1_num (age), PH4 (family members, age), PH3 at a race level and at "*", PH6 (own children, bin)
TABLES = {
    "PH2": (lambda t: True, TAU_A, lambda t: "unit"),
    "PH1": (lambda t: True, TAU_A, lambda t: t[0]),
    "PH4": (lambda t: t[1] != "nonrelative", TAU_A, lambda t: t[0]),
    "PH3r": (lambda t: t[0] == "child", TAU_C, lambda t: (t[1], t[2])),
    "PH3s": (lambda t: t[0] == "child", TAU_C, lambda t: t[1]),
    "PH6": (lambda t: t[1] == "own", TAU_C, lambda t: t[3]),
}
CASES = {  # the model's two cases, reduced (scripts/build_product_allocations.py: phsafe)
    "small household": {"PH2": [7], "PH1": [7], "PH4": [7], "PH3r": [3, 1], "PH3s": [3, 1], "PH6": [3, 1]},
    "full household": {"PH2": [6], "PH1": [7, 1], "PH4": [7, 1], "PH3r": [3, 1], "PH3s": [3, 1], "PH6": [3, 1]},
}


def _kept(order, table):
    """The members a join keeps: the first tau of the table's universe in the hash order
    (TruncationStrategy.DropExcess, tumult-core truncate_large_groups)."""
    universe, tau, _ = TABLES[table]
    return [m for m in order if universe(TYPES[m])][:tau]


def _person_removal_effects():
    """Per-table cell deltas of removing one member from one household, over every
    household of up to 5 members of the reduced types, every hash order and member."""
    seen = set()
    names = sorted(TYPES)
    for size in range(1, 6):
        for comp in itertools.combinations_with_replacement(names, size):
            for order in set(itertools.permutations(comp)):
                for k in range(size):
                    after = order[:k] + order[k + 1:]
                    eff = []
                    for table, (_, _, cell) in TABLES.items():
                        delta = {}
                        for m in _kept(order, table):
                            delta[cell(TYPES[m])] = delta.get(cell(TYPES[m]), 0) - 1
                        for m in _kept(after, table):
                            delta[cell(TYPES[m])] = delta.get(cell(TYPES[m]), 0) + 1
                        eff.append(tuple(sorted(v for v in delta.values() if v)))
                    seen.add(tuple(eff))
    return seen


def _with_units(deltas, tau):
    """Every |shift| multiset of one table when up to two unit rows change: each moves at
    most tau joined rows (one household's kept members), placed by the adversary in any
    cell, with any sign (an over-approximation of the real unit changes)."""
    cells = list(deltas) + [0, 0]  # the person's cells, and fresh cells
    out = set()
    for a, b in itertools.product(range(-tau, tau + 1), repeat=2):
        for i, j in itertools.permutations(range(len(cells)), 2):
            v = list(cells)
            v[i] += a
            v[j] += b
            out.add(tuple(sorted((abs(x) for x in v if x), reverse=True)))
        for i in range(len(cells)):  # both households in one cell
            v = list(cells)
            v[i] += a + b
            out.add(tuple(sorted((abs(x) for x in v if x), reverse=True)))
    return out


def _dominated(ms, case) -> bool:
    """An injection of the cells into the case's cells with a shift at least as large: the
    case's composition is then less private (a larger shift of a discrete Gaussian and an
    extra mechanism only lower the trade-off curve: monotone likelihood ratio, post-processing)."""
    case = sorted(case, reverse=True)
    return len(ms) <= len(case) and all(a <= b for a, b in zip(ms, case))


def _l2_below(ms, case, margin) -> bool:
    """The squared L2 norm of the cells is below the case's by at least ``margin``: covered
    under the L2 assumption (a table whose shift vector is shorter by that margin is at
    least as private at the production variances; checked below)."""
    return sum(b * b for b in case) - sum(a * a for a in ms) >= margin


def _l2gap(ms, case) -> int:
    return sum(b * b for b in case) - sum(a * a for a in ms)


def test_phsafe_worst_neighbour_in_a_reduced_world():
    names = list(TABLES)
    attained, l2_only = set(), set()
    for eff in _person_removal_effects():
        options = [_with_units(d, TABLES[t][1]) for t, d in zip(names, eff)]
        for case_name, case in CASES.items():
            if all(tuple(case[t]) in opts for t, opts in zip(names, options)):
                attained.add(case_name)
        bad = {c: {(t, ms) for t, opts in zip(names, options) for ms in opts
                   if not (_dominated(ms, CASES[c][t]) or _l2_below(ms, CASES[c][t], 2 * TABLES[t][1] - 1))}
               for c in CASES}
        b1, b2 = bad.values()
        # a neighbour no case covers: one table's outcome outside both, or two tables each
        # outside one of the cases
        assert not b1 & b2, (eff, b1 & b2)
        assert not (b1 and b2 and len({t for t, _ in b1 | b2}) > 1), (eff, b1, b2)
        l2_only |= {(t, ms) for t, opts in zip(names, options) for ms in opts
                    if not any(_dominated(ms, CASES[c][t]) for c in CASES)}
    assert attained == set(CASES)
    # the outcomes only the L2 assumption covers, with the smallest relative gap: the units'
    # 2·tau cell beside the person's 1 (6, 1 against 7 and 7, 1)
    gaps = {min(Fraction(_l2gap(ms, CASES[c][t]), sum(b * b for b in CASES[c][t])) for c in CASES
                if _l2_below(ms, CASES[c][t], 1)) for t, ms in l2_only}
    assert ("PH2", (6, 1)) in l2_only and ("PH1", (6, 1, 1)) in l2_only
    assert min(gaps) > Fraction(1, 10)


# ----------------------------------------------------------------------------- the L2 assumption
def _loss_pmf(s2: float, shift: int):
    sd = math.sqrt(s2)
    x = np.arange(-int(40 * sd) - 2 * shift, int(40 * sd) + 2 * shift + 1)
    w = np.exp(-x.astype(float) ** 2 / (2 * s2))
    return (shift * shift - 2 * shift * x) / (2 * s2), w / w.sum()


def _profile(s2, shifts, eps):
    """float64 δ(ε) of independent N_Z(shift, σ²) mechanisms (one or two), on a grid of ε:
    the joint loss distribution sorted once, δ(ε) = Σ_{ℓ>ε} p − e^ε Σ_{ℓ>ε} p e^{−ℓ}."""
    loss, prob = np.zeros(1), np.ones(1)
    for shift in shifts:
        l1, p1 = _loss_pmf(s2, shift)
        keep = p1 > 1e-40
        loss = (loss[:, None] + l1[keep][None, :]).ravel()
        prob = (prob[:, None] * p1[keep][None, :]).ravel()
    order = np.argsort(loss)
    loss, prob = loss[order], prob[order]
    tail_p = np.cumsum(prob[::-1])[::-1]
    tail_q = np.cumsum((prob * np.exp(-loss))[::-1])[::-1]
    out = np.zeros(len(eps))
    for k, e in enumerate(eps):
        i = np.searchsorted(loss, e, side="right")
        if i < len(loss):
            out[k] = tail_p[i] - np.exp(e) * tail_q[i]
    return out


def test_one_big_cell_beats_split_cells_at_production_variances():
    prod = load_product("phsafe-2020-us")  # the state budgets (the smallest σ²) are the PR run's too
    # the smallest σ² of each τ, and of the units-only tables (two households: 2 against 1 and 1)
    for tau, table in ((10, "PH1_num.state_A-G"), (6, "PH3.state_A-G"), (0.5, "PH1_denom.state_A-G")):
        s2 = float(prod.tables[table].sigma2("tumult-float"))
        top = int(2 * tau + 1)
        mu = top / math.sqrt(s2)
        eps = np.linspace(0.0, mu * mu / 2 + 7 * mu, 80)
        big = _profile(s2, [top], eps)
        assert big[-1] < 1e-11
        alts = ([1, 1],) if top == 2 else ([top - 1, 1], [(top + 1) // 2, top // 2])
        for alt in alts:  # the tightest relative L2 gaps that occur
            other = _profile(s2, alt, eps)  # the shorter shift vector must be more private
            mask = big > 1e-12
            assert np.all(other[mask] <= big[mask] * (1 - 1e-3)), (table, alt)
