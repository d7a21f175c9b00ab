"""The sweep's per-pair post-processing: fast path against the former mpmath-context code.

For each pair: the accountant's 802 trade-off vertices (computed once, not timed), then
``exactdp.sweep.pair.tradeoff_rows`` (vertex texts, bounds, the 401-point α grid, as CSV text) and the
reference implementation kept in ``tests/test_sweep_format.py`` (the former code:
``fmt(mpmath.exp(mpf(log)), 25)``, Fraction-based ``fmt_bound``, mpf interpolation with
bisect), alternately, ``--repeat`` times each; CPU time (``time.process_time``), minimum and
median.  Asserts the two outputs are identical.

    python bench/bench_sweep_postproc.py --pairs 13-13,6-10,24-24,5-17,1-1 --repeat 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="13-13,6-10,24-24,5-17,1-1")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()

    from test_sweep_format import ref_tradeoff_rows

    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.sweep.pair import SweepSettings, tradeoff_rows, tradeoff_thresholds

    alloc = load_allocation("dhc-persons-2020")
    s = SweepSettings()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("pair   vertices  former min/median (ms)  fast min/median (ms)  ratio of minima")
    for spec in args.pairs.split(","):
        i, j = map(int, spec.split("-"))
        acc = ExactAccountant(Composition.from_rhos(tuple(alloc.pair_rhos(i, j))), rel_tol=s.rel_tol)
        verts = acc.tradeoff_vertices(tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min))
        old_t, new_t = [], []
        for _ in range(args.repeat):
            t0 = time.process_time()
            ref_t, ref_g = ref_tradeoff_rows(verts, s)
            t1 = time.process_time()
            tradeoff_csv, grid_csv, _ = tradeoff_rows(verts, s)
            t2 = time.process_time()
            old_t.append(t1 - t0)
            new_t.append(t2 - t1)
            assert tradeoff_csv == "".join(",".join(map(str, r)) + "\n" for r in ref_t)
            assert grid_csv == "".join(",".join(map(str, r)) + "\n" for r in ref_g)
        o, n = min(old_t), min(new_t)
        print(f"{spec:6s} {len(verts):8d}  {o * 1e3:8.1f} / {statistics.median(old_t) * 1e3:6.1f}"
              f"        {n * 1e3:6.1f} / {statistics.median(new_t) * 1e3:5.1f}        {o / n:5.1f}x")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
