"""`exactdp countdep`: the shifted-log Gaussian mechanism for count-dependent privacy
(Fitzsimons 2026): ``budget``, ``bounds``, ``sample``, ``utility``."""

from __future__ import annotations

from typing import Any

from exactdp.cli._common import Parser, decimal_str, emit_result, int_type, rational_type

__all__ = ["register"]

DEFAULT_BUDGET_NS = (0, 1, 2, 5, 10, 100, 1000, 10**4, 10**5, 10**6)
DEFAULT_BOUNDS_NS = (1, 10, 100, 1000, 10**4)
PLOT_BOUNDS_NS = (1, 3, 10, 30, 100, 300, 1000, 3000, 10**4)


def _common(p) -> None:
    p.add_argument("--r", required=True, type=rational_type("r"), help="relative-error tolerance, 0 < r <= 1")
    p.add_argument("--r0", type=rational_type("r0"), default=None, help="design tolerance 0 < r0 < r (default r/2)")
    p.add_argument("--c", type=rational_type("c"), default=None, help="log shift c > 0 (default 1)")
    p.add_argument("--n", action="append", default=None, metavar="N", help="a count (repeatable)")
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points"}')
    p.add_argument("--dps", type=int_type("--dps", 15, 10_000), default=30,
                   help="decimal digits of the multiprecision evaluation")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "countdep",
        help="count-dependent privacy: shifted-log Gaussian mechanism and lower bounds",
        description="Shifted-log Gaussian mechanism with count-dependent zCDP budget v(n) "
        "(Fitzsimons 2026), its utility, and mechanism-independent lower bounds.",
    )
    sub = p.add_subparsers(dest="countdep_command", metavar="ACTION", parser_class=Parser)
    sub.required = True

    b = sub.add_parser("budget", help="table of v(n) (eq. 5-7), optional per-count (eps, delta)")
    _common(b)
    b.add_argument("--delta", type=rational_type("delta"), default=None, help="also convert v(n) to (eps, delta)")
    b.add_argument("--method", choices=("cks", "bun-steinke", "gaussian"), default="cks")
    b.add_argument("--plot", metavar="DIR", default=None, help="write v(n) vs lower bounds (PNG, PDF)")
    b.set_defaults(func=_cmd_budget)

    lb = sub.add_parser("bounds", help="lower bounds (14), (23), optimised (19) and constants")
    _common(lb)
    lb.add_argument("--plot", metavar="DIR", default=None, help="write v(n) vs lower bounds (PNG, PDF)")
    lb.set_defaults(func=_cmd_bounds)

    s = sub.add_parser("sample", help="sample releases for true counts --n")
    _common(s)
    s.add_argument("--size", type=int, default=1, help="independent repetitions")
    s.add_argument("--seed", type=int_type("--seed", 0), default=None, help="seed of numpy.random.default_rng")
    s.add_argument("--round", action="store_true", help="stochastic rounding to integers")
    s.set_defaults(func=_cmd_sample)

    u = sub.add_parser("utility", help="exact expected error, clipping gain, Monte Carlo check")
    _common(u)
    u.add_argument("--quad", action="store_true", help="also evaluate by multiprecision quadrature")
    u.add_argument("--mc", type=int, default=0, metavar="SIZE", help="Monte Carlo check with SIZE draws per n")
    u.add_argument("--seed", type=int_type("--seed", 0), default=0)
    u.add_argument("--confidence", type=rational_type("--confidence"), default=None, help="MC interval level (0.999)")
    u.add_argument("--plot", metavar="DIR", default=None, help="write the utility curve (PNG, PDF)")
    u.set_defaults(func=_cmd_utility)


def _params(args):
    from exactdp.countdep.params import ShiftedLogParams

    return ShiftedLogParams.create(args.r, args.r0, 1 if args.c is None else args.c)


def _counts(args, default, positive=False):
    from exactdp.countdep.params import validate_count, validate_positive_count

    vals = args.n if args.n else [str(n) for n in default]
    check = validate_positive_count if positive else validate_count
    return [check(v, "n") for v in vals]


def _s(x) -> str:
    return decimal_str(x)


def _plot_budget(params, outdir, dps, ns=()):
    from exactdp.countdep.plots import plot_budget
    from exactdp.countdep.report import lower_bound_report

    pos = sorted({n for n in ns if n >= 1}) or list(PLOT_BOUNDS_NS)
    rep = lower_bound_report(params.r, pos, params, dps)
    return plot_budget(params, outdir, rep, max_n=10**6)


def _cmd_budget(args) -> int:
    from exactdp.countdep.budget import budget_table
    from exactdp.countdep.conversion import zcdp_to_dp

    params = _params(args)
    ns = _counts(args, DEFAULT_BUDGET_NS)
    table = budget_table(params, ns, args.dps)
    conv = {}
    if args.delta is not None:
        conv = {p.n: zcdp_to_dp(p.v, args.delta, args.method, args.dps) for p in table.points}
    paths = _plot_budget(params, args.plot, args.dps, ns if args.n else ()) if args.plot else []
    if args.json:
        pts = []
        for p in table.points:
            row = {"n": p.n, "v": _s(p.v)}
            if p.n2v is not None:
                row["n2v"] = _s(p.n2v)
                row["remainder_n3"] = _s(p.remainder)
            if conv:
                row["epsilon"] = _s(conv[p.n].epsilon)
            pts.append(row)
        out: dict[str, Any] = {"sigma": _s(table.sigma), "rel_error": _s(table.rel_error),
               "asymptotic_coefficient": _s(table.coefficient)}
        if conv:
            out["delta"] = str(args.delta)
            out["method"] = args.method
        if paths:
            out["plots"] = [str(p) for p in paths]
        emit_result(pts, design={"params": params.as_dict()}, **out)
        return 0
    print(f"shifted-log Gaussian: r={params.r} r0={params.r0} c={params.c}  sigma={_s(table.sigma)}")
    print(f"v(n) relative error < {_s(table.rel_error)};  n^2 v(n) -> 1/(2 sigma^2) = {_s(table.coefficient)}")
    head = f"{'n':>10}  {'v(n)':>26}  {'n^2 v(n)':>26}"
    if conv:
        head += f"  {'eps (delta=' + str(args.delta) + ', ' + args.method + ')':>26}"
    print(head)
    for p in table.points:
        line = f"{p.n:>10}  {_s(p.v):>26}  {(_s(p.n2v) if p.n2v is not None else '-'):>26}"
        if conv:
            line += f"  {_s(conv[p.n].epsilon):>26}"
        print(line)
    for path in paths:
        print(f"wrote {path}")
    return 0


def _cmd_bounds(args) -> int:
    from exactdp.countdep.constants import c_star_bracket, table2
    from exactdp.countdep.report import lower_bound_report

    params = _params(args)
    ns = _counts(args, DEFAULT_BOUNDS_NS, positive=True)
    rep = lower_bound_report(params.r, ns, params, args.dps)
    br = c_star_bracket(args.dps)
    t2 = table2(args.dps)
    paths = _plot_budget(params, args.plot, args.dps, ns) if args.plot else []
    zero = "0"
    if args.json:
        pts = []
        for p in rep.points:
            pts.append({
                "n": p.n,
                "two_count": _s(p.two_count),
                "uniform": _s(p.uniform.value),
                "uniform_K": p.uniform.K,
                "optimised_prior": _s(p.optimised.value) if p.optimised else zero,
                "optimised_prior_family": (p.optimised.best.family if p.optimised and p.optimised.best else
                                           ("uniform" if p.optimised and p.optimised.value > 0 else None)),
                "best": _s(p.best),
                "best_source": p.best_source,
                "many_count_vacuous": p.many_count_vacuous,
                "vacuity_reason": p.vacuity_reason,
                "mechanism_v": _s(p.mechanism_v),
                "ratio": "inf" if p.ratio is not None and p.ratio == float("inf") else _s(p.ratio),
            })
        out: dict[str, Any] = {
            "two_count_limit": _s(rep.two_count_limit) if rep.two_count_limit is not None else None,
            "uniform_asymptotic": _s(rep.uniform_asymptotic) if rep.uniform_asymptotic is not None else None,
            "mechanism_coefficient": _s(rep.mechanism_coefficient),
            "truncated_gaussian_constant": _s(br.lower.value),
            "c_star_lower": _s(br.lower.value),
            "c_star_upper": _s(br.upper.value),
            "table2": {"two_count": _s(t2.two_count), "uniform": _s(t2.uniform),
                       "truncated_gaussian": _s(t2.truncated_gaussian), "mechanism": _s(t2.mechanism),
                       "accuracy": _s(t2.accuracy)},
            "note": rep.note,
        }
        if paths:
            out["plots"] = [str(p) for p in paths]
        emit_result(pts, design={"r": str(params.r), "params": params.as_dict()}, **out)
        return 0
    print(f"lower bounds on v(n) for any mechanism with E|Y-m| <= r m, r={params.r}")
    print(f"{'n':>8}  {'two-count (14)':>22}  {'uniform (23)':>22}  {'optimised (19)':>22}  {'best':>22}  "
          f"{'mechanism v(n)':>22}  {'ratio':>10}")
    for p in rep.points:
        opt = _s(p.optimised.value) if p.optimised else zero
        ratio = "inf" if p.ratio == float("inf") else decimal_str(p.ratio, 6)
        print(f"{p.n:>8}  {_s(p.two_count):>22}  {_s(p.uniform.value):>22}  {opt:>22}  {_s(p.best):>22}  "
              f"{_s(p.mechanism_v):>22}  {ratio:>10}")
        if p.many_count_vacuous:
            print(f"{'':>8}  (19) vacuous: {p.vacuity_reason}")
    print(rep.note)
    if rep.two_count_limit is not None:
        print(f"(15) liminf n^2 v >= {_s(rep.two_count_limit)};  (24) liminf r^2 n^2 v >= {_s(rep.uniform_asymptotic)}"
              f";  mechanism: lim r^2 n^2 v = {_s(rep.mechanism_coefficient)}")
    print(f"Table 2 (small r): two-count {_s(t2.two_count)}, uniform {_s(t2.uniform)}, "
          f"truncated Gaussian {_s(t2.truncated_gaussian)}, mechanism {_s(t2.mechanism)} "
          f"(abs. error < {_s(t2.accuracy)})")
    print(f"C* bracket: {_s(br.lower.value)} <= C* <= {_s(br.upper.value)}  (ratio {decimal_str(br.ratio, 6)})")
    for path in paths:
        print(f"wrote {path}")
    return 0


def _cmd_sample(args) -> int:
    import numpy as np

    from exactdp.countdep.mechanism import sample
    from exactdp.numerics.exact import InputError

    params = _params(args)
    if not args.n:
        raise InputError("n", None, "give the true counts with --n")
    ns = _counts(args, ())
    if args.size < 1:
        raise InputError("size", args.size, "must be >= 1")
    rng = np.random.default_rng(args.seed)
    out = sample(params, np.array(ns, dtype=np.int64), rng, size=args.size, rounding=args.round)
    rows = [[int(v) if args.round else repr(float(v)) for v in row] for row in out]
    if args.json:
        emit_result([{"release": row} for row in rows],
                    design={"params": params.as_dict(), "counts": ns, "seed": args.seed, "rounding": bool(args.round)})
        return 0
    print("counts: " + " ".join(str(n) for n in ns))
    for row in rows:
        print(" ".join(str(v) for v in row))
    return 0


def _cmd_utility(args) -> int:
    from exactdp.countdep.utility import lemma41, log_grid, monte_carlo_error, optimal_drift, utility_report

    params = _params(args)
    ns = _counts(args, log_grid(10**6, 2))
    rep = utility_report(params, ns, dps=args.dps, quad=args.quad)
    sigma = params.sigma(args.dps)
    drift = optimal_drift(sigma, args.dps)
    conf = args.confidence if args.confidence is not None else "0.999"
    mcs = ([monte_carlo_error(params, n, args.mc, seed=args.seed, rounding=True, confidence=conf) for n in ns]
           if args.mc else [])
    paths = []
    if args.plot:
        from exactdp.countdep.plots import plot_utility

        paths = plot_utility(rep, args.plot)
    if args.json:
        pts = []
        for p in rep.points:
            row = {"n": p.n, "error": _s(p.error), "preclip": _s(p.preclip), "clipping_gain": _s(p.gain),
                   "relative_gain": _s(p.relative_gain), "target": _s(p.target), "ratio": _s(p.ratio)}
            if p.quad_value is not None:
                row["quad"] = _s(p.quad_value)
            pts.append(row)
        out = {
            "sigma": _s(sigma),
            "lemma41": _s(lemma41(sigma, args.dps)),
            "max_ratio": _s(rep.max_ratio),
            "all_within": rep.all_within,
            "drift": {"argmin": _s(drift.a_star), "sigma2": _s(drift.sigma_squared), "min_error": _s(drift.f_min),
                      "error_at_half_sigma2": _s(drift.f_half)},
            "monte_carlo": [{"n": m.n, "size": m.size, "mean": repr(m.mean), "low": repr(m.low),
                             "high": repr(m.high), "confidence": str(m.confidence)} for m in mcs],
        }
        if rep.max_quad_discrepancy is not None:
            out["max_quad_discrepancy"] = _s(rep.max_quad_discrepancy)
        if paths:
            out["plots"] = [str(p) for p in paths]
        emit_result(pts, design={"params": params.as_dict()}, **out)
        return 0
    print(f"r={params.r} r0={params.r0} c={params.c} sigma={_s(sigma)}; E|exp(sZ-s^2)-1| = 2Phi(s)-1 = "
          f"{_s(lemma41(sigma, args.dps))}")
    print(f"{'n':>10}  {'E|x^-n| (exact)':>26}  {'before clipping':>26}  {'clipping gain':>26}  {'/(r max(n,1))':>12}")
    for p in rep.points:
        print(f"{p.n:>10}  {_s(p.error):>26}  {_s(p.preclip):>26}  {_s(p.gain):>26}  {decimal_str(p.ratio, 6):>12}")
    print(f"max error/(r max(n,1)) = {_s(rep.max_ratio)}  ->  (2) {'holds' if rep.all_within else 'FAILS'}")
    if rep.max_quad_discrepancy is not None:
        print(f"quadrature twin: max relative discrepancy {decimal_str(rep.max_quad_discrepancy, 3)}")
    print(f"drift: argmin_a E|exp(sZ-a)-1| = {_s(drift.a_star)} (sigma^2 = {_s(drift.sigma_squared)}); "
          f"error {_s(drift.f_min)} vs {_s(drift.f_half)} at a = sigma^2/2")
    for m in mcs:
        print(f"MC n={m.n}: mean {m.mean!r}, {m.confidence} CI [{m.low!r}, {m.high!r}] ({m.size} draws, rounded)")
    for path in paths:
        print(f"wrote {path}")
    return 0
