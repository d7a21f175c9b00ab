"""Benchmark: Arb certificates (exactdp.certify) — time and enclosure width per case.

Measured in one run, side by side:

* the CLI end to end (``exactdp delta ... --certify --json``, CLI start included) against
  the same command without ``--certify`` (the float64 fast path alone) and with
  ``--verify`` (the 60-digit mpmath twin, the previous "certificate");
* the Python API per point (``Certifier`` built fresh for each case: planning, node
  selection and the point), with the enclosure's relative width and the tail method;
* the sweep headline for three pairs (``--certify-headline``).

* designs off any small lattice (``--offlattice``): the engine's query and the
  meet-in-the-middle certificate (:mod:`exactdp.certify.offlattice`) in one process, CPU
  seconds each, with the check that the engine's value is on the conservative side.

Run:  python bench/bench_certify.py              (prints markdown tables)
      python bench/bench_certify.py --cli         (only the CLI table)
      python bench/bench_certify.py --offlattice  (only the off-lattice table)
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

import flint

from exactdp.census.allocations import load_allocation
from exactdp.certify import Certifier, bureau_epsilon
from exactdp.mechanisms import Composition, DiscreteGaussian

FULL_CHAIN = ["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "13", "--eps", "26.3405888527", "--json"]
COARSE = ["delta", "--allocation", "dhc-persons-2020", "--pair", "6", "6", "--eps", "26.3405888527", "--json"]


def cli(argv, reps):
    """(min wall, median wall, min CPU user+sys, last JSON) of ``reps`` CLI runs."""
    times, cpus, out = [], [], None
    for _ in range(reps):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "exactdp", *argv], capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        out = json.loads(proc.stdout)
    return min(times), statistics.median(times), min(cpus), out


def api_cases():
    dhc = load_allocation("dhc-persons-2020")
    pair = {p: Composition.from_rhos(dhc.pair_rhos(*p)) for p in ((13, 13), (6, 6), (1, 43))}
    small = Composition.of(DiscreteGaussian(s, d) for s, d in
                           [(Fraction(2), 1), (Fraction(2), 1), (Fraction(9, 2), 1), (Fraction(6, 5), 1),
                            (Fraction(11, 7), 1)])
    bs = bureau_epsilon(Fraction(24811, 5000), Fraction(1, 10**10))
    cases = []
    for name, comp in (("13-13", pair[13, 13]), ("6-6", pair[6, 6]), ("1-43", pair[1, 43])):
        cases += [
            (f"{name} δ(ε=26.3405888527)", comp, lambda c: c.delta("26.3405888527")),
            (f"{name} δ(ε_BS(1e-10)) (irrational ε)", comp, lambda c, e=bs: c.delta(e)),
            (f"{name} δ(ε=46) (deep tail)", comp, lambda c: c.delta("46")),
            (f"{name} ε(δ=1e-10) (own piece search)", comp, lambda c: c.epsilon("1e-10")),
            (f"{name} β(α=0.05)", comp, lambda c: c.tradeoff("0.05")),
        ]
    cases += [
        ("5 mechanisms (brute-force design) δ(ε=1)", small, lambda c: c.delta("1")),
        ("σ² = 10⁷, δ ≈ 1e-2669", Composition.of([DiscreteGaussian(Fraction(10**7), 1)]),
         lambda c: c.delta("7/200")),
    ]
    rows = []
    for label, comp, f in cases:
        t0 = time.perf_counter()
        cert = Certifier(comp)
        enc = f(cert)
        dt = time.perf_counter() - t0
        lo, hi = enc.decimal(22)
        p = enc.params
        kept, n = p.get("nodes_kept", p.get("fine_nodes_kept")), p.get("n_nodes", p.get("fine_n_nodes"))
        rows.append((label, f"{dt:.3f}", f"{enc.relative_width:.1e}", enc.method.split("/")[1],
                     "—" if kept is None else f"{kept}/{n}", enc.precision_bits, lo, hi))
    return rows


OFF_LATTICE = {
    "5 three-decimal σ²": [(v, 1, 1) for v in "2.513 3.071 4.407 3.331 3.617".split()],
    "shifts −1, 3, 12, 2": [("3.07", -1, 1), ("4.4", 3, 1), ("2.51", 12, 1), ("5.17", 2, 1)],
    "tiny beside large, counts": [("1/1000", 1, 3), ("0.05", 1, 1), ("2.51", 1, 1), ("7.3", 1, 2), ("174.9", 1, 1)],
    "14 distinct σ² ≈ 40 (beyond reach)": [(f"{40 + k}.{k + 1}", 1, 1) for k in range(14)],
    "8 two-decimal σ² in [2.5, 4.5]": [(v, 1, 1) for v in "2.51 2.77 3.07 3.33 3.61 3.89 4.13 4.4".split()],
}
OFF_QUERIES = (("delta", "1"), ("epsilon", "1e-6"), ("tradeoff", "0.1"))


def offlattice_rows():
    """Yields (design, query, engine CPU-s, certificate CPU-s, rel. width, atoms per half, verdict)."""
    from exactdp.accounting.accountant import ExactAccountant, delta, epsilon, tradeoff
    from exactdp.certify import certifier_for, certify_points
    from exactdp.numerics.errors import UncertifiedError

    for label, mechs in OFF_LATTICE.items():
        comp = Composition.of(DiscreteGaussian(Fraction(s2), d) for s2, d, m in mechs for _ in range(m))
        t0 = time.process_time()
        acc = ExactAccountant(comp)
        build = time.process_time() - t0
        cert = certifier_for(comp)
        for kind, value in OFF_QUERIES:
            q = Fraction(value)
            t0 = time.process_time()
            if kind == "delta":
                pts = delta(acc, [q]).points
            elif kind == "epsilon":
                pts = epsilon(comp, [q]).points
            else:
                pts = tradeoff(comp, [q]).points
            t_engine = time.process_time() - t0 + (build if kind == "delta" else 0.0)
            t0 = time.process_time()
            try:
                enc = certify_points(comp, kind, [q], pts, cert)[0]
                verdict = f"passes ({enc.method.split('/')[1]})"
                width, atoms = f"{enc.relative_width:.1e}", enc.params.get("atoms_per_half", "—")
            except UncertifiedError as exc:
                verdict, width, atoms = f"refused: {str(exc)[:90]}…", "—", "—"
            t_cert = time.process_time() - t0
            yield (label, f"{kind}({value})", f"{t_engine:.2f}", f"{t_cert:.2f}", width, atoms, verdict)
            if verdict.startswith("refused"):
                break


def main() -> None:
    if "--offlattice" in sys.argv:
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"python-flint {flint.__version__}; load average before: {os.getloadavg()[0]:.2f}")
        print()
        print("| design | query | engine CPU-s | certificate CPU-s | rel. width | atoms per half | check |")
        print("|---|---|---:|---:|---:|---|---|")
        for r in offlattice_rows():
            print("| " + " | ".join(str(x) for x in r) + " |", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"python-flint {flint.__version__}; load average before: {os.getloadavg()[0]:.2f}")
    print()
    print("| command (CLI start included) | wall, min of 5 | wall, median | CPU, min | enclosure |")
    print("|---|---:|---:|---:|---|")
    for label, argv, reps in (("13-13 fast path only", FULL_CHAIN, 5),
                              ("13-13 `--certify`", FULL_CHAIN + ["--certify"], 5),
                              ("13-13 `--verify` (60-digit twin)", FULL_CHAIN + ["--verify"], 1),
                              ("6-6 fast path only", COARSE, 5),
                              ("6-6 `--certify`", COARSE + ["--certify"], 5)):
        tmin, tmed, cpu, out = cli(argv, reps)
        enc = out["points"][0].get("enclosure", ["", ""])
        print(f"| {label} | {tmin:.2f} s | {tmed:.2f} s | {cpu:.2f} s | {' … '.join(enc) if enc[0] else '—'} |")
    if "--cli" in sys.argv:
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
    print()
    print("| case (API, Certifier built fresh) | seconds | rel. width | method | nodes kept/N | bits |"
          " lower | upper |")
    print("|---|---:|---:|---|---:|---:|---|---|")
    for r in api_cases():
        print("| " + " | ".join(str(x) for x in r) + " |")
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["sweep", "--pairs", "13-13,6-6,1-43", "--only-deltas", "--deltas", "1e-10,1e-20,1e-40",
                "--tradeoff-half", "20", "--no-plots", "--quiet", "--jobs", "1", "--out", f"{tmp}/run",
                "--certify-headline", "--json"]
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "exactdp", *argv], capture_output=True, text=True, check=True)
        total = time.perf_counter() - t0
        man = json.load(open(f"{tmp}/run/manifest.json"))
        print()
        print(f"sweep 13-13,6-6,1-43 at δ ∈ {{1e-10, 1e-20, 1e-40}}: {total:.2f} s in all, of which "
              f"--certify-headline {man['headline_certificates']['seconds']:.2f} s")
        for d, c in man["headline_certificates"]["targets"].items():
            dlt = c["delta_overall"]
            print(f"  δ={d}: overall δ in [{', '.join(dlt['enclosure'])}] ({dlt['argmax']}),"
                  f" overall ε in [{', '.join(c['eps_overall']['enclosure'])}] ({c['eps_overall']['argmax']})")
    print()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
