"""``exactdp sweep``: every neighbour pair of an allocation (the DHC persons main job).

With no arguments it runs the 946-pair 2020 DHC persons sweep into ``./exactdp-results``.
"""

from __future__ import annotations

import argparse

from exactdp.cli._common import add_pair_arguments, emit_result, int_type, rational_type, rel_tol_type, set_design

__all__ = ["register"]

#: the most workers --jobs names (a cluster's; local workers: at most one per core)
MAX_JOBS = 100_000

DESCRIPTION = (
    "Exact privacy of every neighbour pair (path i -> path j) of an allocation: for each target δ "
    "the Bureau's ε (Bun-Steinke), the exact δ at that ε and the exact ε at that δ, each with a "
    "certified error bound; each pair's f-DP trade-off curve; then the overall (max over pairs) "
    "curves, the trade-off envelope, a manifest and plots. Finished pairs are written atomically; "
    "--resume finishes an interrupted sweep. Outputs do not depend on --jobs or --backend. The output "
    "folder is locked while a sweep runs: a second sweep on the same --out stops at once (exit status 2)."
)


def register(subparsers) -> None:
    p = subparsers.add_parser("sweep", help="exact accounting of all neighbour pairs of an allocation (main job)",
                              description=DESCRIPTION)
    p.add_argument("--allocation", default="dhc-persons-2020", metavar="NAME|FILE",
                   help="built-in allocation or allocation file (default dhc-persons-2020)")
    p.add_argument("--out", default="exactdp-results", metavar="DIR",
                   help="output folder (default ./exactdp-results); locked while the sweep runs, so a second "
                        "sweep on the same folder fails at once with exit status 2")
    p.add_argument("--jobs", type=int_type("--jobs", -1, MAX_JOBS), default=None, metavar="N",
                   help="parallel workers (default: all cores; -1 also means all cores; local workers at most one "
                        "per core)")
    add_pair_arguments(p, many=True, default="all")
    p.add_argument("--deltas", action="append", default=[], metavar="D[,D...]",
                   help="extra target δ beside the default 42 (exact decimals, e.g. 1e-40; repeatable)")
    p.add_argument("--only-deltas", action="store_true",
                   help="use only the --deltas given, not the default 42")
    p.add_argument("--resume", action="store_true", help="finish the sweep already in --out (same settings)")
    p.add_argument("--backend", choices=("loky", "dask", "ray"), default="loky",
                   help="where the pairs run: loky processes on this machine (default), a dask cluster "
                        "(needs --scheduler), or ray (a private local ray instance, or the cluster at --scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="dask scheduler address (required with --backend dask, e.g. tcp://10.0.0.5:8786) or ray "
                        "cluster address (optional with --backend ray, e.g. auto or ray://10.0.0.5:10001)")
    p.add_argument("--with-pl94", metavar="SPEC", nargs="?", const="all",
                   help="also the whole release for these pairs (default: all): DHC pair composed with the "
                        "P.L. 94-171 persons full chain, beside the Bureau's ρ-sum bound (release.csv); "
                        "certified brackets from the big-lattice accountant (lattice scale ~1.6e23)")
    p.add_argument("--tradeoff-half", type=int_type("--tradeoff-half", 2, None), default=400, metavar="N",
                   help="trade-off vertices per side of the symmetric threshold set (default 400: ≈801 vertices; "
                        "the cost grows with it and is checked against the budget)")
    p.add_argument("--alpha-min", default="1e-20", metavar="A", type=_alpha_min,
                   help="smallest type-I error the trade-off vertices reach, in [1e-30, 1) (default 1e-20)")
    p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10,
                   help="certified relative accuracy of each tail (default 1e-10)")
    p.add_argument("--lam-step-sd", type=float, default=1.0, metavar="X",
                   help="spacing of the quadrature tilts in standard deviations (default 1; speed only, "
                        "every bound is certified for the tilt used)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else one line per tenth of the pairs or per minute)")
    p.add_argument("--json", action="store_true",
                   help='print the results as one JSON object {"command", "design", "points", ...}: a point per '
                        'target δ (the headline)')
    p.add_argument("--certify-headline", action="store_true",
                   help="also enclose the headline (max over pairs of δ at the Bureau's ε and of ε at each δ) by "
                        "Arb ball arithmetic and write the enclosures into manifest.json")
    p.set_defaults(func=_run)


def _alpha_min(text: str) -> str:
    """``--alpha-min``: an exact value in [1e-30, 1) (the trade-off thresholds' probit
    scale, at 30 digits, ends below it), kept as typed (the settings parse it)."""
    from exactdp.sweep.plan import ALPHA_MIN_LOWEST

    rational_type("--alpha-min", lo=ALPHA_MIN_LOWEST, hi=1, hi_open=True)(text)
    return text


def _run(args) -> int:
    from exactdp.numerics.exact import InputError
    from exactdp.report import write_sweep_report
    from exactdp.runs.files import SweepDirError
    from exactdp.sweep.driver import run_sweep
    from exactdp.sweep.pair import DEFAULT_DELTAS, SweepSettings

    extra = [d.strip() for item in args.deltas for d in item.split(",") if d.strip()]
    check = rational_type("--deltas", lo=0, hi=1, lo_open=True, hi_open=True)
    for d in extra:
        try:
            check(d)
        except argparse.ArgumentTypeError as exc:
            raise InputError("--deltas", d, str(exc).split(": ", 1)[-1]) from None
    if args.only_deltas and not extra:
        raise InputError("--only-deltas", True, "needs at least one --deltas value")
    base = () if args.only_deltas else DEFAULT_DELTAS
    try:
        settings = SweepSettings(tuple(base) + tuple(extra), args.tradeoff_half, args.alpha_min, args.rel_tol,
                                 args.lam_step_sd)
    except InputError as exc:
        raise InputError(f"--{exc.field.replace('_', '-')}" if exc.field != "delta" else "--deltas",
                         exc.value, exc.reason) from None
    jobs = args.jobs if args.jobs is not None else -1
    if jobs == 0:
        raise InputError("--jobs", args.jobs, "must be a positive integer or -1 (all cores)")
    from exactdp.census.allocations import load_allocation
    from exactdp.cli._common import parse_pairs

    set_design({"allocation": args.allocation})
    alloc = load_allocation(args.allocation)
    pairs = parse_pairs(args, alloc.n_paths)
    set_design({"allocation": alloc.name, "content_hash": alloc.content_hash(),
                "pairs": "all" if pairs is None else [f"{i}-{j}" for i, j in pairs]})
    try:
        rep = run_sweep(alloc, args.out, pairs=pairs, settings=settings, jobs=jobs,
                        backend=args.backend, scheduler=args.scheduler, resume=args.resume, quiet=args.quiet,
                        with_pl94=args.with_pl94, plots=not args.no_plots, finish=write_sweep_report)
    except SweepDirError as exc:
        raise InputError("--out", str(args.out), str(exc)) from None
    except OSError as exc:  # the folder, the disk: named with the file the error is about
        from exactdp.cli._common import os_error_text

        raise InputError("--out", str(args.out), os_error_text(exc)) from None
    res = rep.manifest["results"]
    certs = _certify_headline(args, rep.out)
    if args.json:
        points = [{"delta": d, **h} for d, h in res["headline"].items()]
        emit_result(points, out=str(rep.out), n_pairs=rep.n_pairs, computed=rep.computed, reused=rep.reused,
                    **{k: v for k, v in res.items() if k != "headline"},
                    **({"headline_certificates": certs} if certs is not None else {}))
        return 0
    print(f"exactdp sweep: {rep.n_pairs} pairs in {rep.out} ({rep.computed} computed, {rep.reused} reused); "
          f"{rep.manifest['timings']['wall_seconds_this_run']} s")
    head = res["headline"]
    key = "1e-10" if "1e-10" in head else next(iter(head))
    h = head[key]
    print(f"at δ = {key}: Bureau's ε = {h['eps_bureau']}; exact overall δ at that ε = {h['delta_overall']} "
          f"(≤ {h['delta_overall_upper']}, pair {h['delta_argmax_pair']}); exact overall ε at δ = {key}: "
          f"{h['eps_overall']} (≤ {h['eps_overall_upper']}, pair {h['eps_argmax_pair']})")
    w = res["worst_certified"]
    print(f"worst certified relative error: δ {w['delta_rel_error']}, ε bracket {w['eps_rel_width']}, "
          f"trade-off vertices {w['tradeoff_vertex_rel_error']}")
    print(f"files: report.html (start here), summary.csv, envelope.csv, pairs/, plots/, manifest.json in {rep.out}")
    if certs is not None:
        c = certs[key]
        print(f"arb certificate at δ = {key}: overall δ in [{', '.join(c['delta_overall']['enclosure'])}], "
              f"overall ε in [{', '.join(c['eps_overall']['enclosure'])}] (manifest.json: headline_certificates)")
    return 0


def _certify_headline(args, out):
    """``--certify-headline``: Arb enclosures of the headline, written into manifest.json."""
    if not args.certify_headline:
        return None
    from exactdp.census.allocations import load_allocation
    from exactdp.sweep.certificates import certify_headline

    return certify_headline(out, load_allocation(args.allocation))
