"""The sweep's floor: how much of a sweep worker's CPU time is spent inside Numba kernels.

Runs exactly what the workers of ``exactdp sweep`` run — :func:`exactdp.sweep.pair.compute_pair`
on each distinct composition of the allocation's pairs (one per twin group, as the driver
dispatches them, in the planner's order: fewest mechanisms first) — in this one process, and
times every entry into a Numba kernel from Python.  The kernels are not changed: after a
warm-up composition every kernel is built, then every name an exactdp module binds to a
kernel's compiled function is rebound to a timing wrapper (nested entries from Python, e.g.
``node_factors`` → ``_node_factors_rows``, are counted once, at the outermost entry).

Reports kernel CPU-s, total CPU-s (``time.process_time``), their ratio, the number of kernel
calls, the kernels by time, and the split by stage: ``delta`` (δ at the Bureau's ε),
``epsilon`` (ε at each δ), ``tradeoff`` (thresholds and vertices), ``format`` (the CSV texts:
ε–δ rows, trade-off and grid) and ``setup`` (composition, accountant, diagnostics).  The
wrapper's own cost (two clock reads and a Python frame a call) is measured and reported.

    EXACTDP_AOT=0 python bench/bench_floor.py                     # the 840 DHC compositions
    EXACTDP_AOT=0 python bench/bench_floor.py --pairs 13-13,6-6,1-43 --top 6
    EXACTDP_AOT=0 python bench/bench_floor.py --no-wrap           # total CPU-s only
    EXACTDP_AOT=0 python bench/bench_floor.py --profile prof.out  # cProfile of the same run

Record the results (with the 1-minute load average it prints) in ``bench/floor.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict

STAGES = ("setup", "delta", "epsilon", "tradeoff", "format")

_pt = time.process_time


class Meter:
    """Kernel time and stage time of one process (not thread-safe: one worker thread)."""

    def __init__(self):
        self.kernel_s = defaultdict(float)
        self.kernel_n = defaultdict(int)
        self.stage_cpu = defaultdict(float)
        self.stage_kernel = defaultdict(float)
        self.stage = "setup"
        self.depth = 0
        self.in_stage = False

    def wrap_kernel(self, name: str, fn):
        meter = self

        def timed(*args, **kwargs):
            if meter.depth:
                return fn(*args, **kwargs)
            meter.depth = 1
            t = _pt()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = _pt() - t
                meter.depth = 0
                meter.kernel_s[name] += dt
                meter.kernel_n[name] += 1
                meter.stage_kernel[meter.stage] += dt

        return timed

    def wrap_stage(self, stage: str, fn):
        meter = self

        def staged(*args, **kwargs):
            if meter.in_stage:
                return fn(*args, **kwargs)
            meter.in_stage = True
            prev, meter.stage = meter.stage, stage
            t = _pt()
            try:
                return fn(*args, **kwargs)
            finally:
                meter.stage_cpu[stage] += _pt() - t
                meter.stage, meter.in_stage = prev, False

        return staged


def compositions(allocation: str, pairs: str | None):
    """The heads of the sweep's twin groups: ``(i, j, rhos)`` in the driver's order."""
    from exactdp.census.allocations import load_allocation, parse_pair_spec
    from exactdp.sweep.plan import PathDesigns
    from exactdp.sweep.twins import composition_key

    alloc = load_allocation(allocation)
    designs = PathDesigns(alloc, None)
    pair_list = alloc.pairs() if pairs is None else parse_pair_spec(pairs, alloc.n_paths)
    tasks = sorted((designs.size("pair", i, j)[0], i, j) for i, j in sorted(pair_list))
    seen, heads = set(), []
    for _, i, j in tasks:
        rhos = designs.rhos("pair", i, j)
        key = composition_key(rhos)
        if key not in seen:
            seen.add(key)
            heads.append((i, j, rhos))
    return heads, len(pair_list)


def build_all_kernels() -> None:
    """Build (load from the cache, or compile) every declared kernel, so none is built while
    wrapped (a kernel compiled later would see a wrapper among its callees)."""
    import importlib
    import pkgutil

    import exactdp.kernels as kpkg
    from exactdp.kernels.jit import declared

    for m in pkgutil.iter_modules(kpkg.__path__):
        if m.name not in ("aot", "aot_build", "jit"):
            importlib.import_module(f"exactdp.kernels.{m.name}")
    for k in declared():
        k._build()


def install_kernel_wrappers(meter: Meter) -> list:
    """Rebind every exactdp name of a built kernel to a timing wrapper; returns what
    :func:`restore` needs to undo it (one ``(namespace, name, value)`` per name rebound)."""
    from exactdp.kernels.jit import declared

    targets = {}
    for k in declared():
        if k._call == k._build_and_call:  # not built: left alone (Numba must see it as a Kernel)
            continue
        for fn in {id(k): k, id(k._call): k._call, id(k._dispatcher): k._dispatcher}.values():
            if fn is not None:
                targets[id(fn)] = (f"{k.__module__.rsplit('.', 1)[-1]}.{k.__qualname__}", fn)
    wrappers: dict = {}
    undo = []
    for name, module in list(sys.modules.items()):
        if not (name == "exactdp" or name.startswith("exactdp.")):
            continue
        ns = getattr(module, "__dict__", {})
        for key, value in list(ns.items()):
            hit = targets.get(id(value))
            if hit is not None and hit[1] is value:
                w = wrappers.get(id(value))
                if w is None:
                    w = wrappers[id(value)] = meter.wrap_kernel(hit[0], value)
                undo.append((ns, key, value))
                ns[key] = w
    return undo


def restore(undo) -> None:
    """Undo :func:`install_kernel_wrappers` and :func:`install_stage_wrappers`."""
    for ns, key, value in reversed(undo):
        if isinstance(ns, dict):
            ns[key] = value
        elif value is _INHERITED:
            delattr(ns, key)
        else:
            setattr(ns, key, value)


_INHERITED = object()  # a method the class inherits (restored by deleting the wrapper)


def install_stage_wrappers(meter: Meter) -> list:
    """Wrap the stages' entry points (see the module docstring); returns what :func:`restore`
    needs to undo it."""
    import exactdp.sweep.pair as pair
    from exactdp.accounting.lattice_route import LatticeAccountant  # the route every sweep pair takes

    undo = []
    for owner, name, stage in ((LatticeAccountant, "delta", "delta"), (LatticeAccountant, "epsilon", "epsilon"),
                               (LatticeAccountant, "tradeoff_vertices", "tradeoff"),
                               (LatticeAccountant, "tradeoff_vertex_floats", "tradeoff"),
                               (pair, "tradeoff_thresholds", "tradeoff"), (pair, "_curve_rows", "format"),
                               (pair, "tradeoff_rows", "format"), (pair, "tradeoff_key_rows", "format")):
        if not hasattr(owner, name):  # an older checkout (side-by-side runs): a stage it does not have
            continue
        undo.append((owner, name, vars(owner).get(name, _INHERITED)))
        setattr(owner, name, meter.wrap_stage(stage, getattr(owner, name)))
    return undo


def wrapper_overhead(meter_cls=Meter, n: int = 200_000) -> float:
    """CPU seconds per call that a kernel wrapper adds (a wrapped no-op against the bare one)."""
    m = meter_cls()

    def noop(*a):
        return None

    w = m.wrap_kernel("noop", noop)
    best = []
    for _ in range(3):
        t = _pt()
        for _ in range(n):
            noop(1, 2)
        bare = _pt() - t
        t = _pt()
        for _ in range(n):
            w(1, 2)
        best.append((_pt() - t - bare) / n)
    return max(0.0, min(best))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allocation", default="dhc-persons-2020")
    ap.add_argument("--pairs", default=None, help="pair spec (default: all pairs)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N compositions")
    ap.add_argument("--every", type=int, default=1, help="only every N-th composition (a sample)")
    ap.add_argument("--top", type=int, default=10, help="kernels listed")
    ap.add_argument("--no-wrap", action="store_true", help="total CPU-s only (no kernel timing)")
    ap.add_argument("--profile", default=None, help="write a cProfile of the measured run here")
    ap.add_argument("--json", default=None, help="write the numbers as JSON here")
    args = ap.parse_args(argv)

    from exactdp.sweep.driver import _cap_threads
    from exactdp.sweep.pair import SweepSettings, compute_pair

    _cap_threads()
    heads, n_pairs = compositions(args.allocation, args.pairs)
    heads = heads[:: args.every]
    if args.limit:
        heads = heads[: args.limit]
    settings = SweepSettings()
    t0 = _pt()
    build_all_kernels()
    # warm-up (not measured): a small composition, so lazy imports and tables are done
    compute_pair(0, 0, heads[0][2], settings)
    t_warm = _pt() - t0
    meter = Meter()
    n_names = 0
    if not args.no_wrap:
        undo = install_kernel_wrappers(meter)
        n_names = len(undo)
        install_stage_wrappers(meter)
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile(time.process_time)
    load0 = os.getloadavg()[0]
    w0, c0 = time.perf_counter(), _pt()
    if prof:
        prof.enable()
    for i, j, rhos in heads:
        compute_pair(i, j, rhos, settings)
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    total = _pt() - c0
    wall = time.perf_counter() - w0
    load1 = os.getloadavg()[0]
    calls = sum(meter.kernel_n.values())
    ktime = sum(meter.kernel_s.values())
    over = wrapper_overhead() if not args.no_wrap else 0.0
    res = {"allocation": args.allocation, "pairs": n_pairs, "compositions": len(heads), "total_cpu_s": total,
           "wall_s": wall, "kernel_cpu_s": ktime, "kernel_calls": calls, "wrapper_overhead_cpu_s": over * calls,
           "names_wrapped": n_names, "load_1min": [load0, load1], "warmup_cpu_s": t_warm,
           "stages": {s: {"cpu_s": meter.stage_cpu.get(s, 0.0), "kernel_s": meter.stage_kernel.get(s, 0.0)}
                      for s in STAGES},
           "kernels": {k: [meter.kernel_s[k], meter.kernel_n[k]] for k in meter.kernel_s}}
    staged = sum(meter.stage_cpu.values())
    res["stages"]["setup"]["cpu_s"] = total - staged  # everything outside the named stages
    print(f"{args.allocation}: {len(heads)} compositions of {n_pairs} pairs, one process; "
          f"load {load0:.2f} -> {load1:.2f}")
    print(f"total {total:.2f} CPU-s ({wall:.1f} s wall)", end="")
    if args.no_wrap:
        print()
    else:
        net = total - over * calls
        print(f"; kernels {ktime:.2f} CPU-s = {100 * ktime / total:.1f} % "
              f"({100 * ktime / net:.1f} % of {net:.2f} less the wrappers' {over * calls:.2f}); "
              f"{calls} kernel calls ({1e6 * ktime / max(calls, 1):.1f} µs each, "
              f"{1e6 * (net - ktime) / max(calls, 1):.1f} µs of Python per call)")
        print("| stage | CPU-s | share | kernel CPU-s | kernel share of stage |")
        print("|---|---:|---:|---:|---:|")
        for s in STAGES:
            c, k = res["stages"][s]["cpu_s"], res["stages"][s]["kernel_s"]
            print(f"| {s} | {c:.2f} | {100 * c / total:.1f} % | {k:.2f} | {100 * k / c if c else 0:.1f} % |")
        print("| kernel | CPU-s | share of kernel time | calls |")
        print("|---|---:|---:|---:|")
        for k, (s, n) in sorted(res["kernels"].items(), key=lambda kv: -kv[1][0])[: args.top]:
            print(f"| {k} | {s:.2f} | {100 * s / ktime:.1f} % | {n} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
