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

``--driver SWEEP_DIR`` times, side by side in one run, the driver's set-up of the 946 DHC
tasks (each pair's ρ and composition key: ``Allocation.pair_rhos`` + ``composition_key``
per pair against the driver's per-path memos) and the assembly of a finished sweep's
pair files (copied to a temporary folder): serial against the helper process of
``exactdp.sweep.assist`` (whose GDP column is ready, as after the compute phase); wall
clock and this process's CPU.  The outputs of both assemblies are compared byte for byte.
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
    ap.add_argument("--driver", metavar="SWEEP_DIR", help="time the driver set-up and the assembly instead")
    args = ap.parse_args()
    if args.driver:
        return driver_overhead(args.driver, args.repeat)

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


def driver_overhead(src: str, repeat: int) -> None:
    import shutil
    import tempfile
    from pathlib import Path

    from exactdp.census.allocations import load_allocation
    from exactdp.sweep import driver
    from exactdp.sweep.assist import Assistant
    from exactdp.sweep.pair import SweepSettings
    from exactdp.sweep.summary import assemble
    from exactdp.sweep.twins import composition_key

    alloc = load_allocation("dhc-persons-2020")
    pairs = sorted(alloc.pairs())
    print(f"load average at start: {os.getloadavg()[0]:.2f}")

    def plain():
        return [composition_key(alloc.pair_rhos(i, j)) for i, j in pairs]

    def memo():
        rhos_of, key_of = driver._pair_rhos_memo(alloc), driver._composition_key_memo(alloc)
        return [(rhos_of(i, j), key_of(i, j)) for i, j in pairs]

    print(f"set-up of {len(pairs)} tasks (CPU s, min of {repeat}): pair_rhos + composition_key "
          f"{_best(plain, repeat):.3f}, per-path memos {_best(memo, repeat):.3f}")
    s = SweepSettings()
    import exactdp.sweep.plots  # noqa: F401  (imported during the compute phase in both)

    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for mode in ("serial", "helper", "serial", "helper"):
            out = Path(tmp) / mode
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(Path(src) / "pairs", out / "pairs")
            helper = Assistant(alloc.total_rho, s, True) if mode == "helper" else None
            try:
                if helper is not None:
                    helper._gdp.result()
                w0, c0 = time.perf_counter(), time.process_time()
                assemble(out, alloc, pairs, s, plots=True, assistant=helper)
                w, c = time.perf_counter() - w0, time.process_time() - c0
            finally:
                if helper is not None:
                    helper.__exit__(None, None, None)
            print(f"assembly, {mode}: wall {w:.2f} s, CPU of this process {c:.2f} s")
            outs[mode] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                          if p.is_file() and "pairs" not in p.parts}
        same = outs["serial"] == outs["helper"]
        print(f"outputs ({len(outs['serial'])} files) {'identical' if same else 'DIFFER'}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
