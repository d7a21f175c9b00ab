#!/usr/bin/env python
"""Reproduce the seed paper's figures from the outputs of ``exactdp sweep``.

Usage::

    exactdp sweep --out exactdp-results            # the 946-pair DHC persons sweep
    python scripts/reproduce_figures.py exactdp-results [--proxy 13-13] [--out figures]

Writes (PNG and PDF) into ``--out`` (default ``DIR/figures``):

* ``fig_eps_delta``: the Bureau's zCDP ε–δ curve against the exact overall curve;
* ``fig_tradeoff``: the overall trade-off curve (envelope of all pairs) with the GDP curve;
* ``fig_proxy_sensitivity``: the relative gap, in percent, between the proxy pair's δ(ε)
  (the full chain 13-13 by default) and the maximum over all pairs, per target δ, at the
  Bureau's ε; the numbers also go to ``proxy_sensitivity.csv``.

Every number is read from the sweep's files; nothing is recomputed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mpmath

from exactdp.runs.files import atomic_write_text, read_csv, read_json
from exactdp.sweep.plots import plot_eps_delta, plot_proxy_sensitivity, plot_tradeoff


def _table(dict_rows):
    head = tuple(dict_rows[0])
    return [head] + [tuple(r[h] for h in head) for r in dict_rows]


def proxy_gaps(sweep_dir: Path, proxy: str):
    """Rows (δ, δ_proxy, δ_max, argmax, gap %) with gap = (δ_max − δ_proxy)/δ_max·100."""
    i, j = proxy.split("-")
    pfile = sweep_dir / "pairs" / f"pair_{int(i)}_{int(j)}.csv"
    if not pfile.is_file():
        raise SystemExit(f"reproduce_figures: the sweep in {sweep_dir} has no pair {proxy}")
    pair = {r["delta_target"]: r for r in read_csv(pfile)}
    out = []
    with mpmath.workdps(30):
        for s in read_csv(sweep_dir / "summary.csv"):
            p = mpmath.mpf(pair[s["delta_target"]]["delta_exact"])
            m = mpmath.mpf(s["delta_overall"])
            out.append((s["delta_target"], p, m, s["delta_argmax_pair"], (m - p) / m * 100))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep_dir", type=Path, help="output folder of `exactdp sweep`")
    ap.add_argument("--proxy", default="13-13", help="the proxy pair (default 13-13, the full chain)")
    ap.add_argument("--out", type=Path, help="figure folder (default SWEEP_DIR/figures)")
    args = ap.parse_args(argv)
    d = args.sweep_dir
    out = args.out or d / "figures"
    man = read_json(d / "manifest.json")
    rho = man["allocation"]["total_rho"]
    from fractions import Fraction

    rho = Fraction(rho)
    paths = plot_eps_delta(_table(read_csv(d / "summary.csv")), out, stem="fig_eps_delta", rho=rho)
    paths += plot_tradeoff(_table(read_csv(d / "envelope.csv")), out, stem="fig_tradeoff", rho=rho)
    gaps = proxy_gaps(d, args.proxy)
    from exactdp.sweep.pair import fmt

    lines = ["delta_target,delta_proxy,delta_overall,argmax_pair,gap_percent"]
    lines += [f"{t},{fmt(p)},{fmt(m)},{a},{fmt(g, 8)}" for t, p, m, a, g in gaps]
    atomic_write_text(out / "proxy_sensitivity.csv", "\n".join(lines) + "\n")
    paths += plot_proxy_sensitivity([float(mpmath.mpf(t)) for t, *_ in gaps], [float(g) for *_, g in gaps], out,
                                    label=args.proxy, stem="fig_proxy_sensitivity")
    for p in paths + [out / "proxy_sensitivity.csv"]:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
