"""CPU seconds per sweep stage (δ, ε, trade-off) on every STEP-th DHC pair.

``python bench/stage_cpu.py [STEP]`` (default 10: the 95-pair sample).  The stage times
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
from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import SweepSettings, compute_pair

pair_module.time = types.SimpleNamespace(perf_counter=time.process_time)
alloc = load_allocation("dhc-persons-2020")
settings = SweepSettings()
step = int(sys.argv[1]) if len(sys.argv) > 1 else 10
sample = list(alloc.pairs())[::step]
compute_pair(1, 1, alloc.pair_rhos(13, 13), settings)  # warm (JIT cache, tables)
total = collections.Counter()
c0 = time.process_time()
for i, j in sample:
    for k, v in compute_pair(i, j, alloc.pair_rhos(i, j), settings).seconds.items():
        total[k] += v
print(len(sample), "pairs, CPU-s", round(time.process_time() - c0, 2), {k: round(v, 2) for k, v in total.items()})
