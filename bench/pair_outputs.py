"""Dump compute_pair outputs (the three CSV texts) for a fixed sample of DHC pairs.

usage: python bench/pair_outputs.py OUT.json [STEP]      (default STEP 20: 48 pairs + 6 coarse ones)
       python bench/pair_outputs.py --compare A.json B.json

The identity check of session 5 (issue 14): the texts of every pair file for a fixed
sample, dumped by two versions (the reference: main ca845cd) and compared.
"""
import json, sys, time
if sys.argv[1] == "--compare":
    a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    bad = [k for k in a if a[k] != b.get(k)]
    print(f"{len(a)} pairs, {len(bad)} differ: {bad[:20]}")
    for k in bad[:3]:
        for f in range(3):
            la, lb = a[k][f].splitlines(), b[k][f].splitlines()
            d = [(x, y) for x, y in zip(la, lb) if x != y]
            if d: print(k, "file", f, len(d), "lines differ; first:", d[0])
    sys.exit(1 if bad else 0)
from exactdp.census.allocations import load_allocation
from exactdp.sweep.pair import compute_pair, SweepSettings
alloc = load_allocation("dhc-persons-2020")
s = SweepSettings()
step = int(sys.argv[2]) if len(sys.argv) > 2 else 20
pairs = list(alloc.pairs())[::step] + [(6, 10), (6, 31), (10, 33), (6, 6), (13, 13), (24, 24)]
out = {}
t = time.process_time()
for i, j in pairs:
    r = compute_pair(i, j, alloc.pair_rhos(i, j), s)
    out[f"{i}-{j}"] = [r.curve_csv, r.tradeoff_csv, r.grid_csv]
print(len(out), "pairs, cpu", round(time.process_time() - t, 2), "s")
json.dump(out, open(sys.argv[1], "w"))
