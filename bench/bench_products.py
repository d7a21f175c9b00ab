#!/usr/bin/env python
"""Every 2020 Census product and the portfolio, exactly: one ``exactdp product`` /
``exactdp portfolio`` run each, under both budget rules, timed; a markdown table.

Usage::

    python bench/bench_products.py [--timeout 900] [--rules decimal,tumult-float] > bench/products.md

Each run is a fresh ``exactdp`` process (Numba cache warm after the first), wall and CPU
seconds of the process, the load average before and after.  A run the engine refuses
(exit 3) or that exceeds ``--timeout`` is reported with its message.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

PRODUCTS = ["safetab-p-2020-us", "safetab-p-2020-pr", "safetab-h-2020-us", "safetab-h-2020-pr",
            "phsafe-2020-us", "phsafe-2020-pr"]
PORTFOLIOS = [["portfolio", "--run", "us"], ["portfolio", "--run", "pr"]]


def _run(argv, timeout):
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        out = subprocess.run([sys.executable, "-m", "exactdp", *argv, "--json", "--quiet"], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout} s", time.perf_counter() - t0, float("nan")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        return None, f"exit {out.returncode}: {out.stderr.strip()[:300]}", wall, cpu
    return json.loads(out.stdout), None, wall, cpu


def _short(text: str, digits: int) -> str:
    """A decimal string from the JSON at ``digits`` significant digits (display only)."""
    import mpmath

    with mpmath.workdps(digits + 10):
        return mpmath.nstr(mpmath.mpf(text), digits, min_fixed=-4, max_fixed=6)


def _rho_text(text: str) -> str:
    if "/" not in text:
        return text
    from fractions import Fraction

    return f"{text} ≈ {float(Fraction(text)):.6f}"


def _row(name, rule, res, err, wall, cpu):
    if res is None:
        return f"| {name} | {rule} | | | | | | {err} | {wall:.1f} | {cpu:.1f} |"
    p = res["points"][0]
    return (f"| {name} | {rule} | {_rho_text(res['configured_rho'])} | {_short(p['eps_bun_steinke'], 10)} | "
            f"{_short(p['eps_cks'], 10)} | [{_short(p['eps_exact_lower'], 13)}, {_short(p['eps_exact_upper'], 13)}] "
            f"(case {p['eps_worst_case']}) | {_short(p['delta_at_eps_bun_steinke'], 6)} | {p['certification']} | "
            f"{wall:.1f} | {cpu:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--rules", default="decimal,tumult-float")
    ap.add_argument("--skip-portfolio", action="store_true")
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    print()
    print("| product | budget rule | configured ρ | ε Bun–Steinke | ε CKS | exact ε(1e-10) | exact δ at ε_BS | "
          "certification | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    jobs = [([p], p) for p in PRODUCTS]
    if not args.skip_portfolio:
        jobs += [(list(a), f"portfolio {a[-1]}") for a in PORTFOLIOS]
    for rule in args.rules.split(","):
        for argv_, name in jobs:
            cmd = (["product"] + argv_ if argv_[0] != "portfolio" else argv_) + ["--budget-rule", rule]
            print(_row(name, rule, *_run(cmd, args.timeout)), flush=True)
    print()
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
