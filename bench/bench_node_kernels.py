"""CPU time of ``compute_pair`` on the coarse DHC pairs and the time of the tilted-rule
kernels (``kernels/tilted.py``, ``nodes.py``, ``signed.py``, ``sieve.py``, ``dgauss.py``) inside it.

For each pair: the minimum of 3 runs of ``time.process_time`` (the node tables of
``node_factors`` are dropped before each run, so every run builds them as a fresh sweep
worker would), then one run under cProfile and the kernels' ``tottime`` (wall time inside
the kernel, summed over calls).  CPU time is only mildly affected by other jobs on a
shared machine; run it for two versions under the same load to compare them.

Run:  python bench/bench_node_kernels.py 6-10 6-31 6-24 10-33 6-33 6-6 20-40
"""
import cProfile
import pstats
import sys
import time

from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import SweepSettings, compute_pair

from bench_kernel_replay import drop_tables as _drop_tables  # (bench/ is the script's folder)

KERNEL_FILES = tuple(f"kernels/{m}.py" for m in ("tilted", "nodes", "signed", "sieve", "dgauss"))


alloc = load_allocation("dhc-persons-2020")
settings = SweepSettings()
compute_pair(13, 13, alloc.pair_rhos(13, 13), settings)  # warm: JIT cache load
for arg in sys.argv[1:] or ["6-10", "6-31"]:
    i, j = map(int, arg.split("-"))
    rhos = alloc.pair_rhos(i, j)
    best = float("inf")
    for _ in range(3):
        _drop_tables()
        t0 = time.process_time()
        compute_pair(i, j, rhos, settings)
        best = min(best, time.process_time() - t0)
    _drop_tables()
    prof = cProfile.Profile()
    prof.enable()
    compute_pair(i, j, rhos, settings)
    prof.disable()
    kern: dict = {}
    for (path, _, name), (_, _, tt, _, _) in pstats.Stats(prof).stats.items():
        if path.endswith(KERNEL_FILES):
            kern[name] = kern.get(name, 0.0) + tt
    top = ", ".join(f"{k} {v:.3f}" for k, v in sorted(kern.items(), key=lambda kv: -kv[1])[:6])
    print(f"{arg}: CPU {best:.3f} s (min of 3) | kernel tottime: {top}")
