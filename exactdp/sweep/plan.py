"""What a sweep will do, decided before it starts: its identity, the tasks left to
compute (each finished one verified), the number of workers, and its estimated cost
against the cost budget (:mod:`exactdp.numerics.budget`).

* :func:`sweep_identity` — what every pair file records of its sweep;
* :func:`plan_tasks` — the tasks to compute, those reused (verified by
  :func:`exactdp.sweep.io.check_task`) and those whose files failed verification;
* :func:`check_jobs` — the workers, refusing local workers beyond this machine's CPUs;
* :func:`estimate_sweep`, :func:`check_budget` — the estimate and the refusal beyond the
  budget (a sweep's own default: an hour of wall-clock time).
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

from exactdp.numerics.budget import check_cost, current_budget
from exactdp.numerics.exact import InputError
from exactdp.sweep.io import MISSING, check_task, pair_paths, release_path, sha256_text

__all__ = ["sweep_identity", "plan_tasks", "check_pair_count", "report_damaged", "estimate_sweep", "check_jobs",
           "check_budget", "PathDesigns", "SWEEP_DEFAULT_SECONDS", "ALPHA_MIN_LOWEST", "check_settings"]


def sweep_identity(ident: dict) -> str:
    """What every pair file of a sweep records of it: the SHA-256 of the format, the
    allocation(s)' content hashes and the settings (not the list of pairs, so that a pair
    file is valid for any sweep of the same allocation and settings)."""
    core = {"format": ident["format"], "allocation": ident["allocation"]["content_hash"],
            "settings": ident["settings"],
            "release_allocation": ident.get("release_allocation", {}).get("content_hash")}
    return sha256_text(json.dumps(core, sort_keys=True, separators=(",", ":")))


#: the smallest ``alpha_min`` of the trade-off thresholds: below it ``2·α − 1`` rounds to
#: −1 at the 30 digits of ``exactdp.sweep.pair.tradeoff_thresholds`` and the probit
#: scale is infinite
ALPHA_MIN_LOWEST = Fraction(1, 10**30)


def check_settings(settings) -> None:
    """Refuse settings the pair computation cannot honour (before any work)."""
    from exactdp.numerics.exact import parse_exact

    parse_exact(settings.alpha_min, "alpha_min", lo=ALPHA_MIN_LOWEST, hi=1, hi_open=True)


#: CPU seconds of one DHC pair at the default settings (946 pairs, 840 computed: 40.6 CPU-s,
#: bench/sweep_timing.md, 19th section), and of one whole-release pair (494 CPU-s for the
#: 946 + 946 tasks of ``--with-pl94``, README "Performance")
PAIR_SECONDS = 0.05
RELEASE_SECONDS = 0.5
#: CPU seconds per distinct mechanism of a pair beyond the DHC pairs' ~12 (a 200 × 200
#: allocation's pair, 999 distinct ρ: 0.51 s against 0.05)
DISTINCT_SECONDS = 5e-4
#: resident size of a sweep worker (measured ~0.22 GB after the DHC pairs) and the bytes
#: a trade-off vertex adds to it (+30 MB at 16 001 vertices)
WORKER_BYTES = 0.25e9
VERTEX_BYTES = 5e3
#: the driver's share of a pair: its parsed numbers kept for the summaries (a 200-path
#: allocation, 20 100 pairs: 3.5 GB) and its files' writes and assembly (serial; ~10 ms)
PAIR_DRIVER_BYTES = 0.17e6
PAIR_DRIVER_SECONDS = 0.01
#: seconds a product of a path's table takes (exact rationals): 8·10⁶ for a 200-path,
#: 200 × 200 allocation, ~80 s
CELL_SECONDS = 1e-5
#: the time budget of a sweep when none is given (its pairs are checkpointed, it resumes
#: after an interruption and shows progress): an hour of wall-clock time
SWEEP_DEFAULT_SECONDS = 3600.0


def estimate_sweep(tasks, settings, jobs: int, n_pairs: int | None = None, cells: int = 0) -> dict:
    """The estimated cost of computing ``tasks`` (tuples ``(kind, i, j, mechanisms,
    distinct)``, :func:`plan_tasks`) with ``jobs`` workers in a sweep of ``n_pairs`` pairs
    (default: the tasks) whose paths' tables take ``cells`` products to build: ``cpu`` and
    ``wall`` seconds, ``worker_bytes`` (each worker),
    ``driver_bytes``; from the measured rates above (an estimate for the budget, made
    before any work: a sweep of pairs like the DHC's is estimated within a factor ~2)."""
    vertices = 2 * settings.tradeoff_half + 1
    scale = (vertices / 801 + len(settings.deltas) / 42) / 2  # the default settings: 1
    cpu = 0.0
    for kind, _, _, _, distinct in tasks:
        base = PAIR_SECONDS if kind == "pair" else RELEASE_SECONDS
        cpu += base * scale + DISTINCT_SECONDS * max(distinct - 12, 0)
    n_pairs = len(tasks) if n_pairs is None else n_pairs
    serial = PAIR_DRIVER_SECONDS * scale * len(tasks) + CELL_SECONDS * cells
    return {"cpu": cpu, "wall": cpu / max(jobs, 1) + serial,
            "worker_bytes": WORKER_BYTES + VERTEX_BYTES * vertices,
            "driver_bytes": WORKER_BYTES + PAIR_DRIVER_BYTES * scale * n_pairs}


def check_jobs(jobs, backend: str) -> int:
    """The number of workers (``-1``: all cores), refusing what cannot help: local
    workers beyond this machine's cores."""
    cores = _cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise InputError("jobs", jobs, "must be a positive integer or -1 (all cores)")
    if jobs == -1:
        return cores if backend == "loky" else -1
    if backend == "loky" and jobs > cores:
        raise InputError("jobs", jobs, f"this machine has {cores} CPU{'s' if cores > 1 else ''}; more local workers "
                                       f"than CPUs only add memory (about {WORKER_BYTES / 1e9:.2g} GB each) and time")
    return jobs


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def check_budget(tasks, settings, jobs: int, allocation_name: str, n_pairs: int, cells: int = 0) -> None:
    """Refuse at once a sweep whose estimate (:func:`estimate_sweep`) is beyond the budget
    (:func:`~exactdp.numerics.budget.check_cost`; a sweep's default time budget:
    :data:`SWEEP_DEFAULT_SECONDS`)."""
    if not tasks:
        return
    workers = jobs if jobs > 0 else _cores()
    est = estimate_sweep(tasks, settings, workers, n_pairs, cells)
    vertices = 2 * settings.tradeoff_half + 1
    pairs = f"{len(tasks)} pair{'s' if len(tasks) > 1 else ''} of {allocation_name}"
    _check_worker(settings)
    check_cost("allocation", allocation_name, memory=est["driver_bytes"], what=f"the summaries of {n_pairs} pairs")
    check_cost("allocation", allocation_name, seconds=est["wall"], default_seconds=SWEEP_DEFAULT_SECONDS,
               what=f"{pairs} ({vertices} trade-off vertices each; {est['cpu']:.3g} CPU-s on {workers} "
                    f"worker{'s' if workers > 1 else ''})")


#: bytes a cell of the path × path spread matrix takes in the assembly (its value, its
#: text and the figure's float; measured order of magnitude)
MATRIX_CELL_BYTES = 100


def check_pair_count(n_pairs: int, n_paths: int, settings, jobs: int, allocation_name: str) -> None:
    """Refuse at once, before the list of pairs is built, a sweep whose size alone puts
    it beyond the budget: the assembly's path × path spread matrix
    (:data:`MATRIX_CELL_BYTES` a cell, for any number of pairs), the driver's numbers of
    each pair for the summaries (:data:`PAIR_DRIVER_BYTES`), and at least
    :data:`PAIR_SECONDS` a pair (an allocation of 20,000 paths: a 4·10⁸-cell matrix and
    2·10⁸ pairs, which grew past 7 GB before any estimate)."""
    _check_worker(settings)
    check_cost("allocation", allocation_name, memory=WORKER_BYTES + MATRIX_CELL_BYTES * n_paths**2,
               what=f"the {n_paths} x {n_paths} spread matrix of its paths")
    if not n_pairs:
        return
    vertices = 2 * settings.tradeoff_half + 1
    scale = (vertices / 801 + len(settings.deltas) / 42) / 2
    workers = jobs if jobs > 0 else _cores()
    check_cost("allocation", allocation_name, memory=WORKER_BYTES + PAIR_DRIVER_BYTES * scale * n_pairs,
               what=f"the summaries of {n_pairs} pairs")
    each = f"at least {PAIR_SECONDS * scale:.2g} CPU-s each, on {workers} worker{'s' if workers > 1 else ''}"
    check_cost("allocation", allocation_name, seconds=n_pairs * PAIR_SECONDS * scale / workers,
               default_seconds=SWEEP_DEFAULT_SECONDS, what=f"{n_pairs} pairs ({each})")


def _check_worker(settings) -> None:
    """Refuse settings whose trade-off alone puts each worker beyond the memory budget
    (named first: ``--tradeoff-half`` is what the user changes)."""
    vertices = 2 * settings.tradeoff_half + 1
    worker = WORKER_BYTES + VERTEX_BYTES * vertices
    if worker > current_budget(default_seconds=SWEEP_DEFAULT_SECONDS).memory:
        check_cost("tradeoff_half", settings.tradeoff_half, memory=worker,
                   what=f"each worker ({vertices} trade-off vertices a pair)")


class PathDesigns:
    """Each path's ρ (``alloc.path_rhos``, computed once, when a task of the path is
    dispatched: it multiplies out the path's table, ~0.4 s for a path of a 200 × 200
    allocation), and each task's size from the allocation's structure alone (no table is
    built to estimate a sweep, and a 200-path allocation's 20 100 pairs of 80 000
    mechanisms are never held at once)."""

    def __init__(self, alloc, pl=None):
        self.alloc, self.pl = alloc, pl
        self._paths: dict = {}
        levels = alloc.levels
        size = {lev: sum(1 for v in alloc.base[lev] if v) for lev in levels}
        # a level's distinct values as (numerator, denominator) pairs (hashed in C); a path
        # multiplies a level by m, so its distinct ρ are at most its distinct (m, value)
        values = {lev: {(v.numerator, v.denominator) for v in alloc.base[lev] if v} for lev in levels}
        self._sizes = {}
        for k, mult in enumerate(alloc.paths, start=1):
            by_m: dict = {}
            for lev, m in zip(levels, mult):
                if m:
                    by_m.setdefault(m, []).append(values[lev])
            self._sizes[k] = (sum(size[lev] for lev, m in zip(levels, mult) if m),
                              sum(len(set().union(*sets)) for sets in by_m.values()))

    def rhos(self, kind: str, i: int, j: int) -> tuple:
        """The ρ of task ``(kind, i, j)``: path i's then path j's (then, for a release
        task, the P.L. 94-171 chain's)."""
        for p in (i, j):
            if p not in self._paths:
                self._paths[p] = self.alloc.path_rhos(p)
        rhos = self._paths[i] + self._paths[j]
        return rhos + self.pl.pair_rhos(1, 1) if kind == "release" else rhos

    def size(self, kind: str, i: int, j: int) -> tuple[int, int]:
        """``(mechanisms, distinct ρ at most)`` of task ``(kind, i, j)``."""
        n, d = self._sizes[i][0] + self._sizes[j][0], self._sizes[i][1] + self._sizes[j][1]
        if kind == "release":
            chain = self.pl.pair_rhos(1, 1)
            n, d = n + len(chain), d + len(set(chain))
        return n, d

    def table_cells(self) -> int:
        """Products the paths' tables take to build (levels × queries a path)."""
        return len(self.alloc.paths) * len(self.alloc.levels) * len(self.alloc.queries)


def plan_tasks(out: Path, designs: PathDesigns, pair_list, rel_pairs, settings, identity: str):
    """``(tasks, reused, damaged)``: the tasks to compute ``(kind, i, j, mechanisms,
    distinct)`` (designs with few mechanisms first: they prune worst, and would trail),
    how many are complete and verified in ``out``, and the ``(kind, i, j, reason)`` of
    those whose files failed verification."""
    tasks, reused, damaged = [], 0, []
    for kind, items in (("pair", pair_list), ("release", rel_pairs)):
        for i, j in items:
            files = pair_paths(out, i, j) if kind == "pair" else release_path(out, i, j)
            why = check_task(files, settings.deltas, settings.envelope_points, identity)
            if why is None:
                reused += 1
                continue
            if why != MISSING:
                damaged.append((kind, i, j, why))
            tasks.append((kind, i, j, *designs.size(kind, i, j)))
    tasks.sort(key=lambda t: (t[3] if t[0] == "pair" else 10**6, t[0], t[1], t[2]))
    return tasks, reused, damaged


#: damaged tasks named one line each on stderr; beyond, one line with the count
_DAMAGE_LINES = 10


def report_damaged(damaged, say) -> None:
    for kind, i, j, why in damaged[:_DAMAGE_LINES]:
        say(f"--resume: {kind} {i}-{j} failed verification ({why}); computing it again")
    if len(damaged) > _DAMAGE_LINES:
        say(f"--resume: {len(damaged) - _DAMAGE_LINES} more tasks failed verification; computing them again")
