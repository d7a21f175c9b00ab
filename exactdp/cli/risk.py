"""`exactdp risk`: Bayesian disclosure risk of noisy counts (Kazan and Reiter), exact.

Subcommands: ``posterior``, ``expected``, ``decision``, ``hierarchical``, ``sweep``.
Heavy imports happen inside the command functions.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import Any

from exactdp.cli._common import Parser, decimal_str, emit_result, rational_type

#: budgets the risk commands accept (outside, σ² = 1/(2ρ) leaves the engine's float range)
RHO_RANGE = (Fraction(1, 10**300), Fraction(10**300))

_DIGITS = 20


def _fs(frac) -> str:
    from exactdp.numerics.exact import fraction_str

    return fraction_str(frac)


def _num(x) -> str:
    return decimal_str(x, _DIGITS)


def _add_common(p, *, priors: bool = True, rho1: bool = True):
    if rho1:
        p.add_argument(
            "--rho1", type=rational_type("--rho1", lo=RHO_RANGE[0], hi=RHO_RANGE[1]), default=None, metavar="RHO",
            help="budget of the block count (rational or decimal string); default: the preset's block GVHR ρ",
        )
    p.add_argument(
        "--preset", choices=("paper", "production"), default="paper",
        help="ρ_global for defaults: paper = 2.56, production = (542/339)^2 (default paper)",
    )
    p.add_argument(
        "--convention", choices=("paper", "production"), default="paper",
        help="noise variance: paper σ²=1/(2ρ), production σ²=1/ρ (default paper)",
    )
    if priors:
        p.add_argument(
            "--p", dest="priors", action="append", type=_prior_type, metavar="P",
            help="adversary's prior (repeatable); default 1/2 1/5 1/10 1/50 1/864",
        )
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points"}')


def _prior_type(text: str):
    """argparse type: an exact rational strictly between 0 and 1."""
    import argparse

    value = rational_type("p")(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"p={text!r}: must be strictly between 0 and 1")
    return value


_prior_type.__name__ = "p"


def _priors(args, default=None):
    from exactdp.risk._validate import check_prior
    from exactdp.risk.single import DEFAULT_PRIORS

    vals = args.priors if args.priors else (default if default is not None else DEFAULT_PRIORS)
    return tuple(check_prior(v) for v in vals)


def _rho1(args):
    from exactdp.risk.presets import preset

    return args.rho1 if args.rho1 is not None else preset(args.preset).rho_block


def _rho2(args):
    from exactdp.risk.presets import preset

    return args.rho2 if args.rho2 is not None else preset(args.preset).rho_block_group


def _header(args, rho1) -> str:
    from exactdp.risk.single import convention_label

    return (f"# convention: {args.convention} ({convention_label(args.convention)}); "
            f"rho1 = {_fs(rho1)} ≈ {float(rho1):.6g}")


# ---------------------------------------------------------------- posterior
def _cmd_posterior(args) -> int:
    from exactdp.numerics.exact import InputError
    from exactdp.risk.single import posterior_curve

    rho1 = _rho1(args)
    if args.x_max < args.x_min:
        raise InputError("x_max", args.x_max, f"must be ≥ --x-min ({args.x_min})")
    if args.x_max - args.x_min > 10000:
        raise InputError("x_max", args.x_max, "at most 10000 values per call")
    xs = range(args.x_min, args.x_max + 1)
    curves = {p: posterior_curve(xs, p, rho1, convention=args.convention, known=args.known) for p in _priors(args)}
    if args.plot:
        from exactdp.risk.plots import plot_posterior_curve

        plot_posterior_curve(curves, args.plot)
    if args.json:
        emit_result(
            design={"convention": args.convention, "rho1": _fs(rho1), "known": args.known},
            points=[
                {
                    "p": _fs(p),
                    "error_bound": _num(max(pt.error_bound for pt in pts)),
                    "points": [
                        {
                            "x_star": pt.x_star,
                            "posterior": _num(pt.posterior),
                            "risk": _num(pt.risk),
                            "prob_if_has": _num(pt.prob_if_has),
                            "prob_if_lacks": _num(pt.prob_if_lacks),
                        }
                        for pt in pts
                    ],
                }
                for p, pts in curves.items()
            ],
        )
        return 0
    print(_header(args, rho1) + f"; known = {args.known}")
    for p, pts in curves.items():
        print(f"p = {_fs(p)}   (absolute error ≤ {float(max(pt.error_bound for pt in pts)):.1e})")
        print(f"  {'x*':>5} {'posterior':>22} {'risk':>22} {'P[x*|has]':>12} {'P[x*|lacks]':>12}")
        for pt in pts:
            print(
                f"  {pt.x_star:>5} {_num(pt.posterior):>22} {_num(pt.risk):>22} "
                f"{decimal_str(pt.prob_if_has, 6):>12} {decimal_str(pt.prob_if_lacks, 6):>12}"
            )
    return 0


# ---------------------------------------------------------------- expected
def _cmd_expected(args) -> int:
    from exactdp.risk.single import expected_risk

    rho1 = _rho1(args)
    res = [expected_risk(p, rho1, convention=args.convention, target_has=not args.lacks) for p in _priors(args)]
    if args.json:
        emit_result(
            design={"convention": args.convention, "rho1": _fs(rho1), "target_has": not args.lacks},
            points=[
                {
                    "p": _fs(r.p),
                    "expected_posterior": _num(r.expected_posterior),
                    "expected_risk": _num(r.expected_risk),
                    "risk_error_bound": _num(r.error_bound),
                    "truncation_bound": _num(r.truncation_bound),
                }
                for r in res
            ],
        )
        return 0
    print(_header(args, rho1) + f"; truth: the target {'lacks' if args.lacks else 'has'} c")
    print(f"{'p':>8} {'E[posterior]':>24} {'E[R]':>24} {'error(R) ≤':>10}")
    for r in res:
        print(f"{_fs(r.p):>8} {_num(r.expected_posterior):>24} {_num(r.expected_risk):>24} "
              f"{float(r.error_bound):>10.1e}")
    return 0


# ---------------------------------------------------------------- decision
def _cmd_decision(args) -> int:
    from exactdp.risk.attacks import assess_attack

    rho1 = _rho1(args)
    res = [assess_attack(args.attack, p, rho1, convention=args.convention, known=args.known) for p in _priors(args)]
    if args.json:
        emit_result(
            design={"convention": args.convention, "rho1": _fs(rho1), "attack": args.attack, "known": args.known},
            points=[
                {
                    "p": _fs(a.prior),
                    "p_correct": _num(a.decision.p_correct),
                    "expected_risk": _num(a.decision.expected_risk),
                    "threshold": a.decision.threshold,
                    "p_correct_if_lacks": _num(a.decision.p_correct_if_lacks),
                    "p_correct_overall": _num(a.decision.p_correct_overall),
                    "error_bound": _num(a.decision.error_bound),
                    "expected_risk_error_bound": _num(a.decision.expected_risk_error_bound),
                }
                for a in res
            ],
        )
        return 0
    print(_header(args, rho1) + f"; attack: {args.attack}; known = {args.known}")
    print(f"{'p':>8} {'x̃*':>5} {'P[correct | has]':>24} {'E[R | has]':>24} {'error ≤':>8}")
    for a in res:
        d = a.decision
        print(f"{_fs(a.prior):>8} {d.threshold:>5} {_num(d.p_correct):>24} {_num(d.expected_risk):>24} "
              f"{float(d.error_bound):>8.1e}")
    return 0


# ---------------------------------------------------------------- hierarchical
def _setup(args, p):
    from exactdp.risk.hierarchical import HierarchicalSetup

    return HierarchicalSetup(
        rho1=_rho1(args), rho2=_rho2(args), d=args.d, p=p, convention=args.convention,
        y_noise=args.y_noise, model=args.model, known=args.known,
    )


def _cmd_hierarchical(args) -> int:
    import numpy as np

    from exactdp.numerics.exact import InputError
    from exactdp.risk.gibbs import gibbs_posterior
    from exactdp.risk.hierarchical import decision_curve, decision_map, hierarchical_posterior

    if args.d < 1:
        raise InputError("d", args.d, "must be a positive integer")
    if args.gibbs is not None and args.gibbs < 1:
        raise InputError("gibbs", args.gibbs, "must be a positive number of draws per chain")
    out = []
    for p in _priors(args, default=("1/2",)):
        s = _setup(args, p)
        x1s, x2s, y1s = args.data
        hp = hierarchical_posterior(s, x1s, x2s, y1s)
        entry: dict[str, Any] = {
            "p": _fs(p),
            "data": [x1s, x2s, y1s],
            "posterior": _num(hp.posterior),
            "risk": _num(hp.risk),
            "single_level_posterior": _num(hp.single_level_posterior),
            "error_bound": _num(hp.error_bound),
            "method": hp.method,
            "x2_posterior": {str(v): _num(pr) for v, pr in zip(hp.x2_values, hp.x2_probs) if pr > 1e-6},
        }
        if args.gibbs:
            g = gibbs_posterior(s, x1s, x2s, y1s, n_samples=args.gibbs, burn_in=max(10, args.gibbs // 10),
                                n_chains=args.chains, rng=np.random.default_rng(args.seed))
            entry["gibbs"] = {
                "posterior": _num(g.posterior),
                "standard_error": _num(g.standard_error),
                "z": _num((g.posterior - float(hp.posterior)) / g.standard_error) if g.standard_error > 0 else "nan",
                "draws": g.n_samples * g.n_chains,
                "seed": args.seed,
            }
        curve = decision_curve(s, args.x2) if args.x2 else ()
        entry["decision_probabilities"] = [
            {
                "x2": c.truth[1],
                "p_correct": _num(c.estimate),
                "single_level": _num(c.single_level),
                "changed_correct": _num(c.changed_correct),
                "changed_incorrect": _num(c.changed_incorrect),
                "left_out": _num(c.left_out),
                "error_bound": _num(c.error_bound),
            }
            for c in curve
        ]
        if args.plot:
            from exactdp.risk.plots import plot_decision_curve, plot_decision_map

            k = args.known
            dm = decision_map(s, x1_stars=(k, k + 1), x2_stars=range(k - 3, k + 6), y1_stars=range(-30, 31))
            plot_decision_map(dm, args.plot, stem=f"risk_decision_map_p{p.numerator}_{p.denominator}")
            if curve:
                plot_decision_curve(curve, args.plot, stem=f"risk_decision_vs_x2_p{p.numerator}_{p.denominator}")
        out.append((s, entry))
    s0 = out[0][0]
    meta = {
        "convention": args.convention,
        "rho1": _fs(s0.rho1),
        "rho2": _fs(s0.rho2),
        "d": s0.d,
        "y_noise": s0.y_noise,
        "model": s0.model,
        "known": s0.known,
    }
    if args.json:
        emit_result([e for _, e in out], design=meta)
        return 0
    print(f"# {meta}")
    for _, e in out:
        print(
            f"p = {e['p']}  D = {tuple(e['data'])}: posterior {e['posterior']} (error ≤ {float(e['error_bound']):.1e}, "
            f"{e['method']}); block only {e['single_level_posterior']}"
        )
        if "gibbs" in e:
            gg = e["gibbs"]
            print(f"  Gibbs: {gg['posterior']} ± {float(gg['standard_error']):.2g} "
                  f"(z = {float(gg['z']):.2f}, {gg['draws']} draws)")
        for c in e["decision_probabilities"]:
            print(
                f"  x2 = {c['x2']:>4}: P[correct] = {c['p_correct']}  (block only {float(c['single_level']):.12f}; "
                f"left out ≤ {float(c['left_out']):.1e}, error ≤ {float(c['error_bound']):.1e})"
            )
    return 0


# ---------------------------------------------------------------- sweep
def _cmd_sweep(args) -> int:
    from exactdp.numerics.exact import InputError
    from exactdp.risk.presets import preset

    if args.over == "rho1":
        priors = _priors(args)
        from exactdp.risk.sweep import sweep_rho1

        rows = sweep_rho1(args.grid or None, priors, convention=args.convention)
        if args.plot:
            from exactdp.risk.plots import plot_rho1_sweep

            plot_rho1_sweep(rows, args.plot)
        data = [
            {
                "rho1": _fs(r.rho1), "p": _fs(r.p), "threshold": r.threshold, "p_correct": _num(r.p_correct),
                "expected_posterior": _num(r.expected_posterior), "expected_risk": _num(r.expected_risk),
                "error_bound": _num(r.error_bound), "risk_error_bound": _num(r.risk_error_bound),
            }
            for r in rows
        ]
    elif args.over == "rho2":
        from exactdp.risk.sweep import sweep_rho2

        data = []
        for p in _priors(args, default=("1/2",)):  # the paper's Figure 6 uses p = 1/2
            rows = sweep_rho2(_setup(args, p), args.grid or None, tuple(args.x2 or (1, 10, 100)))
            if args.plot:
                from exactdp.risk.plots import plot_rho2_sweep

                plot_rho2_sweep(rows, args.plot, stem=f"risk_decision_vs_rho2_p{p.numerator}_{p.denominator}")
            data += [
                {"p": _fs(p), "rho2": _fs(r.rho2), "x2": r.x2, "p_correct": _num(r.estimate),
                 "single_level": _num(r.single_level), "left_out": _num(r.left_out), "error_bound": _num(r.error_bound)}
                for r in rows
            ]
    else:
        from exactdp.risk.sweep import sweep_ell

        if not 1 <= args.ell_max <= 6:
            raise InputError("ell_max", args.ell_max, "must be in 1..6")
        rhos = preset(args.preset).level_rhos(args.ell_max)
        if args.rho1 is not None:
            rhos = (args.rho1,) + rhos[1:]
        res = sweep_ell(rhos, _priors(args), convention=args.convention)
        if args.plot:
            from exactdp.risk.plots import plot_uniqueness

            plot_uniqueness(res, args.plot)
        data = [
            {"p": _fs(r.p), "ell": r.ell, "expected_posterior": _num(r.expected_posterior),
             "expected_risk": _num(r.expected_risk), "p_correct": _num(r.p_correct),
             "error_bound": _num(r.error_bound), "p_correct_error_bound": _num(r.p_correct_error_bound)}
            for r in res
        ]
    if args.json:
        emit_result(data, design={"over": args.over, "convention": args.convention, "preset": args.preset})
        return 0
    if not data:  # pragma: no cover
        return 0
    keys = list(data[0])
    print(f"# sweep over {args.over}; convention {args.convention}; preset {args.preset}")
    print("\t".join(keys))
    for row in data:
        print("\t".join(str(row[k]) for k in keys))
    return 0


def _int(field: str):
    from exactdp.cli._common import rational_type

    conv = rational_type(field)

    def convert(text: str) -> int:
        import argparse

        v = conv(text)
        if v.denominator != 1:
            raise argparse.ArgumentTypeError(f"{field}={text!r}: must be an integer")
        return int(v)

    convert.__name__ = field
    return convert


def register(subparsers) -> None:
    """Add ``exactdp risk`` and its subcommands."""
    p = subparsers.add_parser(
        "risk",
        help="Bayesian disclosure risk of noisy counts (Kazan and Reiter), exact",
        description=(
            "Posterior, risk ratio, expected risk and Bayes-decision probabilities of an adversary "
            "who knows all but one record of a block, computed by exact summation "
            "(Kazan and Reiter, arXiv 2204.04253)."
        ),
    )
    sub = p.add_subparsers(dest="risk_command", metavar="SUBCOMMAND", parser_class=Parser)
    sub.required = True

    sp = sub.add_parser("posterior", help="posterior and risk ratio vs the released x*")
    _add_common(sp)
    sp.add_argument("--known", type=_int("known"), default=0, help="known count x_{1,-t} (default 0)")
    sp.add_argument("--x-min", type=_int("x_min"), default=-5)
    sp.add_argument("--x-max", type=_int("x_max"), default=8)
    sp.add_argument("--plot", metavar="DIR", help="write the figure (PNG and PDF) into DIR")
    sp.set_defaults(func=_cmd_posterior)

    sp = sub.add_parser("expected", help="expected posterior and risk over the release, given the truth")
    _add_common(sp)
    sp.add_argument("--lacks", action="store_true", help="condition on the target lacking c instead")
    sp.set_defaults(func=_cmd_expected)

    sp = sub.add_parser("decision", help="Bayes decision threshold and probability of a correct decision")
    _add_common(sp)
    sp.add_argument("--known", type=_int("known"), default=0)
    sp.add_argument(
        "--attack", choices=("characteristics", "participation", "misreporting", "unknown-variable"),
        default="characteristics", help="attack whose prior --p is (supplement §S1.2)",
    )
    sp.set_defaults(func=_cmd_decision)

    sp = sub.add_parser("hierarchical", help="block + block-group posterior and decision probabilities")
    _add_common(sp)
    _add_hier(sp)
    sp.add_argument("--data", nargs=3, type=_int("data"), default=[2, 1, -1], metavar=("X1S", "X2S", "Y1S"),
                    help="released (x1*, x2*, y1*) (default 2 1 -1, the paper's Table 7)")
    sp.add_argument("--x2", type=_int("x2"), action="append",
                    help="true block-group count for the exact decision probability (repeatable)")
    sp.add_argument("--gibbs", type=_int("gibbs"), default=None, metavar="N",
                    help="also run the paper's Gibbs sampler with N kept draws per chain")
    sp.add_argument("--chains", type=_int("chains"), default=32)
    sp.add_argument("--seed", type=_int("seed"), default=20220408)
    sp.add_argument("--plot", metavar="DIR", help="decision map over (x2*, y1*) and the curve vs x2")
    sp.set_defaults(func=_cmd_hierarchical)

    sp = sub.add_parser("sweep", help="sweeps over rho1, rho2 or ell (uniqueness attack)")
    _add_common(sp)
    _add_hier(sp)
    sp.add_argument("--over", choices=("rho1", "rho2", "ell"), default="rho1")
    sp.add_argument("--grid", type=rational_type("--grid", lo=RHO_RANGE[0], hi=RHO_RANGE[1]), action="append",
                    metavar="RHO",
                    help="grid value of the swept ρ (repeatable; default a built-in grid)")
    sp.add_argument("--x2", type=_int("x2"), action="append", help="true x2 values for --over rho2 (default 1 10 100)")
    sp.add_argument("--ell-max", type=_int("ell_max"), default=6)
    sp.add_argument("--plot", metavar="DIR", help="write the figure (PNG and PDF) into DIR")
    sp.set_defaults(func=_cmd_sweep)


def _add_hier(sp):
    sp.add_argument("--rho2", type=rational_type("--rho2", lo=RHO_RANGE[0], hi=RHO_RANGE[1]), default=None,
                    metavar="RHO",
                    help="budget of the block-group count; default: the preset's block-group GVHR ρ")
    sp.add_argument("--d", type=_int("d"), default=27, help="number of sibling blocks in Y1* (default 27)")
    sp.add_argument("--y-noise", choices=("approx", "exact"), default="approx",
                    help="adversary's model of the Y1* noise (default approx, the paper's)")
    sp.add_argument("--model", choices=("joint", "gibbs-variant"), default="joint",
                    help="joint: coherent posterior; gibbs-variant: sampler without 1{X1<=X2} in the X1 update")
    if "--known" not in sp._option_string_actions:
        sp.add_argument("--known", type=_int("known"), default=0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
