"""``exactdp tune``: tune an allocation's noise variances against an exact (ε, δ) target."""

from __future__ import annotations

import sys

from exactdp.cli._common import decimal_str, emit_result, rational_type, rel_tol_type, set_design

__all__ = ["register"]

DESCRIPTION = (
    "Choose one rational multiplier on the noise variances of each level, query or (level, query) cell so "
    "that every neighbour pair of the allocation keeps a certified delta(eps) <= DELTA, minimising the total "
    "weighted noise variance (or finding the largest uniform reduction). Paths are rebuilt by the input's spine "
    "rule. Every accepted design is evaluated exactly as reported; the result is re-evaluated on every pair "
    "and its worst pair enclosed by an Arb certificate. Writes report.html, the tuned allocation (tuned.toml), "
    "sigma^2 tables, the trace of every evaluation, certified profiles and figures into --out; --resume finishes a "
    "killed run; the folder is locked while a run lasts."
)


def _bounds(text: str):
    import argparse

    lo, sep, hi = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"--bounds={text!r}: expected LO:HI, e.g. 1/100:100")
    return (rational_type("--bounds", positive=True)(lo), rational_type("--bounds", positive=True)(hi))


def register(subparsers) -> None:
    p = subparsers.add_parser("tune", help="tune variances per level/query/cell against an exact (ε, δ) target",
                              description=DESCRIPTION)
    p.add_argument("--allocation", default="dhc-persons-2020", metavar="NAME|FILE",
                   help="built-in allocation or allocation file (default dhc-persons-2020)")
    p.add_argument("--delta", required=True, type=rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True),
                   metavar="D", help="target δ in (0, 1), exact")
    p.add_argument("--eps", type=rational_type("--eps", lo=0), metavar="E",
                   help="target ε, exact (default: the Bureau's ε_BS(δ) at the input's ρ, exactly)")
    p.add_argument("--vary", choices=("level", "query", "cell"), default="level",
                   help="one variance multiplier per level (default), per query, or per (level, query) cell")
    p.add_argument("--objective", choices=("variance", "uniform"), default="variance",
                   help="minimise the total weighted variance Σ w·σ² (default), or find the largest uniform "
                        "variance reduction (what exactdp calibrate answers)")
    p.add_argument("--weights", metavar="FILE",
                   help="TOML weights: [levels] name = w, [queries] name = w, [cells.LEVEL] query = w "
                        "(exact rationals; a cell's weight is level × query unless given; default all 1)")
    p.add_argument("--no-worse", action="store_true",
                   help="no cell's variance may exceed the input's, on any path (an adoptable Pareto improvement)")
    p.add_argument("--bounds", type=_bounds, default=None, metavar="LO:HI",
                   help="bounds of every variance multiplier (default 1/1000:1000)")
    p.add_argument("--refine", type=int, default=1, metavar="K",
                   help="grid refinement: cells on a K times finer grid (default 1; finer grids cost lattice size)")
    p.add_argument("--out", default="exactdp-tune", metavar="DIR", help="output folder (default ./exactdp-tune)")
    p.add_argument("--resume", action="store_true", help="finish the run already in --out (same settings)")
    p.add_argument("--jobs", type=int, default=None, metavar="N", help="parallel workers (default: all cores)")
    p.add_argument("--backend", choices=("loky", "dask", "ray"), default="loky",
                   help="where the exact evaluations run (as for exactdp sweep)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler or ray cluster address")
    p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10, help="certified relative accuracy of each tail")
    p.add_argument("--no-profile", action="store_true",
                   help="skip the certified profiles (sweeps) of input and result and the ε–δ figure")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print result.json (and the folder) as one JSON object")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from exactdp.numerics.exact import InputError
    from exactdp.runs.files import SweepDirError
    from exactdp.tune import tune
    from exactdp.tune.problem import DEFAULT_BOUNDS

    jobs = args.jobs if args.jobs is not None else -1  # all cores; refused beyond them (as for a sweep)
    if args.refine < 1:
        raise InputError("--refine", args.refine, "must be a positive integer")

    set_design({"allocation": str(args.allocation), "vary": args.vary, "objective": args.objective,
                "no_worse": bool(args.no_worse)})

    def say(msg):
        if not args.quiet:
            sys.stderr.write(f"exactdp tune: {msg}\n")
            sys.stderr.flush()

    try:
        res = tune(args.allocation, args.delta, args.eps, vary=args.vary, objective=args.objective,
                   weights=args.weights, bounds=args.bounds or DEFAULT_BOUNDS, no_worse=args.no_worse, out=args.out,
                   backend=args.backend, jobs=jobs, scheduler=args.scheduler, resume=args.resume, refine=args.refine,
                   rel_tol=args.rel_tol, profile=not args.no_profile, plots=not args.no_plots, progress=say)
    except SweepDirError as exc:
        raise InputError("--out", str(args.out), str(exc)) from None
    r = res.result
    if args.json:
        after = r["max_delta_after"]
        point = {"epsilon": r["target"]["eps_decimal"], "delta": after["upper"], "delta_target": r["target"]["delta"],
                 "lower": after["lower"], "upper": after["upper"], "estimate": after["estimate"],
                 "error_bound": decimal_str(res.error_bound), "pair": after["pair"]}
        design = {"allocation": r["allocation"]["input"], "input_content_hash": r["allocation"]["input_content_hash"],
                  "vary": args.vary, "objective": args.objective, "no_worse": bool(args.no_worse),
                  "design_id": r["design"]}
        emit_result([point], design=design, out=str(res.out), **{k: v for k, v in r.items() if k != "design"})
        return 0
    o, before, after, cert = r["objective"], r["max_delta_before"], r["max_delta_after"], r["certificate"]
    print(f"exactdp tune: {r['allocation']['input']} -> {res.out / 'tuned.toml'} ({r['problem']['objective']}, "
          f"per {r['problem']['vary']}{', no worse' if r['problem']['no_worse'] else ''})")
    print(f"target: delta(eps) <= {r['target']['delta']} at eps = {r['target']['eps_decimal']} on every one of "
          f"{r['allocation']['pairs']} pairs")
    print(f"objective: {o['before']} -> {o['after']} ({o['change_percent']} %)")
    print(f"max delta over pairs: input {before['upper']} (pair {before['pair']}); tuned {after['upper']} "
          f"(pair {after['pair']}); Arb enclosure [{cert['lower']}, {cert['upper']}]")
    print(f"files: report.html, tuned.toml, sigma2.csv, groups.csv, trace.csv, trace/, result.json"
          f"{', profile-before/, profile-after/' if not args.no_profile else ''}"
          f"{', plots/' if not args.no_plots else ''}, manifest.json in {res.out}")
    return 0
