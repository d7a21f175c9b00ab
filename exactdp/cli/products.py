"""``exactdp product`` and ``exactdp portfolio``: the Tumult-built 2020 products and the
whole 2020 portfolio for one person, exactly, beside the zCDP conversions."""

from __future__ import annotations

from exactdp.cli._common import check_out_folder, decimal_str, emit_result, rational_type, rel_tol_type, set_design

__all__ = ["register"]

_DELTA = rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True)
_ALPHA = rational_type("--alpha", lo=0, hi=1)


def _common(p) -> None:
    p.add_argument("--delta", dest="deltas", action="append", type=_DELTA, metavar="D",
                   help="target δ (repeatable; default 1e-10)")
    p.add_argument("--alpha", dest="alphas", action="append", type=_ALPHA, metavar="A",
                   help="also the trade-off β = f(α) (repeatable): the minimum over the cases")
    p.add_argument("--budget-rule", choices=("tumult-float", "decimal"),
                   help="how configured budgets become exact ρ: the exact binary value of the float Tumult is "
                        "asked for (production; the files' default) or the configuration's decimals")
    p.add_argument("--rel-tol", type=rel_tol_type(), default=1e-10, metavar="TOL",
                   help="certified relative accuracy of each tail (default 1e-10)")
    p.add_argument("--out", metavar="DIR", help="also write DIR/report.html with family.csv, cases.csv and a figure")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "product", help="a Tumult-built product (SafeTab-P, SafeTab-H, PHSafe): exact worst case over its neighbours",
        description="Exact privacy of a Tumult-built 2020 product under its own neighbouring relation: the worst "
                    "case over the product's worst-case neighbours (cases), for each target δ: the exact ε(δ) and "
                    "the exact δ at the Bureau's ε (Bun–Steinke of the configured ρ), each a certified bracket, "
                    "beside the Bun–Steinke and CKS conversions of the configured ρ. Built-ins: "
                    "safetab-p-2020-us/-pr, safetab-h-2020-us/-pr, phsafe-2020-us/-pr (allocations/README.md).")
    p.add_argument("product", metavar="NAME|FILE", help="built-in product or product file")
    p.add_argument("--cases", metavar="SPEC", default="all", help="case numbers, e.g. 1,30 (default all)")
    p.add_argument("--write-mechanisms", metavar="FILE",
                   help="only write the design of the one case named by --cases as a mechanisms TOML "
                        "(for exactdp delta/epsilon/tradeoff --mechanisms) and exit")
    _common(p)
    p.set_defaults(func=_run_product)

    q = subparsers.add_parser(
        "portfolio", help="the whole 2020 portfolio for one person: every product's neighbour composed",
        description="The 2020 Census portfolio for one person: one neighbour of each product's own relation at "
                    "once (TopDown: a record replaced, pair of paths; SafeTab-P: a person; SafeTab-H: a household; "
                    "PHSafe: a person and two unit rows), composed exactly; the worst case over the members' "
                    "cases, beside the Bureau's additive zCDP accounting (Σ configured ρ).")
    q.add_argument("--run", choices=("us", "pr"), default="us", help="default members of this run (default us)")
    q.add_argument("--member", dest="members", action="append", metavar="NAME[:SPEC]",
                   help="a member instead of the run's defaults (repeatable): an allocation with pairs "
                        "(dhc-persons-2020:13-13) or a product with cases (safetab-p-2020-us:1,30)")
    _common(q)
    q.set_defaults(func=_run_portfolio)


def _exact_text(q) -> str:
    """A rational as its exact decimal when it has one (``"4.944"``), else ``"p/q"``."""
    from fractions import Fraction

    from exactdp.numerics.exact import fraction_str

    q = Fraction(q)
    d, twos, fives = q.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    n = max(twos, fives)
    if d != 1 or n > 60:
        return fraction_str(q)
    v = abs(q) * 10**n
    digits = str(v.numerator).rjust(n + 1, "0")
    text = digits if n == 0 else f"{digits[:-n]}.{digits[-n:]}".rstrip("0").rstrip(".")
    return ("-" if q < 0 else "") + text


def _progress(args):
    from exactdp.cli._progress import CaseProgress

    return CaseProgress(f"exactdp {args.command}", args.quiet or args.json)


def _run_product(args) -> int:
    from exactdp.census.portfolio import case_numbers
    from exactdp.census.product_accounting import check_family_cost, family_rows, family_tradeoff, product_cases
    from exactdp.census.products import load_product

    set_design({"product": str(args.product)})
    prod = load_product(args.product)
    set_design({"product": prod.name, "budget_rule": args.budget_rule or prod.budget_rule,
                "configured_rho": _exact_text(prod.configured_rho)})
    numbers = case_numbers(args.cases, prod.n_cases, "--cases")
    if args.write_mechanisms:
        return _write_mechanisms(prod, numbers, args)
    check_family_cost(len(numbers), len(args.deltas or [1]), len(args.alphas or []), "--cases", args.cases)
    check_out_folder(args.out, "product")
    cases = product_cases(prod, numbers, args.budget_rule)
    bar = _progress(args)
    try:
        rows = family_rows(cases, prod.configured_rho, args.deltas or ["1e-10"], rel_tol=args.rel_tol, progress=bar)
    finally:
        bar.close()
    trade = family_tradeoff(cases, args.alphas, rel_tol=args.rel_tol) if args.alphas else []
    head = {"product": prod.name, "title": prod.product, "relation": prod.relation,
            "budget_rule": args.budget_rule or prod.budget_rule, "configured_rho": _exact_text(prod.configured_rho),
            "cases": {str(i): prod.case_label(i) for i in numbers},
            "case_rho": {str(i): decimal_str(prod.case_rho(i, args.budget_rule)) for i in numbers}}
    return _report(head, rows, trade, numbers, args)


def _run_portfolio(args) -> int:
    from exactdp.census.portfolio import PORTFOLIOS, parse_member, portfolio_cases, portfolio_rho
    from exactdp.census.product_accounting import check_family_cost, family_rows, family_tradeoff

    specs = args.members or list(PORTFOLIOS[args.run])
    name = args.run if not args.members else "custom"
    set_design({"portfolio": name, "members": specs})
    members = [parse_member(s, args.budget_rule) for s in specs]
    n_cases = 1
    for m in members:
        n_cases *= len(m.cases)
    rho = portfolio_rho(members)
    set_design({"portfolio": name, "members": specs, "configured_rho": _exact_text(rho), "n_cases": n_cases})
    check_family_cost(n_cases, len(args.deltas or [1]), len(args.alphas or []), "--member", specs)
    check_out_folder(args.out, "product")
    cases = portfolio_cases(members)
    bar = _progress(args)
    try:
        rows = family_rows(cases, rho, args.deltas or ["1e-10"], rel_tol=args.rel_tol, progress=bar)
    finally:
        bar.close()
    trade = family_tradeoff(cases, args.alphas, rel_tol=args.rel_tol) if args.alphas else []
    head = {"portfolio": args.run if not args.members else "custom", "members": specs,
            "member_rho": {m.name: _exact_text(m.configured_rho) for m in members},
            "configured_rho": _exact_text(rho), "n_cases": len(cases),
            "cases": {str(k): c.label for k, c in enumerate(cases, start=1)}}
    return _report(head, rows, trade, list(range(1, len(cases) + 1)), args)


def _report(head, rows, trade, numbers, args) -> int:
    pts = [{"delta": decimal_str(r.delta_target), "eps_bun_steinke": decimal_str(r.eps_bun_steinke),
            "eps_cks": decimal_str(r.eps_cks), "eps_exact": decimal_str(r.value),
            "eps_exact_lower": decimal_str(r.eps_lower), "eps_exact_upper": decimal_str(r.eps_upper),
            "eps_worst_case": numbers[r.eps_case - 1], "delta_at_eps_bun_steinke": decimal_str(r.delta_upper),
            "delta_at_eps_bun_steinke_lower": decimal_str(r.delta_lower),
            "delta_worst_case": numbers[r.delta_case - 1], "certification": r.certification} for r in rows]
    tps = [{"alpha": decimal_str(t.alpha), "beta": decimal_str(t.value), "beta_upper": decimal_str(t.upper),
            "worst_case": numbers[t.case - 1]} for t in trade]
    if args.out:  # the page (exactdp/report/products.py)
        from exactdp.report.products import write_family_report

        head = {**head, "report": str(write_family_report(args.out, head, rows, trade, numbers,
                                                          source=getattr(args, "product", None)))}
    if args.json:  # the one envelope: command, design, points, then this command's keys
        emit_result(pts, tradeoff=tps, **head)
        return 0
    name = head.get("product") or f"portfolio ({head['portfolio']}: {', '.join(head['members'])})"
    print(f"{name}: configured zCDP ρ = {head['configured_rho']}; {len(numbers)} case(s)")
    f = lambda x: decimal_str(x, 10)  # noqa: E731 - short display format
    for r, p in zip(rows, pts):
        print(f"δ = {decimal_str(r.delta_target, 6)}: ε Bun–Steinke {f(r.eps_bun_steinke)}, CKS {f(r.eps_cks)}; "
              "exact ε ∈ "
              f"[{f(r.eps_lower)}, {f(r.eps_upper)}] (case {p['eps_worst_case']}); exact δ at the Bun–Steinke ε ∈ "
              f"[{decimal_str(r.delta_lower, 6)}, {decimal_str(r.delta_upper, 6)}] (case {p['delta_worst_case']}); "
              f"{r.certification}")
    for t, p in zip(trade, tps):
        print(f"α = {p['alpha']}: β ≥ {decimal_str(t.value, 10)} "
              f"(≤ {decimal_str(t.upper, 10)}, case {p['worst_case']})")
    if args.out:
        print(f"wrote {head['report']}")
    return 0


def _write_mechanisms(prod, numbers, args) -> int:
    from pathlib import Path

    from exactdp.numerics.exact import InputError, fraction_str

    if len(numbers) != 1:
        raise InputError("--cases", args.cases, "--write-mechanisms needs exactly one case, e.g. --cases 1")
    comp = prod.case_composition(numbers[0], args.budget_rule)
    lines = [f"# {prod.name} case {numbers[0]}: {prod.case_label(numbers[0])}",
             f"# budget rule {args.budget_rule or prod.budget_rule}; zCDP rho = {fraction_str(comp.rho)}"]
    for m, c in comp.groups:
        lines += ["", "[[mechanism]]", f'sigma2 = "{fraction_str(m.sigma2)}"', f"shift = {m.shift}", f"count = {c}"]
    Path(args.write_mechanisms).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.write_mechanisms}: {comp.size} mechanisms in {len(comp.groups)} groups")
    return 0
