"""``exactdp release``: the whole 2020 release for a record change (DHC ∘ P.L. 94-171)."""

from __future__ import annotations

from exactdp.cli._common import (
    add_pair_arguments,
    check_out_folder,
    decimal_str,
    emit_result,
    rational_type,
    set_design,
)

__all__ = ["register"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "release", help="whole release: DHC persons pair composed with the P.L. 94-171 persons chain",
        description="A person's record feeds both the P.L. 94-171 and the DHC persons files. For each "
                    "DHC pair and target δ: the Bureau's ε from the summed ρ (Bun–Steinke), and the "
                    "exact δ at that ε and exact ε at that δ as certified brackets (≤ 2.5e-10 relative wide; "
                    "lattice-free smoothed inversion, the composed lattice being beyond 64 bits).")
    p.add_argument("--allocation", default="dhc-persons-2020", metavar="NAME|FILE", help="DHC allocation")
    p.add_argument("--pl94", default="pl94-persons-2020", metavar="NAME|FILE", help="P.L. 94-171 allocation")
    add_pair_arguments(p, many=True, default="13-13")
    p.add_argument("--delta", dest="deltas", action="append",
                   type=rational_type("--delta", lo=0, hi=1, lo_open=True, hi_open=True), metavar="D",
                   help="target δ (repeatable; default 1e-10)")
    p.add_argument("--out", metavar="DIR", help="also write release_brackets.csv, a figure and report.html into DIR")
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points"}')
    p.set_defaults(func=_run)


def _run(args) -> int:
    from fractions import Fraction

    from exactdp.census.allocations import load_allocation, parse_pair_spec
    from exactdp.census.release import release_rows
    from exactdp.cli._common import parse_pairs
    from exactdp.numerics.exact import fraction_str

    set_design({"allocation": args.allocation, "pl94": args.pl94})
    alloc = load_allocation(args.allocation)
    pairs = parse_pairs(args, alloc.n_paths) or parse_pair_spec("13-13", alloc.n_paths)
    set_design({"allocation": alloc.name, "pl94": args.pl94, "pairs": [f"{i}-{j}" for i, j in pairs]})
    deltas = args.deltas or [Fraction(1, 10**10)]
    check_out_folder(args.out, "release")
    rows = release_rows(alloc, pairs, deltas, args.pl94)
    if args.out:
        from exactdp.report import write_release_report

        write_release_report(args.out, rows, alloc, load_allocation(args.pl94))
    pts = [{"pair": f"{r.pair[0]}-{r.pair[1]}", "delta": decimal_str(r.delta_target),
            "rho_total": fraction_str(r.rho_total), "eps_bureau": decimal_str(r.eps_bureau),
            "delta_exact_lower": decimal_str(r.delta_lower), "delta_exact_upper": decimal_str(r.delta_upper),
            "eps_exact_lower": decimal_str(r.eps_lower), "eps_exact_upper": decimal_str(r.eps_upper),
            "certification": r.certification} for r in rows]
    if args.json:
        emit_result(pts)
        return 0
    print("whole release (DHC pair ∘ P.L. 94-171 chain): Bureau's ρ-sum ε vs the exact guarantee "
          "(certified brackets)")
    for r in rows:
        f = lambda x: decimal_str(x, 9)  # noqa: E731 - short display format
        print(f"pair {r.pair[0]}-{r.pair[1]}  δ={f(r.delta_target)}  ρ={fraction_str(r.rho_total)}  "
              f"ε_Bureau={f(r.eps_bureau)}  exact δ(ε_Bureau) ∈ [{f(r.delta_lower)}, {f(r.delta_upper)}]  "
              f"exact ε(δ) ∈ [{f(r.eps_lower)}, {f(r.eps_upper)}]")
    return 0
