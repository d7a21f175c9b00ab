"""CPU time of a sweep pair's work outside the accounting: thresholds, texts, worker setup.

For each pair the accountant's outputs (42 δ(ε) points, 42 ε(δ) points, the 802 trade-off
vertices) are computed once and not timed; then, ``--repeat`` times each, the steps of
``exactdp.sweep.pair.compute_pair`` that follow or surround the accountant's calls are timed
with ``time.process_time`` (minimum over the repeats):

* ``thresholds``: ``tradeoff_thresholds`` (the 801 offsets of the symmetric set);
* ``curve``: the ε–δ rows and their CSV text;
* ``tradeoff``: the trade-off and grid CSV texts (vertex texts, bounds, 401-point α grid);
* ``settings``: what the worker does per task besides ``compute_pair`` (``_task`` with the
  pair computation replaced by a no-op: settings from the dict, thread cap).

The script runs against whichever exactdp is installed, so the same command times two
versions (here: main and the branch, one after the other in the same hour)::

    python bench/bench_sweep_overhead.py --pairs 13-13,6-10,24-24,5-17,1-1 --repeat 15
"""

from __future__ import annotations

import argparse
import math
import os
import time


def _best(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="13-13,6-10,24-24,5-17,1-1")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.sweep import driver, pair

    alloc = load_allocation("dhc-persons-2020")
    s = pair.SweepSettings()
    deltas = list(s.deltas)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("pair    thresholds   curve   tradeoff   settings   (ms of CPU, min of repeats)")
    totals = [0.0] * 4
    for spec in args.pairs.split(","):
        i, j = map(int, spec.split("-"))
        acc = ExactAccountant(Composition.from_rhos(tuple(alloc.pair_rhos(i, j))), rel_tol=s.rel_tol)
        ks = pair.tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min)
        verts = acc.tradeoff_vertices(ks)
        dpts = acc.delta([bun_steinke_epsilon(acc.rho, d) for d in deltas])
        epts = acc.epsilon(deltas)

        def curve():
            rows = pair._curve_rows(i, j, deltas, dpts, epts)[0]
            return pair._csv(rows)

        def tradeoff():
            t, g, _ = pair.tradeoff_rows(verts, s)
            return (t, g) if isinstance(t, str) else (pair._csv(t), pair._csv(g))

        real = driver.compute_pair
        driver.compute_pair = lambda *a: None
        try:
            sdict = s.as_dict()
            setup = _best(lambda: [driver._task("pair", i, j, (), sdict) for _ in range(10)], args.repeat) / 10
        finally:
            driver.compute_pair = real
        times = [_best(lambda: pair.tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min), args.repeat),
                 _best(curve, args.repeat), _best(tradeoff, args.repeat), setup]
        totals = [a + b for a, b in zip(totals, times)]
        print(f"{spec:6s}  " + "  ".join(f"{t * 1e3:9.2f}" for t in times) + f"   sum {sum(times) * 1e3:6.2f}")
    n = len(args.pairs.split(","))
    print("mean    " + "  ".join(f"{t / n * 1e3:9.2f}" for t in totals) + f"   sum {sum(totals) / n * 1e3:6.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
