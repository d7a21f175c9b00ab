"""The estimated cost of a tune run, checked against the cost budget before any work.

A run evaluates every neighbour pair of the allocation several times (the input, each
accepted stage, a resumed run's fresh re-evaluation) and a few active pairs many times
(the boundary searches), then, with profiles, sweeps the input and the result.  The
estimate (:func:`estimate_tune`) is made from the allocation's structure alone (no pair's
table is built) with rates measured on the DHC files (``bench/tune.md``: persons, per
level, 67 s of search on 2 cores; per cell, 179 s), and refused beyond the budget
(:func:`check_tune_budget`, :mod:`exactdp.numerics.budget`; a tune's own default time
budget is an hour, like a sweep's: its batches are checkpointed and ``--resume`` finishes
it).
"""

from __future__ import annotations

from exactdp.numerics.budget import check_cost

__all__ = ["estimate_tune", "check_tune_budget", "profile_settings", "PROFILE_DELTAS", "TUNE_DEFAULT_SECONDS",
           "PAIR_EVAL_SECONDS", "TUNE_PAIR_BYTES"]

#: target δ of the profile sweeps of input and result (decades; the run's δ is added)
PROFILE_DELTAS = tuple(f"1e-{k}" for k in range(1, 21))


def profile_settings(delta_text=None, rel_tol: float = 1e-10):
    """The settings of the two profile sweeps: :data:`PROFILE_DELTAS` and the run's δ."""
    from exactdp.sweep.pair import SweepSettings

    deltas = tuple(dict.fromkeys(PROFILE_DELTAS + ((delta_text,) if delta_text is not None else ())))
    return SweepSettings(deltas=deltas, tradeoff_half=50, rel_tol=rel_tol)

#: the time budget of a tune run when none is given (checkpointed and resumable): an hour
TUNE_DEFAULT_SECONDS = 3600.0
#: CPU seconds of one certified δ(ε) of a DHC pair (946 input pairs: ~15 s on 2 workers)
PAIR_EVAL_SECONDS = 0.035
#: evaluations of every pair a run makes, as full passes: the input, each stage's
#: verification and the boundary searches' share (DHC persons: ~4.5 per level, ~12 per cell)
BASE_PASSES = 4.0
PASSES_PER_GROUP = 0.1
#: wall seconds of a run besides its evaluations (workers' start, the Arb certificate, the
#: outputs; each profile sweep's start and assembly): DHC units, one pair, 3.5 s of search
#: and 13 s of profiles
RUN_SECONDS = 5.0
PROFILE_SECONDS = 5.0
#: bytes the driver keeps a pair (its bounds at each stage, the search's memo)
TUNE_PAIR_BYTES = 5e3
#: pairs whose sizes are summed one by one for the estimate (beyond: the mean of a sample)
_SIZED_PAIRS = 200_000


def estimate_tune(problem, jobs: int, profile: bool) -> dict:
    """``cpu`` and ``wall`` seconds and ``driver_bytes`` of a tune run of ``problem`` with
    ``jobs`` workers (and its two profile sweeps when ``profile``)."""
    from exactdp.sweep.plan import DISTINCT_SECONDS, PAIR_SECONDS, WORKER_BYTES, PathDesigns

    alloc = problem.alloc
    n = alloc.n_paths
    n_pairs = n * (n + 1) // 2
    sizes = PathDesigns(alloc)
    step = max(1, n_pairs // _SIZED_PAIRS)
    sample = [sizes.size("pair", i, j) for k, (i, j) in enumerate(_pairs(n)) if k % step == 0]
    extra = sum(DISTINCT_SECONDS * max(d - 12, 0) for _, d in sample) / max(len(sample), 1)
    per_pass = n_pairs * (PAIR_EVAL_SECONDS + extra)
    passes = BASE_PASSES + PASSES_PER_GROUP * len(problem.groups)
    cpu = passes * per_pass + (2 * n_pairs * (PAIR_SECONDS + extra) if profile else 0.0)
    wall = cpu / max(jobs, 1) + RUN_SECONDS + (2 * PROFILE_SECONDS if profile else 0.0)
    return {"cpu": cpu, "wall": wall, "driver_bytes": WORKER_BYTES + TUNE_PAIR_BYTES * n_pairs,
            "pairs": n_pairs}


def _pairs(n: int):
    for i in range(1, n + 1):
        for j in range(i, n + 1):
            yield i, j


def check_tune_budget(problem, jobs: int, profile: bool) -> None:
    """Refuse at once (:class:`~exactdp.numerics.errors.BudgetExceeded`, one line naming
    the budget) a run estimated beyond the budget: memory first (from the number of
    pairs alone, before any list of them is built), then time."""
    alloc = problem.alloc
    n = alloc.n_paths
    n_pairs = n * (n + 1) // 2
    from exactdp.sweep.plan import WORKER_BYTES

    check_cost("allocation", alloc.name, memory=WORKER_BYTES + TUNE_PAIR_BYTES * n_pairs,
               what=f"tuning its {n_pairs} pairs (the bounds of every pair at each stage)")
    if profile:
        from exactdp.sweep.plan import check_pair_count

        check_pair_count(n_pairs, n, profile_settings(None), jobs, alloc.name)
    est = estimate_tune(problem, jobs, profile)
    check_cost("allocation", alloc.name, seconds=est["wall"], default_seconds=TUNE_DEFAULT_SECONDS,
               what=f"tuning its {n_pairs} pairs per {problem.vary} ({est['cpu']:.3g} CPU-s on {jobs} "
                    f"worker{'s' if jobs > 1 else ''}{', with the two profile sweeps' if profile else ''})")
