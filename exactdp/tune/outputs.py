"""The files of a tune run: the tuned allocation, the σ² tables, the trace, the result.

Every file here is a pure function of the run's certified numbers (no timings, no host
data), so a resumed run writes the same bytes as an uninterrupted one; timings go to
``manifest.json`` only.

* ``tuned.toml`` — the tuned allocation (``exactdp-allocation/1``, provenance: input and
  its content hash, target, objective, groups, grid, exactdp version);
* ``sigma2.csv`` — every (level, query) cell of the full chain: weight, ρ and σ² before and
  after (exact ``p/q`` and decimals), the variance multiplier and the change in percent;
* ``groups.csv`` — per level and per query: Σσ² and Σwσ² before and after, and the range
  of the cells' multipliers;
* ``trace.csv`` — every batch of exact evaluations (purpose, design, pairs, the largest
  certified δ and its pair, the design's objective and total ρ);
* ``result.json`` — the summary: objective before and after, the largest certified δ of the
  input and of the result over every pair, the Arb enclosure of the result's worst pair,
  the stages of the search.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath

from exactdp.numerics.exact import fraction_str
from exactdp.numerics.precision import DPS_RESULT, to_mpf
from exactdp.runs.files import atomic_write_text
from exactdp.sweep.pair import fmt
from exactdp.tune.trace import dump_json

__all__ = ["dec", "write_tables", "write_trace_csv", "write_result", "cell_sigma2", "SIGMA2_COLUMNS", "GROUP_COLUMNS"]

SIGMA2_COLUMNS = ("level", "query", "group", "weight", "rho_before", "rho_after", "sigma2_before", "sigma2_after",
                  "variance_multiplier", "change_percent")
GROUP_COLUMNS = ("kind", "name", "sigma2_sum_before", "sigma2_sum_after", "weighted_before", "weighted_after",
                 "change_percent", "multiplier_min", "multiplier_max")


def dec(x, digits: int = 20) -> str:
    """Decimal text (``digits`` significant digits) of an exact rational or mpf."""
    with mpmath.workdps(DPS_RESULT):
        return fmt(to_mpf(x) if isinstance(x, (int, Fraction)) else mpmath.mpf(x), digits)


def _csv(rows) -> str:
    return "".join(",".join(r) + "\n" for r in rows)


def cell_sigma2(problem, design) -> dict:
    """``{(level, query): σ²}`` of the full chain's measured cells (exact)."""
    a = problem.alloc
    return {(a.levels[x], a.queries[q]): 1 / problem.rho(design, k) for k, (x, q) in enumerate(problem.cells)}


def write_tables(out: Path, problem, before, after) -> None:
    """``sigma2.csv`` and ``groups.csv`` of designs ``before`` and ``after``."""
    a = problem.alloc
    rows: list[tuple[str, ...]] = [SIGMA2_COLUMNS]
    for k, (x, q) in enumerate(problem.cells):
        rb, ra = problem.rho(before, k), problem.rho(after, k)
        m = rb / ra
        rows.append((a.levels[x], _quote(a.queries[q]), _quote(problem.groups[problem.group_of[k]][0]),
                     fraction_str(problem.cell_weights[k]), fraction_str(rb), fraction_str(ra), dec(1 / rb),
                     dec(1 / ra), dec(m), dec((m - 1) * 100, 12)))
    atomic_write_text(out / "sigma2.csv", _csv(rows))
    rows = [GROUP_COLUMNS]
    for kind, axis, names in (("level", 0, a.levels), ("query", 1, a.queries)):
        for idx, name in enumerate(names):
            ks = [k for k, c in enumerate(problem.cells) if c[axis] == idx]
            if not ks:
                continue
            sb = sum((1 / problem.rho(before, k) for k in ks), Fraction(0))
            sa = sum((1 / problem.rho(after, k) for k in ks), Fraction(0))
            wb = sum((problem.cell_weights[k] / problem.rho(before, k) for k in ks), Fraction(0))
            wa = sum((problem.cell_weights[k] / problem.rho(after, k) for k in ks), Fraction(0))
            ms = [problem.rho(before, k) / problem.rho(after, k) for k in ks]
            change = dec((wa / wb - 1) * 100, 12) if wb else "0"
            rows.append((kind, _quote(name), dec(sb), dec(sa), dec(wb), dec(wa), change, dec(min(ms)), dec(max(ms))))
    atomic_write_text(out / "groups.csv", _csv(rows))


def _quote(text: str) -> str:
    """A name as one CSV field (the query names hold blanks and ``*``, never commas here;
    a comma or quote is quoted the RFC 4180 way)."""
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if ("," in text or '"' in text) else text


def write_trace_csv(out: Path, trace, problem) -> None:
    """``trace.csv``: one row per batch."""
    rows = [("batch", "purpose", "design", "x", "pairs", "max_delta_upper", "max_pair", "status", "objective",
             "total_rho")]
    d = trace.target.delta
    for rec in trace.records:
        res = {p: Fraction(v[1]) for p, v in rec["results"].items()}
        lows = [Fraction(v[0]) for v in rec["results"].values()]
        top = max(res, key=lambda p: (res[p], p))
        status = "infeasible" if any(lo > d for lo in lows) else ("feasible" if all(u <= d for u in res.values())
                                                                   else "undecided")
        design = trace.designs.get(rec["design"])
        obj = dec(problem.objective_value(design), 15) if design is not None else ""
        rho = fraction_str(problem.total_rho(design)) if design is not None else ""
        rows.append((str(rec["batch"]), rec["purpose"], rec["design"], rec["note"].get("x", ""), str(len(res)),
                     dec(res[top], 15), top, status, obj, rho))
    atomic_write_text(out / "trace.csv", _csv(rows))


def write_result(out: Path, result: dict) -> None:
    atomic_write_text(out / "result.json", dump_json(result))
