"""Speed, side by side with dp_accounting's PLD accountant in one run (issue 14).

For three designs — the DHC full-chain pair (13, 13), a coarse pair (6, 10) and a generic
design (σ² = 10000/11 × 20 and 2.5025, unit shifts) — it times, in the same process:

* exactdp: a fresh :class:`~exactdp.accounting.accountant.ExactAccountant` and δ(ε) at the 42
  Bureau ε (ε = ρ + 2 sqrt(ρ ln(1/δ)) for the sweep's 42 target δ), min and median of
  ``--reps`` runs after one warm-up; every δ certified;
* dp_accounting's PLD at its defaults (pessimistic estimate, discretisation 1e-4): build
  the composed PLD and query the same 42 ε (one run; it is ~1 s);

and the ratio PLD/exactdp.  With ``--cli`` it also times the first answer of a warm CLI
call (``exactdp delta --sigma2 2 --eps 1``, a new process each time, min of 5), and with
``--sweep`` the full 946-pair DHC sweep (``exactdp sweep --jobs 2``), wall and CPU
(children's user+system time).  The load average is printed with the results: on a shared
machine wall times are pessimistic, the ratios of the same run are not.

Run:  pip install -e '.[bench]' && python bench/bench_speed.py [--cli] [--sweep]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from fractions import Fraction

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.census.allocations import load_allocation
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.sweep.pair import DEFAULT_DELTAS


def designs():
    """(name, Composition) of the three benchmark designs."""
    alloc = load_allocation("dhc-persons-2020")
    generic = Composition(((DiscreteGaussian(Fraction(10000, 11), 1), 20),
                           (DiscreteGaussian(Fraction("2.5025"), 1), 1)))
    return [("DHC pair 13-13 (full chain, 160 mechanisms)", Composition.from_rhos(alloc.pair_rhos(13, 13))),
            ("DHC pair 6-10 (coarse)", Composition.from_rhos(alloc.pair_rhos(6, 10))),
            ("generic 10000/11x20 + 2.5025", generic)]


def time_exactdp(comp, eps_list, reps: int):
    """(min, median) seconds of a fresh accountant + 42 δ, and the worst certified rel. error."""
    ExactAccountant(comp).delta(eps_list)  # warm-up: JIT cache load
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        pts = ExactAccountant(comp).delta(eps_list)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), max(float(p.relative_error) for p in pts)


def time_pld(comp, eps_list):
    """Seconds of dp_accounting's PLD (defaults): compose the design and query the 42 ε."""
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    t0 = time.perf_counter()
    pld = None
    blocks = Counter()
    for m, c in comp.groups:  # ±shift are the same mechanism to PLD: merge their counts
        blocks[(m.sigma2, abs(m.shift))] += c
    for (s2, shift), count in blocks.items():
        one = pld_mod.from_discrete_gaussian_mechanism(math.sqrt(float(s2)), sensitivity=shift)
        block = one.self_compose(count) if count > 1 else one
        pld = block if pld is None else pld.compose(block)
    for e in eps_list:
        pld.get_delta_for_epsilon(float(e(30)))
    return time.perf_counter() - t0


def time_cli(reps: int = 5) -> float:
    """Min wall seconds of a warm ``exactdp delta`` call (a new process each time)."""
    cmd = [sys.executable, "-m", "exactdp.cli", "delta", "--sigma2", "2", "--eps", "1"]
    subprocess.run(cmd, check=True, capture_output=True)  # warm the caches
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        out.append(time.perf_counter() - t0)
    return min(out)


def time_sweep() -> tuple[float, float]:
    """(wall, CPU) seconds of the full 946-pair DHC sweep on 2 workers."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "exactdp.cli", "sweep", "--jobs", "2", "--quiet", "--no-plots",
                        "--out", os.path.join(d, "out")], check=True)
        wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--cli", action="store_true", help="time a warm CLI call's first answer")
    ap.add_argument("--sweep", action="store_true", help="time the full 946-pair sweep (minutes)")
    args = ap.parse_args()
    print(f"machine: {platform.machine()} python {platform.python_version()}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'design':<46} {'exactdp min':>12} {'median':>9} {'worst rel':>10} {'PLD':>8} {'PLD/exactdp':>12}")
    for name, comp in designs():
        eps_list = [bun_steinke_epsilon(comp.rho, d) for d in DEFAULT_DELTAS]
        tmin, tmed, worst = time_exactdp(comp, eps_list, args.reps)
        tp = time_pld(comp, eps_list)
        print(f"{name:<46} {tmin * 1e3:>9.1f} ms {tmed * 1e3:>6.1f} ms {worst:>10.1e} {tp:>6.2f} s {tp / tmin:>11.3g}x")
    if args.cli:
        print(f"warm CLI call, first answer (exactdp delta --sigma2 2 --eps 1, min of 5): {time_cli():.2f} s")
    if args.sweep:
        wall, cpu = time_sweep()
        print(f"full 946-pair DHC sweep (--jobs 2): {wall:.1f} s wall, {cpu:.1f} CPU-s")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
