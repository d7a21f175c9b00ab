"""``exactdp delta | epsilon | tradeoff``: exact answers for one design."""

from __future__ import annotations

from exactdp.cli._common import decimal_str, emit_result, rational_type, rel_tol_type
from exactdp.cli._designs import add_design_arguments, design_from_args, design_label, design_rho

__all__ = ["register"]

#: the argument type of each query flag (the domain of the query, as the user types it)
_VALUE_TYPES = {
    "--eps": rational_type("--eps"),
    "--delta": rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True),
    "--alpha": rational_type("--alpha", lo=0, hi=1),
}


def register(subparsers) -> None:
    specs = [
        ("delta", "δ(ε): exact privacy profile at each --eps", "--eps", "epsilon", _run_delta),
        ("epsilon", "ε(δ): smallest ε with δ(ε) ≤ each --delta", "--delta", "delta", _run_epsilon),
        ("tradeoff", "f-DP trade-off β = f(α) at each --alpha", "--alpha", "alpha", _run_tradeoff),
    ]
    for name, help_text, flag, field, func in specs:
        p = subparsers.add_parser(name, help=help_text, description=help_text + (
            ". Every number comes with a certified error bound; the reported value is the "
            "conservative side (upper bound for δ and ε, lower bound for β)."))
        add_design_arguments(p, kinds=True)
        p.add_argument(flag, dest="values", action="append", required=True, type=_VALUE_TYPES[flag],
                       metavar="VALUE", help=f"{field} as an exact rational or decimal (repeatable)")
        p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10, metavar="TOL",
                       help="certified relative accuracy of each tail, in [1e-15, 1e-2] (default 1e-10)")
        p.add_argument("--method", choices=("auto", "lattice", "lattice-free"), default="auto",
                       help="the route: auto (the planner chooses, default), lattice (int64 integer lattice, "
                            "certified point values) or lattice-free (certified brackets, any design); the route "
                            "and its cost estimate are in the --json diagnostics")
        p.add_argument("--json", action="store_true",
                       help='print one JSON object {"command", "design", "points", "diagnostics"}')
        p.add_argument("--certify", action="store_true",
                       help="also enclose each point by Arb ball arithmetic (an independent certificate: "
                            "\"enclosure\": [lower, upper] in the JSON); exit 3 if the fast value is not on "
                            "the conservative side of the enclosure")
        p.add_argument("--verify", action="store_true",
                       help="also recompute each point independently in multiprecision (own rule, node selection "
                            "and arithmetic: exactdp.accounting.verification) and report the disagreement; exit 3 "
                            "if the two disagree beyond their bounds" if name == "delta" else
                            "only `exactdp delta` has the multiprecision recomputation; here use --certify")
        p.set_defaults(func=func)


def _emit(res, pts) -> None:
    """The envelope with the engine's diagnostics."""
    emit_result(pts, diagnostics={"method": res.diagnostics.method, "nodes_kept": res.diagnostics.nodes_kept,
                                  "nodes_total": res.diagnostics.nodes_total,
                                  "lattice_scale": res.diagnostics.lattice_scale,
                                  "route": res.diagnostics.route,
                                  "route_estimate": f"{res.diagnostics.route_estimate:.3g}"})


def _side(value, up: bool) -> str:
    """A conservative end as :func:`decimal_str` prints it (20 significant digits), rounded
    outward — up for an upper bound (δ, ε), down for a lower bound (β, ε's lower end) — so a
    tight bracket (the mixed route's Arb balls are ~1e-38 wide) is not crossed by rounding
    to nearest."""
    from decimal import Decimal
    from fractions import Fraction

    import mpmath
    from mpmath.libmp import from_str, mpf_cmp

    text = decimal_str(value)
    if not mpmath.isfinite(value):
        return text
    if isinstance(value, mpmath.mpf):
        # compared in binary, never as an exact Fraction: a δ of 5e-2171472409516284 (σ² = 1e16)
        # has a 2^(7e15) denominator.  The text's binary enclosure end on the far side decides:
        # it can only make the text one step looser, never cross the value.
        far = from_str(text, value._mpf_[3] + 128, "f" if up else "c")
        crossed = mpf_cmp(far, value._mpf_) < 0 if up else mpf_cmp(far, value._mpf_) > 0
    else:
        exact, shown = Fraction(value), Fraction(Decimal(text))
        crossed = (shown < exact) if up else (shown > exact)
    if crossed:
        d = Decimal(text)
        step = Decimal(1).scaleb(d.adjusted() - 19)
        return decimal_str(Fraction(d + step if up else d - step))
    return text


def _print_table(title, cols, rows):
    print(title)
    print("  ".join(f"{c:>26}" for c in cols))
    for r in rows:
        print("  ".join(f"{v:>26}" for v in r))


def _check_eps_range(comp, values) -> None:
    """Refuse |ε| > 1e50 (:func:`exactdp.accounting.base.check_epsilon_range`, which
    quotes the zCDP bound δ(ε) ≤ exp(−(ε−ρ)²/(4ρ))), naming the flag."""
    from exactdp.accounting.base import check_epsilon_range

    check_epsilon_range(design_rho(comp), values, "--eps", shown=[decimal_str(e, 6) for e in values])


def _run_delta(args) -> int:
    from exactdp.accounting.accountant import ExactAccountant, delta

    comp = design_from_args(args, mixed=True)
    _refuse_mixed_checks(args, comp)
    _check_eps_range(comp, args.values)
    acc = ExactAccountant(comp, rel_tol=args.rel_tol, method=args.method)
    res = delta(acc, args.values)
    pts: list[dict[str, object]] = [
        {"epsilon": decimal_str(e), "delta": _side(p.value, True), "error_bound": decimal_str(p.error_bound),
         "delta_estimate": decimal_str(p.estimate)} for p, e in zip(res.points, args.values)]
    shown = {}  # table cells shorter than their JSON strings
    if args.verify:
        from exactdp.accounting.verification import verify_delta
        from exactdp.numerics.errors import UncertifiedError

        for i, (q, e) in enumerate(zip(pts, args.values)):
            v = verify_delta(acc, e)
            shown[i, "verified_delta"] = decimal_str(v.estimate)
            if not v.agrees:
                raise UncertifiedError(f"--verify: the multiprecision recomputation disagrees at ε = {q['epsilon']} "
                                       f"(fast {q['delta_estimate']} ± {q['error_bound']}, recomputed "
                                       f"{decimal_str(v.estimate)} ± {decimal_str(v.error_bound)}); please report it, "
                                       f"and try --certify for an Arb enclosure")
            q.update({"verified_delta": decimal_str(v.estimate, 30), "verify_error_bound": decimal_str(v.error_bound),
                      "disagreement": decimal_str(v.disagreement), "agrees": bool(v.agrees)})
    _certify(args, comp, "delta", res.points, pts)
    if args.json:
        _emit(res, pts)
    else:
        cols = ["epsilon", "delta", "error_bound"] + (["verified_delta", "disagreement"] if args.verify else [])
        _print_table(f"exact δ(ε), {design_label(comp)} (δ = certified upper bound)", cols,
                     [tuple(shown.get((i, c), q[c]) for c in cols) for i, q in enumerate(pts)])
    return 0


def _refuse_verify(args, command: str) -> None:
    """``--verify`` is δ(ε)'s multiprecision recomputation: refused (one line, exit 2) here."""
    if args.verify:
        from exactdp.numerics.errors import InputError

        raise InputError("--verify", True, f"only `exactdp delta` has the multiprecision recomputation; for "
                                              f"`exactdp {command}` use --certify (an Arb enclosure)")


def _refuse_mixed_checks(args, design) -> None:
    """``--verify`` is the multiprecision recomputation of discrete-Gaussian designs; a mixed
    design's answers are Arb-ball brackets already (refused, exit 2).  ``--certify`` encloses a
    mixed design by the exact enumeration of its kinds (:mod:`exactdp.certify.kinds`)."""
    from exactdp.mechanisms import Composition

    if isinstance(design, Composition) or not getattr(args, "verify", False):
        return
    from exactdp.numerics.errors import InputError

    raise InputError("--verify", True, "recomputes discrete-Gaussian designs only; a design mixing kinds is "
                                       "answered by the mixed route, whose values are certified Arb-ball brackets "
                                       "already (route 'mixed' in the --json diagnostics); --certify encloses it "
                                       "independently")


def _run_epsilon(args) -> int:
    from exactdp.accounting.accountant import epsilon

    _refuse_verify(args, "epsilon")
    comp = design_from_args(args, mixed=True)
    _refuse_mixed_checks(args, comp)
    res = epsilon(comp, args.values, rel_tol=args.rel_tol, method=args.method)
    pts = [{"delta": decimal_str(d), "epsilon": _side(p.value, True),
            "error_bound": decimal_str(p.error_bound), "epsilon_lower": _side(p.lower, False)}
           for p, d in zip(res.points, args.values)]  # the argument as given (exact), not the point's copy
    _certify(args, comp, "epsilon", res.points, pts)
    if args.json:
        _emit(res, pts)
    else:
        _print_table(f"exact ε(δ), {design_label(comp)} (ε = certified upper bound)",
                     ["delta", "epsilon", "error_bound"],
                     [(q["delta"], q["epsilon"], q["error_bound"]) for q in pts])
    return 0


def _run_tradeoff(args) -> int:
    from exactdp.accounting.accountant import tradeoff

    _refuse_verify(args, "tradeoff")
    comp = design_from_args(args, mixed=True)
    _refuse_mixed_checks(args, comp)
    res = tradeoff(comp, args.values, rel_tol=args.rel_tol, method=args.method)
    pts = [{"alpha": decimal_str(a), "beta": _side(p.value, False),
            "error_bound": decimal_str(p.error_bound), "beta_estimate": decimal_str(p.estimate)}
           for p, a in zip(res.points, args.values)]
    _certify(args, comp, "tradeoff", res.points, pts)
    if args.json:
        _emit(res, pts)
    else:
        _print_table(f"exact trade-off f(α), {design_label(comp)} (β = certified lower bound)",
                     ["alpha", "beta", "error_bound"], [(q["alpha"], q["beta"], q["error_bound"]) for q in pts])
    return 0


def _certify(args, comp, kind, points, rows) -> None:
    """``--certify``: an independent Arb enclosure beside each point (UncertifiedError,
    exit 3, when the fast value is not on its conservative side)."""
    if not getattr(args, "certify", False):
        return
    from exactdp.certify import certify_points
    from exactdp.certify.check import DIGITS

    for row, enc in zip(rows, certify_points(comp, kind, args.values, points)):
        row["enclosure"] = list(enc.decimal(DIGITS))
        row["certificate"] = "arb"
        row["certificate_method"] = enc.method
        if not args.json:
            print(f"arb enclosure at {enc.argument}: [{row['enclosure'][0]}, {row['enclosure'][1]}] ({enc.method})")
