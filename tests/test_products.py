"""The product files (``exactdp-product/1``) and the built-in Tumult products.

Every built-in number is checked against the production configurations in
``../shared/census_configs`` (read here with ``json``, as the production code reads them),
and Tumult's float arithmetic is replayed here exactly as the production lines write it
(``safetab_p_analytics.py:630-635``: ``float * Fraction``; ``ExactNumber.from_float``:
the exact value of the float).  Nothing here uses the engine.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from exactdp.census.product_format import parse_product_text
from exactdp.census.products import ProductAllocation, builtin_products, load_product
from exactdp.numerics.exact import InputError

ROOT = Path(__file__).resolve().parents[1]
BUILTINS = ("phsafe-2020-pr", "phsafe-2020-us", "safetab-h-2020-pr", "safetab-h-2020-us",
            "safetab-p-2020-pr", "safetab-p-2020-us")


@pytest.fixture(scope="module")
def configs(shared):
    folder = shared / "census_configs"
    assert folder.is_dir(), f"{folder} is missing: the production configurations are the reference here"
    return {f.name: json.loads(f.read_text()) for f in folder.glob("*.json")}


def _script():
    spec = importlib.util.spec_from_file_location("build_products", ROOT / "scripts" / "build_product_allocations.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_builtins_listed_and_load():
    assert builtin_products() == BUILTINS
    for name in BUILTINS:
        prod = load_product(name)
        assert prod.name == name and prod.budget_rule == "tumult-float"
    assert {load_product(n).n_cases for n in BUILTINS} == {1, 2, 30}


def test_builtin_files_are_what_the_script_writes(shared):
    written = _script().build(shared / "census_configs")
    for name, text in written.items():
        assert (ROOT / "allocations" / "products" / name).read_text(encoding="utf-8") == text, name


def test_safetab_p_budgets_and_stage_split(configs):
    cfg = configs["safetab-p-NMFv7-2020.json"]
    frac = Fraction(cfg["privacy_budget_p_stage_1_fraction"])  # safetab_p_analytics.py:209
    for run, regions in (("us", ["usa", "state", "county", "tract", "place", "aiannh"]),
                         ("pr", ["pr_state", "pr_county", "pr_tract", "pr_place"])):
        prod = load_product(f"safetab-p-2020-{run}")
        keys = [f"privacy_budget_p_level_{lv}_{r}" for r in regions for lv in (1, 2)]
        assert prod.configured_rho == sum(Fraction(str(cfg[k])) for k in keys)
        for k in keys:
            tabs = {t.name.rsplit("-", 2)[-2] + "-" + t.name.rsplit("-", 1)[-1]: t
                    for t in prod.tables.values() if t.budget == k}
            if cfg[k] == 0:
                assert not tabs, k  # no query at budget 0
                continue
            b = cfg[k]
            # the production arithmetic: float budget times a Fraction is a float
            assert tabs["stage-1"].exact_rho("tumult-float") == Fraction(b * frac)
            assert tabs["stage-2"].exact_rho("tumult-float") == Fraction(b * (1 - frac))
            assert tabs["stage-1"].exact_rho("decimal") + tabs["stage-2"].exact_rho("decimal") == Fraction(str(b))
            assert ("detailed-only" in tabs) == k.endswith(("_usa", "_state")), k  # USA, STATE, PR-STATE
            for t in tabs.values():
                assert t.sensitivity_sq == 9 and t.sigma2("decimal") == Fraction(9) / (2 * t.exact_rho("decimal"))
    assert load_product("safetab-p-2020-us").configured_rho == Fraction("4.944")
    assert load_product("safetab-p-2020-pr").configured_rho == Fraction("2.643")


def test_safetab_h_budgets(configs):
    cfg = configs["safetab-h-NMFv5.json"]
    for run, total in (("us", "8.895302"), ("pr", "4.754134")):
        prod = load_product(f"safetab-h-2020-{run}")
        assert prod.configured_rho == Fraction(total)
        for key, value in prod.budgets.items():
            assert value == Fraction(str(cfg[key])) and cfg[key] > 0
        for t in prod.tables.values():
            assert t.exact_rho("tumult-float") == Fraction(float(cfg[t.budget]))  # ExactNumber.from_float
        assert prod.n_cases == 1
        shifts = prod.case_shifts(1)
        assert set(shifts) == set(prod.tables) and all(v == [(1, 9)] for v in shifts.values())


def test_phsafe_budgets_sensitivities_and_cases(configs):
    for run in ("us", "pr"):
        cfg = configs[f"phsafe-NMFv8-{run}.json"]
        prod = load_product(f"phsafe-2020-{run}")
        want = {f"{tab}.{geo}": Fraction(str(v)) for tab, per in cfg["privacy_budget"].items()
                for geo, v in per.items() if v != 0}
        assert dict(prod.budgets) == want
        assert prod.configured_rho == sum(want.values())
        for name, t in prod.tables.items():
            tab = name.split(".")[0]
            tau = cfg["tau"].get(tab)
            assert t.sensitivity_sq == (4 if tau is None else (2 * tau + 2) ** 2), name
        small, full = prod.case_shifts(1), prod.case_shifts(2)
        for name in prod.tables:
            tab, tau = name.split(".")[0], cfg["tau"].get(name.split(".")[0])
            if tau is None:
                assert small[name] == full[name] == [(2, 1)]
            elif tab in ("PH3", "PH6"):
                assert small[name] == full[name] == [(1, 1), (2 * tau + 1, 1)]
            elif tab in ("PH2", "PH7"):
                assert small[name] == [(2 * tau + 1, 1)] and full[name] == [(2 * tau, 1)]
            else:
                assert small[name] == [(2 * tau + 1, 1)] and full[name] == [(1, 1), (2 * tau + 1, 1)]
        # the worst neighbour spends less than Tumult's accounting: (2τ+1)²(+1) < (2τ+2)²
        for i in (1, 2):
            assert prod.case_rho(i, "decimal") < prod.configured_rho


@pytest.mark.parametrize("name", BUILTINS)
def test_case_rho_never_exceeds_the_configuration(name):
    prod = load_product(name)
    for i in range(1, prod.n_cases + 1):
        shares = prod.budget_shares(i)
        assert all(0 <= s <= 1 for s in shares.values())
        assert prod.case_rho(i, "decimal") == sum(prod.budgets[k] * s for k, s in shares.items())
        # what Tumult's accountant charges (every budget key spent in full) bounds every case
        # under the decimal rule (under "tumult-float" the products' roundings may exceed it by
        # ~1e-19 relative)
        assert prod.case_rho(i, "decimal") <= prod.accounted_rho("decimal") == prod.configured_rho
        if name.startswith("safetab"):  # every group of the record at its maximum: every budget spent
            assert all(s == 1 for s in shares.values()) and prod.case_rho(i, "decimal") == prod.configured_rho


def test_case_numbering_is_itertools_product_order():
    prod = load_product("safetab-p-2020-us")
    keys = list(itertools.product(range(3), range(10)))
    for i, (j1, j2) in enumerate(keys, start=1):
        assert prod.case_label(i) == (f"level-1 detailed-only groups at USA-L1, STATE-L1: j={j1}; "
                                      f"level-2 detailed-only groups at USA-L2, STATE-L2: j={j2}")
        units = prod.case_units(i)
        assert units.get("detailed-only@USA-L2", 0) == j2 and units.get("adaptive@STATE-L1", 0) == 9 - j1
    with pytest.raises(InputError, match="1..30"):
        prod.case_label(31)


def test_content_hash_ignores_names_and_rule_matters():
    a = load_product("safetab-h-2020-pr")
    fields = dict(name="x", description="d", product="p", relation="r", budget_rule=a.budget_rule,
                  configured_rho=a.configured_rho, provenance={"source": "s"}, budgets=a.budgets,
                  tables={k: (t.budget, t.factor, t.sensitivity_sq) for k, t in a.tables.items()},
                  units=a.units, fixed=a.fixed, choices=a.choices)
    assert ProductAllocation(**fields).content_hash() == a.content_hash()
    assert ProductAllocation(**{**fields, "budget_rule": "decimal"}).content_hash() != a.content_hash()


TINY = '''
format = "exactdp-product/1"
name = "tiny"
description = "two groups"
product = "test"
relation = "add or remove one record"
budget_rule = "decimal"
configured_rho = "3/4"
[provenance]
source = "test"
[budgets]
b = "1/2"
c = "1/4"
[tables]
s1 = { budget = "b", factor = "1/5", sensitivity_sq = 2 }
s2 = { budget = "b", factor = "4/5", sensitivity_sq = 2 }
d = { budget = "b", sensitivity_sq = 2 }
u = { budget = "c", sensitivity_sq = 9 }
[units]
adaptive = { s1 = [1], s2 = [1] }
only = { d = [1] }
big = { u = [3] }
[fixed]
big = 1
[[choice]]
labels = ["a", "b", "c"]
options = [ { adaptive = 2 }, { adaptive = 1, only = 1 }, { only = 2 } ]
'''


def test_tiny_file_parses_to_exact_designs():
    prod = ProductAllocation(**parse_product_text(TINY, "tiny.toml"))
    assert prod.n_cases == 3 and prod.case_label(2) == "choice 1: b"
    comp = prod.case_composition(2)
    got = sorted((m.sigma2, m.shift, c) for m, c in comp.groups)
    want = sorted([(Fraction(2) / (2 * Fraction(1, 10)), 1, 1), (Fraction(2) / (2 * Fraction(2, 5)), 1, 1),
                   (Fraction(2) / (2 * Fraction(1, 2)), 1, 1), (Fraction(9) / (2 * Fraction(1, 4)), 3, 1)])
    assert got == want
    assert all(prod.case_rho(i) == Fraction(3, 4) for i in (1, 2, 3))
    assert prod.case_composition(1, "tumult-float").groups != comp.groups


@pytest.mark.parametrize("edit, field", [
    (('"1/2"', "0.5"), "budgets.b"),                                   # TOML float refused
    (('configured_rho = "3/4"', 'configured_rho = "1"'), "configured_rho"),
    (("d = [1]", "d = [2]"), "case"),                                 # over the sensitivity
    (("{ only = 2 }", "{ only = 2, adaptive = 1 }"), "case"),         # parallel partitions over budget
    (('labels = ["a", "b", "c"]', 'labels = ["a", "b"]'), "labels"),
    (("u = [3]", "u = [0]"), "units.big.u"),
    (("s1 = [1]", "nope = [1]"), "units.adaptive.nope"),
    (('budget_rule = "decimal"', 'budget_rule = "float"'), "budget_rule"),
    (('[budgets]', 'extra = 1\n[budgets]'), "extra"),
    (('factor = "4/5"', 'factor = "6/5"'), "tables.s2.factor"),
])
def test_malformed_files_name_the_field(edit, field):
    text = TINY.replace(*edit, 1)
    assert text != TINY
    with pytest.raises(InputError) as exc:
        ProductAllocation(**parse_product_text(text, "tiny.toml"))
    assert field in str(exc.value)


def test_load_product_errors(tmp_path):
    with pytest.raises(InputError, match="unknown built-in product"):
        load_product("safetab-q")
    with pytest.raises(InputError, match="no such file"):
        load_product(tmp_path / "none.toml")
    f = tmp_path / "tiny.toml"
    f.write_text(TINY)
    assert load_product(f).n_cases == 3


def _tumult_adjusted(requested: float, remaining: Fraction) -> Fraction:
    """Tumult Analytics' get_adjusted_budget (_privacy_budget_rounding_helper.py:16-44): the
    exact value of the float, or the remaining budget when the request exceeds it by at
    most 1e-9 relative."""
    exact = Fraction(requested)
    diff = remaining - exact
    if diff < 0 and -diff <= remaining / 10**9:
        return remaining
    return exact


def test_model_rho_is_tumults_or_above(configs):
    """The files' ρ (the requested float's exact value) is what Tumult charges, or more:
    replaying SafeTab-P's stage split (a level session holding exactly its budget, stage 1,
    then stage 2 partitioned and evaluated), the stage-2 ρ is lowered to the remainder at the
    0.008 and 0.159 levels (by < 1e-16 relative), never raised."""
    cfg = configs["safetab-p-NMFv7-2020.json"]
    frac = Fraction(cfg["privacy_budget_p_stage_1_fraction"])
    prod = load_product("safetab-p-2020-us")
    lowered = set()
    for t in prod.tables.values():
        if not t.name.endswith("stage-2"):
            continue
        level = Fraction(cfg[t.budget])  # the partition's budget (its exact float)
        b1, b2 = cfg[t.budget] * frac, cfg[t.budget] * (1 - frac)
        remaining = level - _tumult_adjusted(b1, level)
        rho2 = _tumult_adjusted(b2, _tumult_adjusted(b2, remaining))  # partition, then evaluate
        model = t.exact_rho("tumult-float")
        assert rho2 <= model and (model - rho2) / model < Fraction(1, 10**16)
        if rho2 < model:
            lowered.add(str(cfg[t.budget]))
    assert lowered == {"0.008", "0.159"}


def test_iteration_counts_script_on_a_toy_hierarchy(tmp_path):
    """scripts/safetab_iteration_counts.py against a brute force over every record of a toy
    hierarchy: the flat map's iterations (characteristic_iterations.py: alone iterations
    intersect, alone-or-in-combination ones unite, plus the ethnicity's) counted directly."""
    spec = importlib.util.spec_from_file_location("counts", ROOT / "scripts" / "safetab_iteration_counts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    race = [("10", "A alone", "1", "True", "False", "False"), ("11", "A any", "1", "False", "False", "False"),
            ("20", "B alone", "1", "True", "True", "False"), ("21", "B any", "1", "False", "True", "False"),
            ("30", "C any", "1", "False", "True", "False"), ("40", "D any", "1", "False", "False", "True"),
            ("99", "all", "0", "True", "Null", "Null")]
    eth = [("50", "H", "1", "True", "False"), ("51", "not H", "1", "False", "False")]
    maps = [("10", "a"), ("11", "a"), ("20", "b"), ("21", "b"), ("30", "c"), ("40", "c"), ("11", "a2"),
            ("21", "b2"), ("99", "a"), ("50", "h"), ("51", "n")]
    (tmp_path / "race-characteristic-iterations.txt").write_text(
        "ITERATION_CODE|ITERATION_NAME|LEVEL|ALONE|DETAILED_ONLY|COARSE_ONLY\n" + "\n".join("|".join(r) for r in race))
    (tmp_path / "ethnicity-characteristic-iterations.txt").write_text(
        "ITERATION_CODE|ITERATION_NAME|LEVEL|DETAILED_ONLY|COARSE_ONLY\n" + "\n".join("|".join(r) for r in eth))
    (tmp_path / "race-and-ethnicity-code-to-iteration.txt").write_text(
        "ITERATION_CODE|RACE_ETH_CODE\n" + "\n".join("|".join(r) for r in maps))
    got = mod.counts(tmp_path)[("1", "detailed")]
    detailed_only = {"20", "21", "30", "50"}
    its = {"a": {"10", "11"}, "a2": {"11"}, "b": {"20", "21"}, "b2": {"21"}, "c": {"30"}, "h": {"50"}, "n": {"51"}}
    alone = {"10", "20"}
    best = top = 0
    for k in range(1, 4):
        for codes in itertools.combinations(["a", "a2", "b", "b2", "c"], k):
            shared = set.intersection(*(its[c] & alone for c in codes))
            union = set().union(*(its[c] - alone for c in codes))
            for e in ("h", "n"):
                groups = shared | union | its[e]
                best, top = max(best, len(groups & detailed_only)), max(top, len(groups))
    assert got[0] == 1 and got[1] == 1 and got[2] == 1 * 8 + 1  # h_r, h_e, max_num_rows
    assert got[3] >= best and got[3] == 3  # b alone + b any + H: the bound is attained here
    assert top <= got[2]
