"""CPU of a DHC pair's text (everything ``compute_pair`` does after the stages): this tree
against the sweep text code of another commit, side by side in one process.

The stages (δ, ε, trade-off vertices) of every ``--step``-th DHC pair are computed once
(not timed).  ``exactdp/sweep/{numtext,pair,envelope}.py`` of ``--ref`` are read with
``git show`` into a temporary folder and imported as separate modules; then, per pair and
alternately, ``_curve_rows`` + ``tradeoff_rows`` of both, ``--repeat`` times.  Reports the
sum over pairs of each pair's minimum CPU time (``time.process_time``: little affected by
other jobs) and asserts the two texts are identical.

    python bench/bench_pair_text.py --ref cc7036b --step 10 --repeat 7
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time


def load_ref(commit: str, folder: str):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for name in ("numtext", "pair", "envelope"):
        src = subprocess.run(["git", "-C", root, "show", f"{commit}:exactdp/sweep/{name}.py"], check=True,
                             capture_output=True, text=True).stdout
        src = src.replace("exactdp.sweep.numtext", "ref_numtext").replace("exactdp.sweep.envelope", "ref_envelope")
        with open(os.path.join(folder, f"ref_{name}.py"), "w") as f:
            f.write(src)
    sys.path.insert(0, folder)
    import ref_pair

    return ref_pair


def stages(step: int, s):
    from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.sweep.pair import tradeoff_thresholds

    alloc = load_allocation("dhc-persons-2020")
    out = []
    for i, j in list(alloc.pairs())[::step]:
        acc = ExactAccountant(Composition.from_rhos(tuple(alloc.pair_rhos(i, j))), rel_tol=s.rel_tol)
        if not isinstance(acc, ExactAccountant):
            continue
        eng = acc.engine
        if hasattr(eng, "lam_step") and getattr(eng, "var", 0) > 0:
            eng.lam_step = float(s.lam_step_sd) / math.sqrt(eng.var)
        deltas = list(s.deltas)
        dpts = acc.delta([bun_steinke_epsilon(acc.rho, d) for d in deltas])
        epts = acc.epsilon(deltas)
        verts = acc.tradeoff_vertices(tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min))
        out.append((i, j, deltas, dpts, epts, verts))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="cc7036b")
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    from exactdp.sweep import pair as new

    with tempfile.TemporaryDirectory() as folder:
        ref = load_ref(args.ref, folder)
        s = new.SweepSettings()
        data = stages(args.step, s)

        def text(mod, d):
            rows, wd, we = mod._curve_rows(*d[:5])
            tc, gc, wt = mod.tradeoff_rows(d[5], s)
            return mod._csv(rows), tc, gc, wd, we, wt

        assert all(text(ref, d) == text(new, d) for d in data), "texts differ"
        best = {"ref": [math.inf] * len(data), "new": [math.inf] * len(data)}
        for r in range(args.repeat):
            for n, d in enumerate(data):
                for name, mod in (("ref", ref), ("new", new)) if r % 2 else (("new", new), ("ref", ref)):
                    t0 = time.process_time()
                    text(mod, d)
                    best[name][n] = min(best[name][n], time.process_time() - t0)
    a, b = sum(best["ref"]), sum(best["new"])
    print(f"{len(data)} pairs, texts identical; text CPU (sum of per-pair minima): {args.ref} {a:.3f} s "
          f"({a / len(data) * 1e3:.2f} ms/pair), this tree {b:.3f} s ({b / len(data) * 1e3:.2f} ms/pair), "
          f"ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
