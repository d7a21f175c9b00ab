"""CPU time (``time.process_time``) of ``compute_pair`` on a fixed sample of the DHC pairs:
every 16th of the 946 (60 pairs) plus the coarse 6-10, 6-24, 10-33.  CPU time, unlike
wall time, is only mildly affected by other jobs on a shared machine; run it for two
versions under the same load to compare them.

Run:  python bench/pair_sample_cpu.py
"""
import time
from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import compute_pair, SweepSettings
alloc = load_allocation("dhc-persons-2020")
s = SweepSettings()
pairs = [(i, j) for i in range(1, 44) for j in range(i, 44)]
sample = pairs[::16] + [(6, 10), (6, 24), (10, 33)]
compute_pair(13, 13, alloc.pair_rhos(13, 13), s)  # warm
tot = {}
for i, j in sample:
    t0 = time.process_time()
    compute_pair(i, j, alloc.pair_rhos(i, j), s)
    tot[(i, j)] = time.process_time() - t0
small = sum(v for k, v in tot.items() if k not in ((6, 10), (6, 24), (10, 33)))
print(f"{len(sample) - 3} sampled pairs (every 16th): {small:.2f} CPU-s; 6-10 {tot[(6, 10)]:.2f}, 6-24 {tot[(6, 24)]:.2f}, 10-33 {tot[(10, 33)]:.2f}; total {sum(tot.values()):.2f}")
