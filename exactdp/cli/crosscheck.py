"""``exactdp crosscheck``: exact profile beside Bun–Steinke, CKS, RDP and GDP, plus the
variance-reduction table; ``--edgeworth`` runs the m^{-2} rate study, ``--proxy`` the
proxy-pair gap over all pairs of an allocation."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from exactdp.cli._common import decimal_str, emit_result, rational_type, set_design

__all__ = ["register"]

DEFAULT_DELTAS = ("1/100", "1/1000", "1/1000000", "1/10000000000")
_DESC = (
    "Cross-check the exact privacy profile of a design against the conversions: Bun–Steinke (the "
    "Bureau's), the optimal zCDP conversion of Canonne–Kamath–Steinke, the exact Rényi curve with the "
    "improved RDP conversion, and the continuous-Gaussian (GDP) counterpart (not a bound for discrete "
    "noise). Prints ε(δ) and δ(ε_BS(δ)) tables and the calibrated variance reduction per δ, and writes "
    "an ε–δ plot (PNG and PDF) to --out."
)


def register(subparsers) -> None:
    from exactdp.cli._designs import add_design_arguments

    p = subparsers.add_parser("crosscheck", help="exact profile vs zCDP/RDP/GDP conversions", description=_DESC)
    add_design_arguments(p)
    p.add_argument("--delta", dest="deltas", action="append",
                   type=rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True), metavar="D",
                   help="δ values of the tables (repeatable; default 1e-2, 1e-3, 1e-6, 1e-10)")
    p.add_argument("--out", default="exactdp-crosscheck", metavar="DIR", help="folder for the plots")
    p.add_argument("--no-calibration", action="store_true", help="skip the variance-reduction table")
    p.add_argument("--edgeworth", action="store_true",
                   help="instead: the Edgeworth rate study (m identical mechanisms at fixed total ρ)")
    p.add_argument("--rho", type=rational_type("--rho", positive=True), default=Fraction(1, 2),
                   help="total ρ of the --edgeworth study (default 1/2)")
    p.add_argument("--proxy", action="store_true",
                   help="instead: gap between the proxy pair (13, 13) and the max over all pairs (--allocation)")
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points", ...}')
    p.set_defaults(func=_run_checked)


def _run_checked(args) -> int:
    from exactdp.numerics.exact import InputError

    deltas = list(args.deltas or [Fraction(d) for d in DEFAULT_DELTAS])
    for d in deltas:
        if not 0 < d < 1:
            raise InputError("--delta", str(d), "must lie in (0, 1)")
    if args.edgeworth:
        return _edgeworth(args)
    if args.proxy:
        return _proxy(args, deltas)
    return _curves(args, deltas)


# ----------------------------------------------------------------------------- conversions
def _curves(args, deltas) -> int:
    import mpmath

    from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
    from exactdp.calibration.calibrate import calibrate_design
    from exactdp.cli._designs import design_from_args
    from exactdp.conversions import bounds
    from exactdp.conversions.plots import curves_figure, save

    comp = design_from_args(args)
    acc = ExactAccountant(comp)
    rho = comp.rho
    eps_rows = []
    for d, ex in zip(deltas, acc.epsilon(deltas)):
        row = {"delta": decimal_str(d), "exact": decimal_str(ex.value),
               "exact_error_bound": decimal_str(ex.error_bound)}
        row["bun-steinke"] = decimal_str(bounds.bun_steinke_eps(comp, d).epsilon)
        row["cks"] = decimal_str(bounds.cks_epsilon(comp, d).epsilon)
        row["rdp"] = decimal_str(bounds.rdp_epsilon(comp, d).epsilon)
        row["gdp"] = decimal_str(bounds.gdp_epsilon(comp, d).epsilon)
        eps_rows.append(row)
    bs_eps = [bun_steinke_epsilon(rho, d) for d in deltas]
    delta_rows = []
    for d, e, dx in zip(deltas, bs_eps, acc.delta(bs_eps)):
        delta_rows.append({
            "delta_target": decimal_str(d), "epsilon_bs": decimal_str(dx.epsilon),
            "exact": decimal_str(dx.value), "exact_error_bound": decimal_str(dx.error_bound),
            "cks": decimal_str(bounds.cks_delta(comp, e).delta), "rdp": decimal_str(bounds.rdp_delta(comp, e).delta),
            "gdp": decimal_str(bounds.gdp_delta(comp, e).delta)})
    calib = []
    if not args.no_calibration:
        runs: list[tuple[str, Callable]] = [("all", lambda d: calibrate_design(comp, d))]
        if args.allocation:  # per geographic level on this pair: scale one level, others fixed
            from exactdp.calibration.calibrate import calibrate_pair
            from exactdp.census.allocations import load_allocation
            from exactdp.cli._designs import allocation_pair

            alloc = load_allocation(args.allocation)
            pair = allocation_pair(args, alloc)
            for lev in alloc.levels:
                if any(alloc.level_rho(p)[lev] for p in pair):
                    runs.append((lev, lambda d, lev=lev: calibrate_pair(alloc, pair, d, level=lev)))
        for scaled, fn in runs:
            for d in deltas:
                r = fn(d)
                calib.append({"scaled": scaled, "delta": decimal_str(d),
                              "target_epsilon": decimal_str(r.target_epsilon),
                              "variance_reduction": decimal_str(r.variance_reduction),
                              "variance_reduction_lower": decimal_str(r.variance_reduction_lower),
                              "variance_reduction_upper": decimal_str(r.variance_reduction_upper)})
    # curves on an ε grid between the exact ε(0.5) and the Bun–Steinke ε(1e-12)
    lo = float(acc.epsilon(["1/2"])[0].value)
    hi = float(bounds.bun_steinke_eps(comp, "1e-12").epsilon)
    grid = [Fraction(round((lo + (hi - lo) * k / 30) * 1000), 1000) for k in range(31)]
    curves = {"exact": ([float(g) for g in grid], [float(p.value) for p in acc.delta(grid)])}
    for name, delta_fn in (("bun-steinke", bounds.bun_steinke_delta), ("cks", bounds.cks_delta),
                           ("rdp", bounds.rdp_delta), ("gdp", bounds.gdp_delta)):
        curves[name] = ([float(g) for g in grid], [float(delta_fn(comp, g).delta) for g in grid])
    from exactdp.numerics.precision import DPS_FLOAT64

    with mpmath.workdps(DPS_FLOAT64):
        title = f"{comp.size} discrete Gaussians, ρ = {float(rho):.6g}"
    paths = save(curves_figure(curves, title), args.out, "crosscheck_curves")
    if calib:
        from exactdp.conversions.plots import reduction_figure

        paths += save(reduction_figure(calib, f"variance reduction at the Bureau's (ε, δ); {title}"), args.out,
                      "crosscheck_variance_reduction")
    if args.json:  # points: ε(δ) per method
        emit_result(eps_rows, delta_at_bureau_epsilon=delta_rows, variance_reduction=calib, plots=paths,
                    notes="exact = certified upper bound; bun-steinke, cks, rdp are upper bounds; "
                          "gdp is the continuous-Gaussian value, not a bound for discrete noise")
        return 0
    print(f"ε(δ), ρ = {rho} ({comp.size} mechanisms); exact is the certified upper bound")
    _table(["delta", "exact", "bun-steinke", "cks", "rdp", "gdp"], eps_rows)
    print("\nδ at the Bureau's ε_BS(δ)")
    _table(["delta_target", "epsilon_bs", "exact", "cks", "rdp", "gdp"], delta_rows)
    if calib:
        print("\nvariance reduction at (ε_BS(δ), δ) with its certified bracket (scaled: all variances or one level's)")
        _table(["scaled", "delta", "target_epsilon", "variance_reduction", "variance_reduction_lower",
                "variance_reduction_upper"], calib)
    print("\nplots: " + ", ".join(paths))
    return 0


def _table(cols, rows, width=24):
    print("  ".join(f"{c:>{width}}" for c in cols))
    for r in rows:
        print("  ".join(f"{_short(r[c]):>{width}}" for c in cols))


def _short(text) -> str:
    text = str(text)
    return text if len(text) <= 22 else decimal_str(__import__("mpmath").mpf(text), 14)


# ----------------------------------------------------------------------------- Edgeworth
def _edgeworth(args) -> int:
    from exactdp.conversions.edgeworth import fit_slope, rate_table
    from exactdp.conversions.plots import rate_figure, save

    rows = rate_table(rho=args.rho)
    out_rows, slopes = [], {}
    for e in sorted({r.epsilon for r in rows}):
        rs = [r for r in rows if r.epsilon == e]
        slopes[str(e)] = fit_slope([r.m for r in rs], [r.gap for r in rs])
    for r in rows:
        out_rows.append({"m": r.m, "sigma2": str(r.sigma2), "epsilon": str(r.epsilon),
                         "exact": decimal_str(r.exact, 14), "exact_error_bound": decimal_str(r.exact_error, 3),
                         "gaussian": decimal_str(r.gaussian, 14), "exact_minus_gaussian": decimal_str(r.gap, 6),
                         "gap_times_m^1.5": decimal_str(r.gap * r.m**1.5, 6),
                         "gap_times_m^2": decimal_str(r.gap * r.m**2, 6),
                         "exact_minus_edgeworth": decimal_str(r.residual, 3)})
    paths = []
    for e, slope in slopes.items():
        rs = [r for r in rows if str(r.epsilon) == e]
        fig = rate_figure([r.m for r in rs], [float(r.gap) for r in rs], [float(r.residual) for r in rs], slope,
                          f"exact − Gaussian δ(ε), ε = {e}, total ρ = {args.rho}")
        paths += save(fig, args.out, f"edgeworth_rate_eps_{e.replace('/', '_')}")
    if args.json:
        emit_result(out_rows, design={"edgeworth_rho": str(args.rho)}, fitted_slopes_m_ge_8=slopes, plots=paths)
        return 0
    print(f"m identical unit-shift discrete Gaussians, σ² = m/(2ρ), total ρ = {args.rho}")
    _table(["m", "epsilon", "exact", "gaussian", "exact_minus_gaussian", "gap_times_m^1.5", "gap_times_m^2",
            "exact_minus_edgeworth"], out_rows, width=17)
    for e, s in slopes.items():
        print(f"fitted slope of log|exact − Gaussian| vs log m (m ≥ 8), ε = {e}: {s:.4f}")
    print("plots: " + ", ".join(paths))
    return 0


# ----------------------------------------------------------------------------- proxy
def _proxy(args, deltas) -> int:
    from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.numerics.exact import InputError

    if not args.allocation:
        raise InputError("--allocation", None, "--proxy needs --allocation NAME")
    from exactdp.cli._designs import allocation_pair, design_spec

    set_design(design_spec(args))
    alloc = load_allocation(args.allocation)
    proxy = allocation_pair(args, alloc) or (13, 13)
    if proxy not in alloc.pairs():
        raise InputError("--pair", f"{proxy[0]}-{proxy[1]}", f"the default proxy pair is not a pair of {alloc.name} "
                         f"({alloc.n_paths} path(s)); name the proxy pair with --pair")
    eps = [bun_steinke_epsilon(alloc.total_rho, d) for d in deltas]
    best: list = [None] * len(deltas)
    prox: tuple = ()
    for p in alloc.pairs():
        pts = ExactAccountant(Composition.from_rhos(alloc.pair_rhos(*p))).delta(eps)
        if p == proxy:
            prox = pts
        for k, pt in enumerate(pts):
            if best[k] is None or pt.estimate > best[k][1].estimate:
                best[k] = (p, pt)
    rows = []
    for d, pp, (p, bp) in zip(deltas, prox, best):
        gap = (bp.estimate - pp.estimate) / bp.estimate
        err = (bp.error_bound + pp.error_bound) / bp.estimate
        rows.append({"delta": decimal_str(d), "epsilon_bs": decimal_str(pp.epsilon), "proxy": decimal_str(pp.estimate),
                     "max_over_pairs": decimal_str(bp.estimate), "argmax_pair": f"{p[0]},{p[1]}",
                     "relative_gap": decimal_str(gap, 6), "relative_gap_error_bound": decimal_str(err, 3)})
    if args.json:
        emit_result(rows, design={"allocation": alloc.name, "proxy_pair": f"{proxy[0]}-{proxy[1]}",
                                  "pairs": len(alloc.pairs())})
        return 0
    print(f"proxy pair {proxy} vs max over the {len(alloc.pairs())} pairs of {alloc.name}, δ at ε_BS(δ)")
    _table(["delta", "epsilon_bs", "proxy", "max_over_pairs", "argmax_pair", "relative_gap",
            "relative_gap_error_bound"], rows, width=20)
    return 0
