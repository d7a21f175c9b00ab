"""``exactdp census-2020``: every 2020 Census product and their composition, one page."""

from __future__ import annotations

from exactdp.cli._common import check_out_folder, emit_result, int_type, rel_tol_type, set_design
from exactdp.cli.sweep import MAX_JOBS
from exactdp.numerics.errors import InputError

__all__ = ["register"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "census-2020", help="every 2020 Census product and their composition: one table, one page to cite",
        description="The exact privacy of every formally private 2020 Census product exactdp models, at δ = 1e-10: "
                    "P.L. 94-171 persons and units, DHC persons (the maximum over all 946 neighbour pairs, by a "
                    "sweep) and units, SafeTab-P, SafeTab-H and PHSafe (US and PR), and each run's portfolio (one "
                    "neighbour of every product, composed). Writes census_2020.csv, a figure and report.html "
                    "into --out (the DHC persons sweep into OUT/dhc-persons).")
    p.add_argument("--out", default="exactdp-census-2020", metavar="DIR",
                   help="output folder (default exactdp-census-2020)")
    p.add_argument("--dhc-sweep", metavar="FOLDER",
                   help="reuse a finished sweep folder of dhc-persons-2020 (exactdp sweep) instead of running one")
    p.add_argument("--dhc-pairs", metavar="SPEC",
                   help="a quick partial DHC persons sweep of these pairs (e.g. 13-13,6-6); the page then says "
                        "that its DHC persons row is not the guarantee")
    p.add_argument("--budget-rule", choices=("tumult-float", "decimal"),
                   help="how the Tumult products' budgets become exact ρ (default: each file's own, tumult-float)")
    p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10, metavar="TOL",
                   help="certified relative accuracy of each tail (default 1e-10)")
    p.add_argument("--jobs", type=int_type("--jobs", -1, MAX_JOBS), default=-1, metavar="N",
                   help="workers of the DHC persons sweep (default -1: all cores, as exactdp sweep)")
    p.add_argument("--no-plots", action="store_true", help="do not draw the figure")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from pathlib import Path

    from exactdp.cli._progress import CaseProgress
    from exactdp.report.census2020 import CENSUS_FILE, census_csv_rows, write_census_report
    from exactdp.studies.census2020 import PLAN, census_2020

    if args.jobs == 0:
        raise InputError("--jobs", args.jobs, "must be a positive integer or -1 (all cores)")
    set_design({"delta": "1e-10", "budget_rule": args.budget_rule, "dhc_sweep": args.dhc_sweep,
                "dhc_pairs": args.dhc_pairs or ("reused" if args.dhc_sweep else "all")})
    check_out_folder(args.out, "census-2020")
    bar = CaseProgress("exactdp census-2020", args.quiet or args.json, unit="product")
    done = [0]

    def step(_key):
        done[0] += 1
        bar(done[0], len(PLAN))

    try:
        res = census_2020(args.out, dhc_sweep=args.dhc_sweep, dhc_pairs=args.dhc_pairs, budget_rule=args.budget_rule,
                          rel_tol=args.rel_tol, jobs=args.jobs, quiet=args.quiet or args.json, progress=step)
    finally:
        bar.close()
    page = write_census_report(args.out, res, plots=not args.no_plots)
    rows = census_csv_rows(res)
    partial = not res.row("dhc-persons-2020").complete
    if args.json:
        emit_result(rows, out=str(Path(args.out)), report=str(page), csv=str(Path(args.out) / CENSUS_FILE),
                    dhc_sweep=str(res.dhc_sweep), partial=partial)
        return 0
    for r in rows:
        print(f"{r['run']} {r['product']}: ρ = {r['configured_rho']}; ε Bureau {r['eps_bureau'][:10]}, exact ε ≤ "
              f"{r['eps_cite']}; exact δ at the Bureau's ε ≤ {r['delta_cite']}"
              + ("  [PARTIAL: not the guarantee]" if r["complete"] == "0" else ""))
    print(f"wrote {page}")
    return 0
