#!/usr/bin/env python
"""Write the built-in product files (``allocations/products/*.toml``) from the production
configurations of SafeTab-P, SafeTab-H and PHSafe.

Usage::

    python scripts/build_product_allocations.py [--configs DIR] [--out allocations/products]

``--configs`` defaults to ``$EXACTDP_SHARED/census_configs`` (``../shared/census_configs``
beside the checkout).  The model (which tables a record moves, by how much, and Tumult's
sensitivities) is written out here once, with the production-code line it comes from; the
reasoning is in ``allocations/README.md`` ("Product files").  ``tests/test_products.py``
checks that the built-in files are what this script writes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: repositories and commits the configurations and the code lines below come from
REPO = {
    "P": ("uscensusbureau/DAS_2020_DDHCA_Production_Code", "6158781c058d0540a8087ac5f38f7ace80645ba1",
          "configs/safetab-p/NMFv7-2020/config.json"),
    "H": ("uscensusbureau/DAS_2020_DDHCB_Production_Code", "68a271c2ad66ecc07cd71f481770085eae49db70",
          "configs/safetab-h/NMFv5/config.json"),
    "PH": ("uscensusbureau/DAS_2020_SDHC_Production_Code", "b124df6daf8f9f6e6d93cd646a6f1df69e4f55de",
           "configs/phsafe/NMFv8/{run}/config.json"),
}
CONFIG_FILES = {"P": "safetab-p-NMFv7-2020.json", "H": "safetab-h-NMFv5.json",
                "PH-us": "phsafe-NMFv8-us.json", "PH-pr": "phsafe-NMFv8-pr.json"}

# SafeTab region types and their granularity (safetab_utils/regions.py:62-80 in both repos)
REGIONS = {"US": ["USA", "STATE", "COUNTY", "TRACT", "PLACE", "AIANNH"],
           "PR": ["PR-STATE", "PR-COUNTY", "PR-TRACT", "PR-PLACE"]}
DETAILED = {"USA", "STATE", "PR-STATE"}
RUN_NAMES = {"us": "United States (50 states and DC)", "pr": "Puerto Rico"}

#: population groups one record is flat-mapped into, per (region type, level): Tumult's
#: max_num_rows = h_r·max(2, max_race_codes) + h_e (characteristic_iterations.py:275 in
#: DDHCA, :289 in DDHCB) with h_r = h_e = 1 at both levels and both granularities in the
#: production iteration files (NMFv7-2020 and NMFv5) and max_race_codes = 8.
GROUPS = 9
#: the most detailed-only groups one record reaches at the detailed regions (USA, STATE,
#: PR-STATE), by level, in the NMFv7-2020 iteration files: level 1 has 4 detailed-only
#: iterations of which a record reaches at most 2; level 2 has 794 (354 "alone or in
#: combination" ones and 3 ethnicities): 8 race codes + 1 ethnicity = 9.
DETAILED_ONLY_MAX = {1: 2, 2: 9}

# PHSafe: tabulations, their iteration levels and region types (private_tabulations.py)
PH_LEVELS = ["A-G", "H,I", "*"]
PH_ONLY_STAR = {"PH2", "PH6"}  # _create_ph2_queries / _create_ph6_queries: (region, "*") only
PH_DENOMS = {"PH1_denom", "PH5_denom", "PH8_denom"}  # units only (no join, no tau)
PH_TAU6 = {"PH3", "PH6"}  # the tables whose universe (children under 18) allows a displaced member


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _dec(x) -> str:
    """A JSON number as the exact decimal it was written as (Python's shortest repr of the
    float json.load made of it, written out without an exponent)."""
    if isinstance(x, int):
        return str(x)
    return format_decimal(Fraction(repr(float(x))))


def _header(name, description, product, relation, configured, prov: dict) -> list[str]:
    lines = ["# exactdp product file (format documented in allocations/README.md, \"Product files\").",
             "# Written by scripts/build_product_allocations.py from the production configuration.",
             'format = "exactdp-product/1"', f"name = {_q(name)}",
             f'description = """\n{description}\n"""', f"product = {_q(product)}",
             f"relation = {_q(relation)}",
             'budget_rule = "tumult-float"  # rho = exact value of the float Tumult is asked for',
             f"configured_rho = {_q(configured)}  # sum of [budgets]", "", "[provenance]"]
    lines += [f"{k} = {_q(v)}" for k, v in prov.items()]
    return lines


def _fmt_counts(d: dict) -> str:
    return "{ " + ", ".join(f"{_q(k)} = {v}" for k, v in d.items()) + " }"


def _fmt_unit(moves: dict) -> str:
    return "{ " + ", ".join(f"{_q(t)} = [{', '.join(str(s) for s in v)}]" for t, v in moves.items()) + " }"


def _total(budgets: dict) -> str:
    return format_decimal(sum((Fraction(v) for v in budgets.values()), Fraction(0)))


def format_decimal(f: Fraction) -> str:
    """The exact decimal of a Fraction whose denominator divides a power of ten."""
    n = 0
    while (f * 10**n).denominator != 1:
        n += 1
        if n > 40:
            raise ValueError(f"{f} is not a finite decimal")
    v = f * 10**n
    s = str(v.numerator).rjust(n + 1, "0")
    return s if n == 0 else f"{s[:-n]}.{s[-n:]}"


# ----------------------------------------------------------------------------- SafeTab-P
def safetab_p(cfg: dict, run: str) -> str:
    repo, commit, path = REPO["P"]
    frac = cfg["privacy_budget_p_stage_1_fraction"]
    share2 = format_decimal(1 - Fraction(_dec(frac)))
    # the code multiplies the float budget by Fraction(fraction) and by 1 - Fraction(fraction)
    # (lines 209, 630-635), i.e. by the floats of those: they must be the floats of our decimals
    assert float(Fraction(frac)) == float(Fraction(_dec(frac)))
    assert float(1 - Fraction(frac)) == float(Fraction(share2)), "stage-2 share is not the decimal 1 - fraction"
    budgets, tables, units, fixed, choices = {}, {}, {}, {}, {1: {}, 2: {}}
    for region in REGIONS[run]:
        for level in (1, 2):
            key = f"privacy_budget_p_level_{level}_{region.lower().replace('-', '_')}"
            value = cfg[key]
            if value == 0:  # budget 0: no query (safetab_p_analytics.py:514-518, 620-624)
                continue
            budgets[key] = _dec(value)
            tag = f"{region}-L{level}"
            tables[f"{tag}-stage-1"] = (key, _dec(frac), GROUPS)
            tables[f"{tag}-stage-2"] = (key, share2, GROUPS)
            units[f"adaptive@{tag}"] = {f"{tag}-stage-1": [1], f"{tag}-stage-2": [1]}
            if region in DETAILED:
                tables[f"{tag}-detailed-only"] = (key, "1", GROUPS)
                units[f"detailed-only@{tag}"] = {f"{tag}-detailed-only": [1]}
                choices[level][tag] = True
            else:
                fixed[f"adaptive@{tag}"] = GROUPS
    run_name = RUN_NAMES[run.lower()]
    prov = {
        "source": f"{repo} @ {commit[:8]}",
        "config": f"{path} (copied as ../shared/census_configs/{CONFIG_FILES['P']}), {run} run",
        "budgets": "safetab_p/tmlt/safetab_p/safetab_p_analytics.py:179-208 (per region type and level), "
                   ":209 stage-1 fraction, :630-645 stage split, :212-216 zCDP with discrete Gaussian counts",
        "flat_map": "safetab_p_analytics.py:336-344 (grouping flat map, max_num_rows = sensitivity); "
                    "safetab_utils/tmlt/safetab_utils/characteristic_iterations.py:275 (h_r*max(2, r) + h_e = 9)",
        "queries": "safetab_p_analytics.py:371-376 (partition on DETAILED_ONLY, full level budget each), "
                   ":538-548 (detailed-only: one count per group), :657-666 stage 1, :693-703 and :718-764 "
                   "stage 2 (one cell per group at every stat level)",
        "noise": "tumult/core/src/tmlt/core/utils/parameters.py:104-117 (sigma = d/sqrt(2 rho)), "
                 "measurements/aggregations.py:171-185 (discrete Gaussian, sigma^2 = noise_scale^2); "
                 "transformations/spark_transformations/map.py:748-761 (d = sqrt(9) = 3)",
        "relation": "safetab_p_analytics.py:249-250 Session.from_dataframe (Tumult Analytics 0.5.3: "
                    "AddRemoveRows(person_source, 1), session.py:189-192)",
        "cases": "choice over the detailed-only groups at the detailed regions: level 1 at most 2, level 2 "
                 "at most 9 (NMFv7-2020 iteration files); every other group is adaptive (two cells)",
    }
    desc = (f"2020 Census Detailed DHC-A (SafeTab-P), {run_name}: one person added or removed moves up to "
            f"{GROUPS} population groups per region type and iteration level; a detailed-only group moves one "
            f"cell of its count (sigma^2 = 9/(2 rho)); an adaptive group moves one cell of its stage-1 total "
            f"(share {_dec(frac)} of the budget) and one of its stage-2 table (the rest). Cases: how many of the "
            f"person's groups at the detailed regions are detailed-only.")
    lines = _header(f"safetab-p-2020-{run.lower()}", desc, f"Detailed DHC-A (SafeTab-P), {run_name}",
                    "add or remove one person record (Tumult Analytics AddRemoveRows(person_source, 1))",
                    _total(budgets), prov)
    lines += _body(budgets, tables, units, fixed)
    for level in (1, 2):
        tags = list(choices[level])
        if not tags:
            continue
        jmax = DETAILED_ONLY_MAX[level]
        opts = [{k: v for tag in tags for k, v in ((f"detailed-only@{tag}", j), (f"adaptive@{tag}", GROUPS - j))}
                for j in range(jmax + 1)]
        title = f"level-{level} detailed-only groups at " + ", ".join(tags)
        lines += ["", "[[choice]]", f"name = {_q(title)}",
                  f"labels = [{', '.join(_q(f'j={j}') for j in range(jmax + 1))}]", "options = ["]
        lines += [f"  {_fmt_counts(o)}," for o in opts] + ["]"]
    return "\n".join(lines) + "\n"


def _body(budgets, tables, units, fixed) -> list[str]:
    lines = ["", "[budgets]  # configuration key = value as written"]
    lines += [f"{_q(k)} = {_q(v)}" for k, v in budgets.items()]
    lines += ["", "[tables]  # released noisy tables: budget key, share of it, Tumult's squared L2 sensitivity"]
    for name, (key, factor, sens) in tables.items():
        extra = "" if factor == "1" else f", factor = {_q(factor)}"
        lines.append(f"{_q(name)} = {{ budget = {_q(key)}{extra}, sensitivity_sq = {sens} }}")
    small = {k: v for k, v in units.items() if len(v) <= 3}
    lines += ["", "[units]  # what one unit of the neighbour moves: table = [cell shifts]"]
    lines += [f"{_q(k)} = {_fmt_unit(v)}" for k, v in small.items()]
    for k, v in units.items():
        if k not in small:
            lines += ["", f"[units.{_q(k)}]"] + [f"{_q(t)} = [{', '.join(str(x) for x in sh)}]" for t, sh in v.items()]
    if fixed:
        lines += ["", "[fixed]  # unit counts in every case"]
        lines += [f"{_q(k)} = {v}" for k, v in fixed.items()]
    return lines


# ----------------------------------------------------------------------------- SafeTab-H
def safetab_h(cfg: dict, run: str) -> str:
    repo, commit, path = REPO["H"]
    budgets, tables, units, fixed = {}, {}, {}, {}
    for region in REGIONS[run]:
        for level in (1, 2):
            tag = f"{region}-L{level}"
            moves = {}
            for t in ("t3", "t4"):
                key = f"privacy_budget_h_{t}_level_{level}_{region.lower().replace('-', '_')}"
                if cfg[key] == 0:  # safetab_h_analytics.py:424, 459
                    continue
                budgets[key] = _dec(cfg[key])
                tables[f"{tag}-{t.upper()}"] = (key, "1", GROUPS)
                moves[f"{tag}-{t.upper()}"] = [1]
            if moves:
                units[f"household@{tag}"] = moves
                fixed[f"household@{tag}"] = GROUPS
    run_name = RUN_NAMES[run.lower()]
    prov = {
        "source": f"{repo} @ {commit[:8]}",
        "config": f"{path} (copied as ../shared/census_configs/{CONFIG_FILES['H']}), {run} run",
        "budgets": "safetab-h/safetab_h/tmlt/safetab_h/safetab_h_analytics.py:237-252, :421-440 (T3), :456-472 (T4)",
        "flat_map": "safetab_h_analytics.py:317-350 (grouping flat map of each household, max_num_rows = "
                    "sensitivity); safetab-h/safetab_utils/tmlt/safetab_utils/characteristic_iterations.py:289 (= 9)",
        "queries": "safetab_h_analytics.py:387-408 (public joins with the SafeTab-P pop-group table: one "
                   "T3 and one T4 cell per household and group, preprocessing.py:121-287), :430-434, :465-469",
        "noise": "tumult-core 0.12.0 (safetab-h/core wheel; opendp/tumult-core tag 0.12.0): "
                 "src/tmlt/core/utils/parameters.py:104-117 (sigma = d/sqrt(2 rho)), "
                 "measurements/aggregations.py:297-310, "
                 "transformations/spark_transformations/"
                 "map.py:825-839 GroupingFlatMap (d = sqrt(max_num_rows) = 3)",
        "relation": "safetab_h_analytics.py:282-287 Session.from_dataframe(unit_source, protected_change=AddOneRow())",
        "cases": "single case: every group of the household moves one T3 and one T4 cell",
    }
    desc = (f"2020 Census Detailed DHC-B (SafeTab-H), {run_name}: one household added or removed is flat-mapped "
            f"into up to {GROUPS} population groups (its householder's race and ethnicity) per region type and "
            f"iteration level, and moves one cell of the T3 (household type) and one of the T4 (tenure) table "
            f"of each group; sigma^2 = 9/(2 rho) per table.")
    lines = _header(f"safetab-h-2020-{run.lower()}", desc, f"Detailed DHC-B (SafeTab-H), {run_name}",
                    "add or remove one household record (Tumult Analytics AddOneRow on unit_source)",
                    _total(budgets), prov)
    return "\n".join(lines + _body(budgets, tables, units, fixed)) + "\n"


# ----------------------------------------------------------------------------- PHSafe
def phsafe(cfg: dict, run: str) -> str:
    repo, commit, path = REPO["PH"]
    tau = cfg["tau"]
    budgets, tables = {}, {}
    shifts_i, shifts_ii = {}, {}
    for tab, per in cfg["privacy_budget"].items():
        for region in ("usa", "state"):
            for level in (["*"] if tab in PH_ONLY_STAR else PH_LEVELS):
                key = f"{tab}.{region}_{level}"
                value = per[f"{region}_{level}"]
                if value == 0:  # private_tabulations.py:1111-1116
                    continue
                budgets[key] = _dec(value)
                if tab in PH_DENOMS:
                    tables[key] = (key, "1", 4)  # units only: d = 2 (AddMaxRows(2))
                    shifts_i[key] = shifts_ii[key] = [2]
                    continue
                t = tau[tab]
                tables[key] = (key, "1", (2 * t + 2) ** 2)  # PrivateJoin: tau*1*2 + 1*2*1
                if tab in PH_TAU6:
                    shifts_i[key] = shifts_ii[key] = [2 * t + 1, 1]
                elif tab in ("PH2", "PH7"):  # cell fixed by the unit: a displaced member cancels
                    shifts_i[key], shifts_ii[key] = [2 * t + 1], [2 * t]
                else:  # PH1_num, PH4: the cell depends on the person's age
                    shifts_i[key], shifts_ii[key] = [2 * t + 1], [2 * t + 1, 1]
    units = {"neighbour-small-household": shifts_i, "neighbour-full-household": shifts_ii}
    run_name = RUN_NAMES[run]
    prov = {
        "source": f"{repo} @ {commit[:8]}",
        "config": f"{path.format(run=run)} (copied as ../shared/census_configs/{CONFIG_FILES['PH-' + run]})",
        "budgets": "phsafe/phsafe/tmlt/phsafe/private_tabulations.py:1006-1034, :1105-1136 (one evaluate per "
                   "tabulation, region and iteration level with a nonzero budget)",
        "relation": "private_tabulations.py:1037-1052: persons AddOneRow() and units AddMaxRows(2), together "
                    "(Tumult Analytics 0.8.3 session.py:132-164, a Conjunction)",
        "sensitivity": "join tables: PrivateJoin stability tau_l*s_r*d_r + tau_r*s_l*d_l = tau*1*2 + 1*2*1 "
                       "(tumult-core 0.12.0 join.py:722-749; DropExcess(tau) -> TRUNCATE, s = 2; DropNonUnique "
                       "-> DROP, tau = s = 1: analytics _transformation_visitor.py:752-758); units-only "
                       "denominators: d = 2",
        "cells": "private_tabulations.py:113-368 (cell maps), :384-933 (queries); truncation keeps tau rows "
                 "per household by a hash of the row (tumult-core 0.12.0 utils/truncation.py:91-162)",
        "cases": "worst-case neighbours (allocations/README.md): two identical households' unit rows and one "
                 "person removed; case 1: the person's household has at most 10 members (PH2/PH7 move 2tau+1), "
                 "case 2: it is full (a truncated member re-enters: PH1_num/PH4 gain a cell, PH2/PH7 lose one)",
    }
    desc = (f"2020 Census Supplemental DHC (PHSafe), {run_name}: Tumult's neighbour adds or removes one person "
            f"row and up to two unit (household) rows. Each join table (tau = 10, or 6 for PH3 and PH6) has "
            f"sigma^2 = (2 tau + 2)^2/(2 rho); the worst neighbour moves one of its cells by 2 tau + 1 (two "
            f"identical households of tau counted members and the person), PH3/PH6 also a second cell by 1 "
            f"(a truncated member re-enters); the units-only denominators move one cell by 2 (sigma^2 = 2/rho).")
    lines = _header(f"phsafe-2020-{run}", desc, f"Supplemental DHC (PHSafe), {run_name}",
                    "add or remove one person row and up to two unit rows (Tumult Analytics AddOneRow on "
                    "persons and AddMaxRows(2) on units)", _total(budgets), prov)
    lines += _body(budgets, tables, units, {})
    lines += ["", "[[choice]]", 'name = "the removed person\'s household"',
              'labels = ["at most 10 members (not truncated)", "more than 10 members (truncated)"]',
              "options = [", '  { "neighbour-small-household" = 1 },', '  { "neighbour-full-household" = 1 },', "]"]
    return "\n".join(lines) + "\n"


def build(configs: Path) -> dict:
    """{file name: text} of every built-in product file."""
    def load(key):
        return json.loads((configs / CONFIG_FILES[key]).read_text())

    p, h = load("P"), load("H")
    out = {}
    for run in ("US", "PR"):
        out[f"safetab-p-2020-{run.lower()}.toml"] = safetab_p(p, run)
        out[f"safetab-h-2020-{run.lower()}.toml"] = safetab_h(h, run)
    for run in ("us", "pr"):
        out[f"phsafe-2020-{run}.toml"] = phsafe(load(f"PH-{run}"), run)
    return out


def main(argv=None) -> int:
    shared = Path(os.environ.get("EXACTDP_SHARED", ROOT.parent / "shared"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", type=Path, default=shared / "census_configs")
    ap.add_argument("--out", type=Path, default=ROOT / "allocations" / "products")
    args = ap.parse_args(argv)
    if not args.configs.is_dir():
        print(f"no configuration folder {args.configs} (set EXACTDP_SHARED or --configs)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in build(args.configs).items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
