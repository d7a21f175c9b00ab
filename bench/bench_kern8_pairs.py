"""CPU seconds (``time.process_time``) and stage totals of ``compute_pair`` on every STEP-th
DHC pair or on named pairs, after one warm-up pair (kern8, issue 14).  Run it for two
versions back to back (the other one from an unpacked tree on ``PYTHONPATH`` with its own
``NUMBA_CACHE_DIR``) and alternate: the machine's load matters.

usage:  python bench/bench_kern8_pairs.py 10            # every 10th pair (95 pairs)
        python bench/bench_kern8_pairs.py 6-10,6-31,6-6,6-24
"""

from __future__ import annotations

import collections
import sys
import time

import exactdp
from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import SweepSettings, compute_pair

spec = sys.argv[1] if len(sys.argv) > 1 else "10"
alloc = load_allocation("dhc-persons-2020")
settings = SweepSettings()
pairs = ([tuple(map(int, p.split("-"))) for p in spec.split(",")] if "-" in spec
         else list(alloc.pairs())[::int(spec)])
compute_pair(13, 13, alloc.pair_rhos(13, 13), settings)  # warm: kernels loaded
stages: collections.Counter = collections.Counter()
cpu = {}
for i, j in pairs:
    t0 = time.process_time()
    r = compute_pair(i, j, alloc.pair_rhos(i, j), settings)
    cpu[f"{i}-{j}"] = time.process_time() - t0
    stages.update(r.seconds)
print(exactdp.__file__)
print(f"{len(pairs)} pairs: {sum(cpu.values()):.2f} CPU-s;", {k: round(v, 2) for k, v in stages.items()})
if len(pairs) <= 8:
    print({k: round(v, 3) for k, v in cpu.items()})
