#!/usr/bin/env python
"""How many population groups one record reaches in SafeTab-P / SafeTab-H, from the
production iteration files (not shipped with exactdp; they are in the public repositories).

Usage::

    python scripts/safetab_iteration_counts.py DIR

DIR holds ``race-characteristic-iterations.txt``, ``ethnicity-characteristic-iterations.txt``
and ``race-and-ethnicity-code-to-iteration.txt`` (e.g. ``configs/safetab-p/NMFv7-2020/`` of
uscensusbureau/DAS_2020_DDHCA_Production_Code @ 6158781c, or ``configs/safetab-h/NMFv5/``
of DAS_2020_DDHCB_Production_Code @ 68a271c2).  For each level and granularity it prints:

* ``h_r``, ``h_e`` and Tumult's ``max_num_rows = h_r·max(2, 8) + h_e``, as
  ``safetab_utils/characteristic_iterations.py`` computes them (the most iterations one race
  code, or one ethnicity code, maps to; level-0 rows dropped);
* ``j_max``: an upper bound on the detailed-only iterations one record (up to 8 race codes
  and one ethnicity code) reaches: the "alone" iterations of its codes intersect (at most
  one), the "alone or in combination" ones unite, plus its ethnicity's.

The production files give h_r = h_e = 1 everywhere (so 9 groups) and j_max = 2 (level 1),
9 (level 2) at the detailed granularity, 0 at the coarse one: the ``GROUPS`` and
``DETAILED_ONLY_MAX`` of ``scripts/build_product_allocations.py``.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path

MAX_RACE_CODES = 8


def _rows(folder: Path, name: str) -> list[dict]:
    with open(folder / f"{name}.txt", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="|"))


def counts(folder) -> dict:
    """{(level, granularity): (h_r, h_e, max_num_rows, j_max)} for levels "1", "2"."""
    folder = Path(folder)
    race = {r["ITERATION_CODE"]: r for r in _rows(folder, "race-characteristic-iterations") if r["LEVEL"] != "0"}
    eth = {r["ITERATION_CODE"]: r for r in _rows(folder, "ethnicity-characteristic-iterations") if r["LEVEL"] != "0"}
    code_to_its = defaultdict(set)
    for r in _rows(folder, "race-and-ethnicity-code-to-iteration"):
        code_to_its[r["RACE_ETH_CODE"]].add(r["ITERATION_CODE"])
    out = {}
    for level in ("1", "2"):
        for gran in ("detailed", "coarse"):
            def ok(r, level=level, gran=gran):  # detailed regions drop coarse-only iterations, coarse detailed-only
                return r["LEVEL"] == level and r["COARSE_ONLY" if gran == "detailed" else "DETAILED_ONLY"] == "False"

            alone = {k for k, r in race.items() if ok(r) and r["ALONE"] == "True"}
            combo = {k for k, r in race.items() if ok(r) and r["ALONE"] == "False"}
            ethn = {k for k, r in eth.items() if ok(r)}
            only = {k for k, r in {**race, **eth}.items() if ok(r) and r["DETAILED_ONLY"] == "True"}

            def h(its):
                c = Counter(code for code, mapped in code_to_its.items() for _ in mapped & its)
                return max(c.values(), default=0)

            h_r, h_e = max(h(alone), h(combo)), h(ethn)
            eth_only = int(any(m & ethn & only for m in code_to_its.values()))
            combo_only = set().union(*(m & combo & only for m in code_to_its.values()))
            j = min(MAX_RACE_CODES, len(combo_only)) + eth_only
            for a in alone & only:  # all codes share the alone iteration a
                shared = set().union(*(m & combo & only for m in code_to_its.values() if a in m))
                j = max(j, 1 + min(MAX_RACE_CODES, len(shared)) + eth_only)
            out[(level, gran)] = (h_r, h_e, h_r * max(2, MAX_RACE_CODES) + h_e, j)
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for (level, gran), (h_r, h_e, rows, j) in counts(argv[0]).items():
        print(f"level {level} {gran:8s}: h_r = {h_r}, h_e = {h_e}, max_num_rows = {rows}, detailed-only j_max = {j}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
