"""CPU seconds per sweep stage (δ, ε, trade-off) on every STEP-th DHC pair or on named pairs.

``python bench/stage_cpu.py [STEP]`` (default 10: the 95-pair sample) or ``python
bench/stage_cpu.py 6-10,6-31`` (named pairs; up to 8 of them are also timed one by one).  The stage times
of :func:`exactdp.sweep.pair.compute_pair` are taken with ``time.process_time`` instead
of the wall clock (the machine is shared).  To compare with another version run the same
command with ``PYTHONPATH`` pointing at a checkout of it (``git archive REV exactdp
kernels | tar -x -C DIR``), back to back.
"""

import collections
import sys
import time
import types

import exactdp.sweep.pair as pair_module
from bench_kernel_replay import _pairs  # (bench/ is the script's folder)
from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import SweepSettings, compute_pair

pair_module.time = types.SimpleNamespace(perf_counter=time.process_time)
alloc = load_allocation("dhc-persons-2020")
settings = SweepSettings()
sample = _pairs(sys.argv[1] if len(sys.argv) > 1 else "10", alloc)
compute_pair(1, 1, alloc.pair_rhos(13, 13), settings)  # warm (JIT cache, tables)
total = collections.Counter()
cpu = {}
c0 = time.process_time()
for i, j in sample:
    t0 = time.process_time()
    for k, v in compute_pair(i, j, alloc.pair_rhos(i, j), settings).seconds.items():
        total[k] += v
    cpu[f"{i}-{j}"] = time.process_time() - t0
print(len(sample), "pairs, CPU-s", round(time.process_time() - c0, 2), {k: round(v, 2) for k, v in total.items()})
if len(sample) <= 8:
    print({k: round(v, 3) for k, v in cpu.items()})
