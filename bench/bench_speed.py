"""Speed, side by side with dp_accounting's PLD accountant in one run (issue 14).

For three designs — the DHC full-chain pair (13, 13), a coarse pair (6, 10) and a generic
design (σ² = 10000/11 × 20 and 2.5025, unit shifts) — it times, in the same process:

* exactdp: a fresh :class:`~exactdp.accounting.accountant.ExactAccountant` and δ(ε) at the 42
  Bureau ε (ε = ρ + 2 sqrt(ρ ln(1/δ)) for the sweep's 42 target δ), min and median of
  ``--reps`` runs after one warm-up; every δ certified;
* dp_accounting's PLD at its defaults (pessimistic estimate, discretisation 1e-4): build
  the composed PLD and query the same 42 ε (one run; it is ~1 s);

and the ratio PLD/exactdp.  With ``--cli`` it also times the first answer of a warm CLI
call (``exactdp delta --sigma2 2 --eps 1``, a new process each time, min of ``--reps``; also
with SciPy hidden from the process, as in an install without the dp-accounting extra, and
with the ahead-of-time kernels of ``exactdp warmup``, which import no Numba),
``exactdp --help``, and beside them the Numba floor (a process that imports Numba and calls
one cached kernel); ``--cli-cold`` the first call after install (empty Numba cache: it
compiles the kernels it calls) and compiling every kernel; with
``--sweep`` the full 946-pair DHC sweep (``exactdp sweep --jobs 2``), wall and CPU
(children's user+system time).  The load average is printed with the results: on a shared
machine wall times are pessimistic, the ratios of the same run are not.

Run:  pip install -e '.[bench]' && python bench/bench_speed.py [--cli] [--cli-cold] [--sweep] [--no-designs]
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


#: the warm CLI call whose first answer ``--cli`` times
CLI_CALL = ["delta", "--sigma2", "2", "--eps", "1"]

#: hides SciPy from a child process (as in an install without the dp-accounting extra):
#: Numba then skips the SciPy import of its BLAS check (numba/np/arraymath.py, _check_blas)
_NO_SCIPY = ("import sys\nclass _Hide:\n    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] == 'scipy':\n            raise ImportError(name)\n"
             "sys.meta_path.insert(0, _Hide())\n")

#: the Numba floor: a new process that imports Numba and calls one cached kernel
_FLOOR_KERNEL = "import numba\n\n@numba.njit('float64(float64)', cache=True)\ndef one(x):\n    return x + 1.0\n"


def _timed(argv, env=None) -> tuple[float, float, float, bytes]:
    """(wall s to the first byte on stdout — the first answer —, wall s to the exit, CPU s =
    the child's user+system, stdout) of one new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    first = proc.stdout.read(1)
    t1 = time.perf_counter()
    out = first + proc.stdout.read()
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    t2 = time.perf_counter()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, t2 - t0, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out


def _cli(argv, hide_scipy=False):
    """The ``exactdp`` program (``main()`` without argv, as the console script runs it)."""
    if not hide_scipy:
        return [sys.executable, "-m", "exactdp.cli", *argv]
    return [sys.executable, "-c", f"{_NO_SCIPY}import sys\nsys.argv = ['exactdp', *{argv!r}]\n"
            f"from exactdp.cli import main\nsys.exit(main())"]


def time_cli(reps: int = 10) -> list[tuple[str, float, float, float]]:
    """Warm-cache startup, each row (what, first answer s, exit s, CPU s) of the run with the
    earliest answer over ``reps`` rounds that run every case once (so all cases see the same
    machine load), after ``exactdp warmup`` (byte-compiles exactdp, builds the JIT cache and
    the ahead-of-time module if needed) and one warm-up round: the CLI call with the JIT
    cache (``EXACTDP_AOT=0``; SciPy importable, and hidden), with the AOT kernels,
    ``exactdp --help``, the Numba floor (import Numba, call one cached kernel, print; with
    and without SciPy) and the interpreter alone."""
    subprocess.run(_cli(["warmup", "--json"]), check=True, stdout=subprocess.DEVNULL)  # builds the module once
    jit, ahead = {**os.environ, "EXACTDP_AOT": "0"}, {**os.environ, "EXACTDP_AOT": "require"}
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "floor_kernel.py"), "w") as f:
            f.write(_FLOOR_KERNEL)
        env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(d, "cache"), "PYTHONPATH": d}
        floor = "import floor_kernel\nprint(floor_kernel.one(1.0))\n"
        cases = [("exactdp " + " ".join(CLI_CALL) + " (JIT cache)", _cli(CLI_CALL), jit),
                 ("  the same, SciPy hidden", _cli(CLI_CALL, hide_scipy=True), jit),
                 ("  after exactdp warmup (AOT)", _cli(CLI_CALL), ahead),
                 ("exactdp --help", _cli(["--help"]), None),
                 ("floor: import numba, call 1 cached kernel", [sys.executable, "-c", floor], env),
                 ("  the same, SciPy hidden", [sys.executable, "-c", _NO_SCIPY + floor], env),
                 ("python -c 'print(1)'", [sys.executable, "-c", "print(1)"], None)]
        answers = [_timed(argv, e)[3] for _, argv, e in cases]  # warm-up (and the caches)
        assert answers[0] == answers[1] == answers[2], "hiding SciPy or the AOT kernels changed the answer"
        best = [(math.inf,) * 3] * len(cases)
        for _ in range(reps):
            for k, (_, argv, e) in enumerate(cases):
                *times, out = _timed(argv, e)
                assert out == answers[k], "an answer changed between runs"
                best[k] = min(best[k], tuple(times))
    return [(what, *b) for (what, _, _), b in zip(cases, best)]


#: builds every kernel of exactdp (each Kernel's dispatcher: loaded from the cache or compiled)
_ALL_KERNELS = ("import importlib, pkgutil\nimport exactdp.kernels as k\nfrom exactdp.kernels.jit import Kernel\n"
                "mods = [importlib.import_module(f'exactdp.kernels.{m.name}') "
                "for m in pkgutil.iter_modules(k.__path__)]\n"
                "ks = {id(v): v for m in mods for v in vars(m).values() if isinstance(v, Kernel)}\n"
                "[v.dispatcher for v in ks.values()]\nprint(len(ks))\n")


def time_cli_cold() -> list[tuple[str, float, float, float]]:
    """The first run after install: the CLI call with an empty Numba cache (it compiles the
    kernels it calls), then, in a second empty cache, every kernel compiled; rows as
    :func:`time_cli` (one run each)."""
    rows = []
    for what, argv in ((f"cold cache: exactdp {' '.join(CLI_CALL)}", _cli(CLI_CALL)),
                       ("cold cache: every kernel compiled", [sys.executable, "-c", _ALL_KERNELS])):
        with tempfile.TemporaryDirectory() as d:
            first, wall, cpu, _ = _timed(argv, {**os.environ, "NUMBA_CACHE_DIR": d})
            n = sum(name.endswith(".nbc") for _, _, files in os.walk(d) for name in files)
            rows.append((f"{what} ({n} kernels)", first, wall, cpu))
    return rows


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
    ap.add_argument("--cli", action="store_true", help="time a warm CLI call's first answer (and the Numba floor)")
    ap.add_argument("--cli-cold", action="store_true", help="time the first CLI call with an empty Numba cache")
    ap.add_argument("--no-designs", action="store_true", help="skip the exactdp/PLD design timings")
    ap.add_argument("--sweep", action="store_true", help="time the full 946-pair sweep (minutes)")
    args = ap.parse_args()
    print(f"machine: {platform.machine()} python {platform.python_version()}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'design':<46} {'exactdp min':>12} {'median':>9} {'worst rel':>10} {'PLD':>8} {'PLD/exactdp':>12}")
    for name, comp in ([] if args.no_designs else designs()):
        eps_list = [bun_steinke_epsilon(comp.rho, d) for d in DEFAULT_DELTAS]
        tmin, tmed, worst = time_exactdp(comp, eps_list, args.reps)
        tp = time_pld(comp, eps_list)
        print(f"{name:<46} {tmin * 1e3:>9.1f} ms {tmed * 1e3:>6.1f} ms {worst:>10.1e} {tp:>6.2f} s {tp / tmin:>11.3g}x")
    if args.cli or args.cli_cold:
        rows = (time_cli(args.reps) if args.cli else []) + (time_cli_cold() if args.cli_cold else [])
        print("startup, a new process each; CPU = the child's user+sys" + (
            f"; warm Numba cache: the run with the earliest answer of {args.reps} interleaved rounds after a warm-up"
            if args.cli else "") + ":")
        print(f"  {'':<48} {'answer':>8} {'exit':>8} {'CPU':>8}")
        for what, first, wall, cpu in rows:
            print(f"  {what:<48} {first:>6.3f} s {wall:>6.3f} s {cpu:>6.3f} s")
    if args.sweep:
        wall, cpu = time_sweep()
        print(f"full 946-pair DHC sweep (--jobs 2): {wall:.1f} s wall, {cpu:.1f} CPU-s")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
