"""The tail engine's CPU per sweep stage on recorded calls (issue 14, eng8).

usage:
  python bench/engine_replay.py record OUT.pkl 10            # record the calls (every 10th DHC pair)
  python bench/engine_stage_replay.py OUT.pkl [TREE]         # CPU-s per stage, best of 3

The calls of each engine are replayed in order on a fresh engine and their CPU time
(``time.process_time``) charged to the sweep stage that made them: the first two calls of
a pair are its δ(ε) (the hockey-stick kernel and the tails), the strict tails call is the
trade-off, the rest the ε(δ) search.  TREE: another source tree, as in engine_replay.py
(alternate the two and take minima: the machine's load matters).
"""

from __future__ import annotations

import os
import pickle
import sys
import time


def main(path, tree=None):
    from engine_replay import _use_tree  # bench/engine_replay.py (this script's folder)

    _use_tree(tree)
    from exactdp.engine import tails as T
    from exactdp.engine.quadrature import WeightedQuery

    with open(path, "rb") as fh:
        data = pickle.load(fh)

    def run():
        tot = dict.fromkeys(("build", "delta", "epsilon", "tradeoff"), 0.0)
        for lattice, a, k, seq in data:
            t0 = time.process_time()
            e = T.TailEngine(lattice, *a, **k)
            tot["build"] += time.process_time() - t0
            for n, (kind, args, strict) in enumerate(seq):
                stage = "tradeoff" if kind == "t" and strict else ("delta" if n < 2 else "epsilon")
                t0 = time.process_time()
                if kind == "t":
                    e.tails(args, strict)
                else:
                    e.weighted([WeightedQuery(*q) for q in args], strict)
                tot[stage] += time.process_time() - t0
        return tot

    run()  # load the kernels
    runs = [run() for _ in range(3)]
    best = {k: min(r[k] for r in runs) for k in runs[0]}
    print(os.path.dirname(T.__file__) + ":", " ".join(f"{k} {v:.3f}" for k, v in best.items()),
          f"total {sum(best.values()):.3f} CPU-s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
