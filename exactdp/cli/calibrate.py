"""``exactdp calibrate``: the largest certified variance reduction meeting an (ε, δ) target, and the σ² to deploy."""

from __future__ import annotations

import sys

from exactdp.cli._common import check_out_folder, decimal_str, emit_result, rational_type, rel_tol_type, set_design

__all__ = ["register"]

_DESC = (
    "Find the smallest uniform scaling c of the noise variances (σ² → c·σ², c rational) whose exact "
    "privacy profile still meets the target δ(ε_target) ≤ δ, using certified upper bounds; report the "
    "variance reduction 1 − c with its certified bracket and the σ² to deploy (c·σ² of every scaled cell, exact; "
    "c_infeasible·σ² is certified to miss the target). Default target ε: the Bureau's "
    "Bun–Steinke ε = ρ + 2·sqrt(ρ·ln(1/δ)). With --allocation and neither --pair nor --level the "
    "whole release is calibrated (max over all pairs: about a minute per δ for the 946 DHC pairs; "
    "with --level from seconds to ~6 minutes; progress lines go to stderr). A design mixing kinds "
    "(--dlaplace, --rr, --approx, --gaussian or a mechanism file with kind rows) rescales one kind's noise, "
    "--kind (default discrete_laplace: its scales b → c·b; discrete_gaussian or gaussian: σ² → c·σ²), beside the "
    "rest of the design, for an explicit --eps."
)


def register(subparsers) -> None:
    from exactdp.cli._designs import add_design_arguments

    p = subparsers.add_parser("calibrate", help="certified variance reduction at a privacy target", description=_DESC)
    add_design_arguments(p, kinds=True)
    p.add_argument("--kind", choices=("discrete_laplace", "discrete_gaussian", "gaussian"), default=None,
                   help="a mixed design: the kind whose noise is rescaled by c (discrete_laplace scales, the default, "
                        "or discrete_gaussian / gaussian variances); the other groups are kept")
    p.add_argument("--level", metavar="LEVEL", help="scale only this geographic level's queries (allocations)")
    p.add_argument("--delta", dest="deltas", action="append", required=True,
                   type=rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True), metavar="D",
                   help="target δ in (0, 1), exact (repeatable: one calibration each)")
    p.add_argument("--eps", type=rational_type("--eps", lo=0), metavar="E",
                   help="target ε (exact rational); default the Bureau's ε_BS(δ) at the design's ρ")
    p.add_argument("--width", type=rational_type("--width", positive=True), default=None, metavar="W",
                   help="width of the certified bracket on the reduction (default 1e-6)")
    p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10, help="certified relative accuracy of each tail")
    p.add_argument("--out", metavar="DIR",
                   help="also write calibration.csv, deploy.csv (the σ² to deploy), figures and report.html into DIR")
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points"}')
    p.set_defaults(func=_run_checked)


def _run_checked(args) -> int:
    from exactdp.calibration.calibrate import DEFAULT_WIDTH
    from exactdp.calibration.deploy import calibrate
    from exactdp.numerics.exact import InputError

    width = args.width or DEFAULT_WIDTH
    for d in args.deltas:
        if not 0 < d < 1:
            raise InputError("--delta", str(d), "must lie in (0, 1)")
    if args.eps is not None and args.eps < 0:
        raise InputError("--eps", str(args.eps), "must be >= 0")
    check_out_folder(args.out, "calibrate")
    pair = None
    design: object
    from exactdp.cli._designs import allocation_pair, design_spec

    set_design({**design_spec(args), **({"level": args.level} if args.level else {})})
    if args.allocation:
        from exactdp.census.allocations import load_allocation

        if args.sigma2 or args.mechanisms or args.dlaplace or args.rr or args.approx or args.gaussian:
            raise InputError("design", None, "give exactly one of --sigma2, --mechanisms or --allocation")
        if args.kind:
            raise InputError("--kind", args.kind, "rescales one kind of a mixed design; an allocation is discrete "
                                                  "Gaussians only")
        design = load_allocation(args.allocation)
        if args.level is not None and args.level not in design.levels:
            raise InputError("--level", args.level, f"unknown level (levels are {', '.join(design.levels)})")
        pair = allocation_pair(args, design)
    else:
        from exactdp.cli._designs import design_from_args

        if args.level is not None:
            raise InputError("--level", args.level, "needs --allocation")
        from exactdp.mechanisms import Composition

        design = design_from_args(args, mixed=True)
        if args.kind is not None or not isinstance(design, Composition):
            # a design mixing kinds: one kind's noise rescaled beside the rest (no per-cell σ² to list)
            if args.eps is None:
                raise InputError("--eps", None, "a mixed design (or --kind) needs an explicit target ε")
            from exactdp.calibration.mixed import calibrate_kind

            results = [calibrate_kind(design, d, args.eps, kind=args.kind or "discrete_laplace", width=width,
                                      rel_tol=args.rel_tol) for d in args.deltas]
            return _print_results(args, results, None, pair)
    cals = [calibrate(design, d, args.eps, level=args.level, pair=pair, width=width, rel_tol=args.rel_tol,
                      progress=lambda msg: sys.stderr.write(f"exactdp calibrate: {msg}\n"))
            for d in args.deltas]
    return _print_results(args, [c.scale for c in cals], cals, pair)


def _print_results(args, results, cals, pair) -> int:
    """Write the report and print the results (``cals``: the σ² to deploy per target, or ``None``)."""
    if args.out:
        from exactdp.report import write_calibration_report

        write_calibration_report(args.out, results, design=_design_words(args, pair),
                                 epsilon_given=args.eps is not None, deploy=cals)
    objs = [r.as_json() for r in results]
    if cals is not None:
        objs = [{**o, "sigma2_deploy": _deploy_json(c)} for o, c in zip(objs, cals)]
    if args.json:
        emit_result(objs)
        return 0
    print(f"variance calibration ({results[0].scope}); reduction = 1 − c, c certified to meet the target")
    cols = ("delta", "target eps", "reduction", "bracket lower", "bracket upper", "c (scale)", "evals")
    print("  ".join(f"{c:>22}" for c in cols))
    for r, o in zip(results, objs):
        row = (decimal_str(r.target_delta, 6), decimal_str(r.target_epsilon, 12), decimal_str(r.variance_reduction, 12),
               decimal_str(r.variance_reduction_lower, 12), decimal_str(r.variance_reduction_upper, 12),
               o["scale"], str(r.evaluations))
        print("  ".join(f"{v:>22}" for v in row))
    for line in _deploy_lines(cals, args.out) if cals is not None else ():
        print(line)
    return 0


#: cells listed in the text output (all of them: --json, and deploy.csv with --out)
_SHOWN = 6


def _deploy_json(cal) -> list:
    """Every cell's σ² (and ρ) to deploy, exact, with the bracket's other side."""
    from exactdp.report.numbers import to_text

    return [{**row, "sigma2_deploy_decimal": to_text(cal.sigma2[k], 20, "up")} for k, row in enumerate(cal.rows())]


def _deploy_lines(cals, out) -> list[str]:
    """The σ² to deploy, per target δ, in words (the first cells; all in --json and deploy.csv)."""
    from exactdp.numerics.exact import fraction_str
    from exactdp.report.numbers import to_text

    lines = ["σ² to deploy = c × σ² of every scaled cell (certified to meet the target; c_infeasible × σ² is "
             "certified to miss it; deploy the exact p/q):"]
    for cal in cals:
        r = cal.scale
        lines.append(f"  delta = {decimal_str(r.target_delta, 6)}: c = {fraction_str(r.upper)}")
        shown = [k for k, on in enumerate(cal.scaled) if on]
        for k in shown[:_SHOWN]:
            cell = "/".join(cal.cells[k]) if isinstance(cal.cells[k], tuple) else cal.cells[k]
            lines.append(f"    {cell}: sigma2 = {fraction_str(cal.sigma2[k])} = {to_text(cal.sigma2[k], 12, 'up')}"
                         f" (misses the target at {to_text(cal.sigma2_infeasible[k], 12, 'down')})")
        if len(shown) > _SHOWN:
            where = f"{out}/deploy.csv and " if out else ""
            lines.append(f"    … and {len(shown) - _SHOWN} more scaled cells ({where}--json list them all)")
    return lines


def _design_words(args, pair) -> str:
    """The calibrated design in words, for the report (``pair``: the allocation's one pair, or ``None``)."""
    if args.allocation:
        where = f"pair {pair[0]}-{pair[1]}" if pair is not None else "all pairs"
        return f"allocation {args.allocation}, {where}" + (f", level {args.level}" if args.level else "")
    return "the design " + " ".join(f"--sigma2 {s}" for s in args.sigma2 or ()) + (
        f" --mechanisms {args.mechanisms}" if args.mechanisms else "")
