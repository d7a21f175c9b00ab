"""The DHC sweep: exact privacy of every neighbour pair of an allocation, in parallel,
crash-safe and resumable, then the overall (worst-case) curves.

``run_sweep`` distributes the pairs over workers (loky processes by default, or a dask
or ray cluster: :mod:`exactdp.runs.backends`), writes every finished pair atomically
(:mod:`exactdp.sweep.io`, in group commits), and assembles the outputs from the pair
files' numbers in pair order (:mod:`exactdp.sweep.summary`; the texts of the pairs
computed in this run are parsed as they arrive, :mod:`exactdp.sweep.tables`), so the data
files depend neither on the number of workers, nor on the backend, nor on interruptions.
The output folder is locked for the whole run (``.exactdp-sweep.lock``, an OS file lock released even on ``kill -9``): a
second sweep started on the same folder stops at once instead of interleaving.  Every
pair's json file carries the checksums of its files and the sweep's identity
(:mod:`exactdp.sweep.io`): ``resume`` verifies every file it reuses and recomputes what
fails (one line on stderr each), and rebuilds a damaged manifest from the verified pairs.
Before any work the sweep's cost is estimated (:func:`estimate_sweep`) and refused beyond
the cost budget (:mod:`exactdp.numerics.budget`).

Outputs in the folder ``out``::

    pairs/pair_I_J.csv            ε–δ rows of pair (I, J) (one per target δ)
    pairs/pair_I_J_tradeoff.csv   trade-off vertices of pair (I, J)
    pairs/pair_I_J_grid.csv       pair (I, J)'s curve on the common α grid of the envelope
    pairs/pair_I_J.json           engine diagnostics and worst certified errors
    summary.csv                   per δ: overall (max over pairs) δ and ε, argmax, min, spread
    envelope.csv                  overall trade-off: lower convex envelope of all pairs
    release.csv                   (with ``with_pl94``) pair ∘ P.L. 94-171 persons chain: its
                                  lattice (scale ≈ 1.6e23) is beyond the int64 engine, so
                                  these rows are certified brackets (big-lattice accountant)
    plots/*.png, plots/*.pdf      figures (:mod:`exactdp.sweep.plots`)
    manifest.json                 versions, allocation hash, settings, timings, worst errors
    report.html                   the page to read and cite: written by ``exactdp sweep``
                                  (``finish=``:func:`exactdp.report.write_sweep_report`)
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from exactdp.census.designs import PL94_ALLOCATION, composition_for_allocation
from exactdp.numerics.exact import InputError, decimal_exponent
from exactdp.runs.backends import BACKENDS, check_backend, unordered_results
from exactdp.sweep.assist import Assistant
from exactdp.sweep.io import (
    LOCK_FILE,
    MANIFEST,
    SweepDirError,
    atomic_write_text,
    check_folder_free,
    locked_out_dir,
    pair_paths,
    read_json,
    release_path,
    remove_temp_files,
    sha256_text,
)
from exactdp.sweep.pair import DEFAULT_DELTAS, SweepSettings, compute_pair
from exactdp.sweep.plan import (
    PathDesigns,
    check_budget,
    check_jobs,
    check_pair_count,
    check_settings,
    plan_tasks,
    report_damaged,
    sweep_identity,
)
from exactdp.sweep.runtime import (
    GroupWriter,
    ProgressLines,
    WriteQueue,
    after_worker_task,
    allow_worker_growth,
    guard_worker,
    mark_driver_process,
)
from exactdp.sweep.tables import PairTables
from exactdp.sweep.twins import composition_key, relabel

__all__ = [
    "run_sweep",
    "SweepReport",
    "SweepSettings",
    "DEFAULT_DELTAS",
    "composition_for_allocation",
    "BACKENDS",
]

FORMAT = "exactdp-sweep/2"  # 2: every pair's json file carries checksums and the sweep's identity
_ASSIST_MIN_CALLS = 64  # pair computations from which the assembly gets a helper process
_ASSIST_AFTER = 4  # results to wait for before starting it
_THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass(frozen=True)
class SweepReport:
    """What a finished sweep did.

    Attributes
    ----------
    out : Path
        The output folder.
    n_pairs, computed, reused : int
        Pairs in the sweep, computed in this run, and found complete (``resume``).
    manifest : dict
        The manifest written to ``out/manifest.json``.
    """

    out: Path
    n_pairs: int
    computed: int
    reused: int
    manifest: dict


def _cap_threads() -> None:
    """One compute thread per worker process (the sweep's parallelism is across pairs).

    ``NUMBA_NUM_THREADS`` is set only before Numba is imported (it is read then; changed
    after its thread pool started, every later compilation raises — with kernels built on
    first call, a ``--jobs 1`` sweep on a cold cache).  Numba itself is not imported here
    (~0.5 s of CPU in a worker that calls only ahead-of-time compiled kernels): if it is
    loaded already its thread count is set, else the variable is read when it is."""
    for var in _THREAD_VARS:
        if not (var == "NUMBA_NUM_THREADS" and "numba" in sys.modules):
            os.environ[var] = "1"
    numba = sys.modules.get("numba")  # not imported here: a worker using the ahead-of-time
    if numba is not None:  # kernels never imports it (and reads the variable if it does)
        try:
            numba.set_num_threads(1)
        except ValueError:  # pragma: no cover - a threading layer already launched
            pass


_CAPPED: set = set()  # threads whose compute threads are capped (numba's setting is per thread)
_SETTINGS: dict = {}  # settings dict (as a hashable tuple) -> SweepSettings, per worker process


def _task(kind: str, i: int, j: int, rhos, settings_dict: dict, driver_pid: int = 0):
    """Worker entry point (a module-level function, so every backend can pickle it).

    The thread cap and the settings are set up once per worker thread / process (a
    worker runs many pairs; validating the 42 target δ took ~2 ms a pair), and so is
    loky's leak guard (:func:`~exactdp.sweep.runtime.allow_worker_growth`: pairs 6-6 then
    6-10 in one worker grew it past loky's 300 MB and had it restarted mid-sweep), and so
    is the guard that ends a local worker with its driver ``driver_pid``
    (:func:`~exactdp.sweep.runtime.guard_worker`).  After a worker's first task its heap
    is settled (:func:`~exactdp.sweep.runtime.after_worker_task`)."""
    tid = threading.get_ident()
    if tid not in _CAPPED:
        _cap_threads()
        allow_worker_growth()
        if driver_pid:
            guard_worker(driver_pid)
        _CAPPED.add(tid)
    key = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in settings_dict.items())
    settings = _SETTINGS.get(key)
    if settings is None:
        settings = _SETTINGS[key] = SweepSettings.from_dict(settings_dict)
    try:
        result = compute_pair(i, j, rhos, settings)
    except InputError as exc:  # beyond the engine's envelope: name the pair (the field was internal)
        raise InputError(f"pair {i}-{j}", f"rho ~1e{decimal_exponent(sum(rhos, Fraction(0)) / 2)}",
                         exc.reason) from None
    after_worker_task()  # after a worker's first task: its heap settled (the collector's policy)
    return kind, result


def _version_of(name: str) -> str:
    """A package's version: the imported module's ``__version__`` if it is loaded, else
    the installed distribution's (numba and joblib cost ~1 s to import in this process,
    which needs neither before the workers start)."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod.__version__
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:  # pragma: no cover - an unpackaged install
        import importlib

        return importlib.import_module(name).__version__


def _versions() -> dict:
    import mpmath

    from exactdp._version import __version__

    return {"exactdp": __version__, "python": platform.python_version(), "numpy": _version_of("numpy"),
            "numba": _version_of("numba"), "mpmath": mpmath.__version__, "mpmath_backend": mpmath.libmp.BACKEND,
            "joblib": _version_of("joblib")}


def _identity(alloc, pairs, settings, release_pairs, pl) -> dict:
    ident = {
        "format": FORMAT,
        "allocation": {"name": alloc.name, "content_hash": alloc.content_hash(), "n_paths": alloc.n_paths,
                       "total_rho": str(alloc.total_rho)},
        "settings": settings.as_dict(),
        "pairs": [f"{i}-{j}" for i, j in pairs],
        "release_pairs": [f"{i}-{j}" for i, j in release_pairs],
    }
    if release_pairs:
        ident["release_allocation"] = {"name": pl.name, "content_hash": pl.content_hash(),
                                       "total_rho": str(pl.total_rho)}
    return ident


def _check_out_dir(out: Path, ident: dict, resume: bool, say=None) -> dict:
    """The manifest already in ``out`` (``{}`` if none), after checking that this run may
    use the folder.  With ``resume``, a damaged manifest (unreadable, or not a sweep's) is
    set aside — ``say`` tells the user — and rebuilt from the verified pair files."""
    check_folder_free(out, "sweep", held=say is not None)  # in use, or another command's folder
    mpath = out / MANIFEST
    if mpath.is_file():
        try:
            old = read_json(mpath)
            if not isinstance(old, dict) or any(k not in old for k in ("format", "allocation", "settings")):
                raise ValueError("not a sweep manifest")
        except (ValueError, OSError) as exc:
            if not resume:
                raise SweepDirError(f"{mpath} is damaged ({type(exc).__name__}); pass --resume to rebuild it from "
                                    "the verified pair files, or choose a new --out") from None
            if say is not None:
                say(f"{mpath} is damaged ({type(exc).__name__}); rebuilding it from the verified pair files")
            return {}
        if not resume:
            raise SweepDirError(f"{out} already holds a sweep; pass --resume to finish it or choose a new --out")
        diffs = [k for k in ident if old.get(k) != ident[k]]
        if diffs:
            raise SweepDirError(f"--resume: {out} holds a sweep with different {', '.join(diffs)}; "
                                "rerun with the original settings or choose a new --out")
        return old
    if out.exists() and any(p.name != LOCK_FILE for p in out.iterdir()) and not resume:
        raise SweepDirError(f"{out} exists and is not empty (and holds no sweep manifest); choose a new --out")
    return {}


def run_sweep(allocation="dhc-persons-2020", out="exactdp-results", *, pairs=None, settings=None, jobs=1,
              backend="loky", scheduler=None, resume=False, quiet=True, with_pl94=None, plots=True,
              finish: Callable[[Path, Any], object] | None = None) -> SweepReport:
    """Run (or finish) a sweep over the neighbour pairs of an allocation.

    Parameters
    ----------
    allocation : str, path or Allocation
        Built-in name or allocation file (default the 2020 DHC persons file, 946 pairs).
    out : path
        Output folder (created; must be new or empty unless ``resume``).  Locked while
        the sweep runs: a second run on the same folder raises
        :class:`~exactdp.sweep.io.SweepDirError` at once.
    pairs : str or list of (int, int), optional
        Pair spec such as ``"13-13,6-6"`` (default: every pair ``i ≤ j``).
    settings : SweepSettings, optional
        Target δ, trade-off resolution, tail tolerance.
    jobs : int
        Parallel workers (``-1``: all cores).
    backend : {"loky", "dask", "ray"}
        Where the tasks run (:mod:`exactdp.runs.backends`): ``dask`` connects to
        ``scheduler`` (an address or a Client); ``ray`` connects to ``scheduler`` (a ray
        address) or, without one, starts a private local ray instance for the sweep.
    resume : bool
        Finish a sweep in ``out`` that was interrupted: complete pairs are kept as they
        are, the others computed; the settings must be the same.
    quiet : bool
        No progress bar (it is also off when stderr is not a terminal).
    with_pl94 : str or list of (int, int), optional
        Pairs whose whole-release guarantee (pair ∘ P.L. 94-171 persons chain) to add.
    plots : bool
        Write the figures.
    finish : callable, optional
        ``finish(out, allocation)`` is called once the manifest is written, still holding the
        folder's lock: the CLI passes :func:`exactdp.report.write_sweep_report` (the sweep
        itself renders no page: :mod:`exactdp.report` is a layer above it).

    Returns
    -------
    SweepReport

    Notes
    -----
    Method: each pair is :func:`exactdp.sweep.pair.compute_pair` (a pure function of the
    pair's mechanisms and the settings; pairs composing the same multiset of ρ — 106 of
    the 946 DHC pairs — are computed once and written relabelled); results are written
    atomically as they arrive (group commits: one durability barrier for the pairs
    finished meanwhile) and every summary is assembled from the files' numbers in pair
    order (parsed from the same texts as each result arrives, read from the files for
    pairs of an earlier run), so outputs are byte-identical for any ``jobs`` and across
    interruptions.  Error bound: each number
    carries its certified bound; the manifest states the worst.  Reference: Su, Su &
    Wang, exact privacy accounting for the 2020 U.S. Census (overall curve = max over
    pairs; trade-off = lower convex envelope).  From 64 computations on, a helper process
    (:mod:`exactdp.sweep.assist`) computes the envelope's GDP column and draws the
    figures with the same code, so the serial assembly after the last pair is shorter.
    """
    from exactdp.sweep.summary import assemble

    t_start = time.perf_counter()
    sweep = _plan_sweep(allocation, out, pairs, settings, jobs, backend, scheduler, with_pl94)
    out, alloc, settings = sweep.out, sweep.alloc, sweep.settings
    mark_driver_process()  # tasks run here (one job) leave this process's collector alone
    say = _stderr_line  # a damaged file or manifest is said even with quiet
    _check_out_dir(out, sweep.ident, resume)  # before the lock file is created in a folder that is not ours
    plan = functools.partial(plan_tasks, out, sweep.designs, sweep.pair_list, sweep.rel_pairs, settings,
                             sweep.identity)
    if not resume:  # refused beyond the budget before the folder is created
        _check_budget(sweep, plan()[0])
    with locked_out_dir(out), contextlib.ExitStack() as stack:
        old = _check_out_dir(out, sweep.ident, resume, say)  # again, now that no other run can write
        remove_temp_files(out)
        tasks, reused, damaged = plan()
        report_damaged(damaged, say)
        _check_budget(sweep, tasks)
        timings = dict(old.get("timings", {}).get("pairs", {})) if old else {}
        manifest = {**sweep.ident, "status": "running", "versions": _versions()}
        n_heads, tables, helper, t_compute = _compute_tasks(sweep, tasks, manifest, timings, stack, quiet=quiet,
                                                            reused=reused, plots=plots)
        t_assemble = time.perf_counter()
        extra = assemble(out, alloc, sweep.pair_list, settings, sweep.rel_pairs, sweep.pl, plots=plots,
                         assistant=helper, tables=tables)
        t_end = time.perf_counter()
        run = {"jobs": sweep.jobs, "backend": sweep.backend, "computed": len(tasks), "reused": reused,
               "relabelled": len(tasks) - n_heads, "recomputed_damaged": len(damaged),
               "cpu_count": os.cpu_count()}
        manifest = _final_manifest(sweep, extra, run, timings, (t_start, t_compute, t_assemble, t_end))
        atomic_write_text(out / MANIFEST, _dump(manifest))
        if finish is not None:  # report.html (the CLI: exactdp.report.write_sweep_report)
            finish(out, alloc)
        return SweepReport(out, len(sweep.pair_list), len(tasks), reused, manifest)


@dataclass(frozen=True)
class _Sweep:
    """The checked arguments of one :func:`run_sweep` call, as every phase of it reads them."""

    out: Path
    alloc: Any
    settings: SweepSettings
    pair_list: list  # sorted neighbour pairs (i, j)
    rel_pairs: list  # sorted pairs of the whole-release guarantee (empty without with_pl94)
    pl: Any  # the P.L. 94-171 allocation (None without with_pl94)
    jobs: int
    backend: str
    scheduler: Any
    ident: dict  # what a resumed run must have in common with this one (_identity)
    identity: str  # its hash, written in every pair's json file
    designs: PathDesigns


def _plan_sweep(allocation, out, pairs, settings, jobs, backend, scheduler, with_pl94) -> _Sweep:
    """:func:`run_sweep`'s arguments checked (in this order: allocation, settings, pairs,
    backend, jobs, release pairs) and resolved; nothing is written yet."""
    from exactdp.census.allocations import load_allocation, parse_pair_spec

    alloc = load_allocation(allocation)
    settings = settings or SweepSettings()
    check_settings(settings)
    check_backend(backend, scheduler)
    jobs = check_jobs(jobs, backend)
    every = pairs is None or (isinstance(pairs, str) and pairs.strip().lower() == "all")
    check_pair_count(alloc.n_paths * (alloc.n_paths + 1) // 2 if every else 0, alloc.n_paths, settings, jobs,
                     alloc.name)
    if pairs is None:
        pair_list = alloc.pairs()
    elif isinstance(pairs, str):
        pair_list = parse_pair_spec(pairs, alloc.n_paths)
    else:
        pair_list = parse_pair_spec(",".join(f"{i}-{j}" for i, j in pairs), alloc.n_paths)
    pair_list = sorted(pair_list)
    pl = None
    rel_pairs: list = []
    if with_pl94:
        pl = load_allocation(PL94_ALLOCATION)
        spec = with_pl94 if isinstance(with_pl94, str) else ",".join(f"{i}-{j}" for i, j in with_pl94)
        rel_pairs = sorted(parse_pair_spec(spec, alloc.n_paths))
    ident = _identity(alloc, pair_list, settings, rel_pairs, pl)
    return _Sweep(Path(out), alloc, settings, pair_list, rel_pairs, pl, jobs, backend, scheduler, ident,
                  sweep_identity(ident), PathDesigns(alloc, pl))


def _check_budget(sweep: _Sweep, tasks) -> None:
    """Refuse ``tasks`` beyond the cost budget (:func:`~exactdp.sweep.plan.check_budget`)."""
    check_budget(tasks, sweep.settings, sweep.jobs, sweep.alloc.name, len(sweep.pair_list) + len(sweep.rel_pairs),
                 sweep.designs.table_cells())


def _group_twins(tasks, sweep: _Sweep) -> tuple[list, dict]:
    """Pairs of one composition have the same numbers: one of them (the head) is computed,
    the others are its result relabelled (written exactly as they would be computed).
    Returns the heads ``(kind, i, j)`` in task order and, for each head with twins, the
    twins' pairs ``(i, j)``."""
    twins: dict = {}
    heads = []
    key_of = _composition_key_memo(sweep.alloc)
    for k, i, j, *_ in tasks:
        members = twins.setdefault((k, key_of(i, j) if k == "pair" else
                                    composition_key(sweep.designs.rhos(k, i, j))), [])
        if not members:
            heads.append((k, i, j))
        members.append((i, j))
    twins_of = {(k, *ij[0]): ij[1:] for (k, _), ij in twins.items() if len(ij) > 1}
    return heads, twins_of


def _pair_calls(heads, sweep: _Sweep):
    """The arguments of :func:`_task` for each head, built as it is dispatched."""
    sdict = sweep.settings.as_dict()
    return ((k, i, j, sweep.designs.rhos(k, i, j), sdict, os.getpid()) for k, i, j in heads)


def _compute_tasks(sweep: _Sweep, tasks, manifest: dict, timings: dict, stack: contextlib.ExitStack, *,
                   quiet: bool, reused: int, plots: bool):
    """Compute ``tasks`` (one call per composition: :func:`_group_twins`) and write them,
    with the running ``manifest`` first.  Returns the number of calls, the parsed
    summary numbers, the helper process of the assembly (or None) and the time the
    computation started.  The progress bar (:func:`_progress`) names the ``reused`` pairs.

    The files' fsyncs wait on the disk (≈ 35 ms a pair here, ~1 s for the first
    manifest), not on the CPU: the first manifest is written by a thread, the pairs' files
    by a writer thread in group commits (runtime.GroupWriter: one barrier a group, not
    five fsyncs a pair) while this thread goes on; every pair write waits for the manifest
    (a folder never holds pair files without it), and all are durable before the assembly.

    Big sweeps: a helper process (entered in ``stack``) imports the figures' code and
    computes the GDP column while the workers run (started once the first results are
    in, not to slow the workers' own start), and draws the figures during the assembly;
    small ones: the figures' code is imported in a thread of this process."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="exactdp-manifest") as pool:
        started = pool.submit(atomic_write_text, sweep.out / MANIFEST, _dump(manifest))
        heads, twins_of = _group_twins(tasks, sweep)
        calls = _pair_calls(heads, sweep)
        t_compute = time.perf_counter()
        assisted = len(heads) >= _ASSIST_MIN_CALLS

        def start_helper() -> Assistant:
            return stack.enter_context(Assistant(sweep.alloc.total_rho, sweep.settings, plots))

        prefetch = _import_plotting_meanwhile() if plots and tasks and not assisted else None
        tables = PairTables()
        helper = None
        if tasks:
            helper = _collect_results(sweep, calls, twins_of, started, manifest, timings, tables,
                                      bar=_progress(len(tasks), quiet, reused),
                                      start_helper=start_helper if assisted else None)
        started.result()
    if assisted and helper is None:
        helper = start_helper()
    if prefetch is not None:
        prefetch.join()
    return len(heads), tables, helper, t_compute


def _collect_results(sweep: _Sweep, calls, twins_of: dict, started, manifest: dict, timings: dict,
                     tables: PairTables, *, bar, start_helper):
    """Run ``calls`` on the backend and write each result, and its twins relabelled, as it
    arrives (group commits, after the first manifest ``started`` is written), record its
    timings, parse its summary numbers into ``tables``, and checkpoint the manifest every
    2 s.  Returns the helper process (:mod:`exactdp.sweep.assist`) that ``start_helper``
    started after the first results, or None (``start_helper`` None: no helper)."""
    out, helper, n_results = sweep.out, None, 0
    last_flush = time.monotonic()
    writes = WriteQueue(bar.update)
    with GroupWriter(started, identity=sweep.identity) as writer:  # closed once every write is durable
        for kind, first in unordered_results(_task, calls, sweep.backend, sweep.jobs, sweep.scheduler):
            n_results += 1
            if start_helper is not None and helper is None and n_results >= _ASSIST_AFTER:
                helper = start_helper()
            for res in [first] + [relabel(first, i, j) for i, j in twins_of.get((kind, first.i, first.j), ())]:
                files = pair_paths(out, res.i, res.j) if kind == "pair" else release_path(out, res.i, res.j)
                writes.add(writer.submit(files, res))
                timings[f"{kind}:{res.i}-{res.j}"] = {k: round(v, 4) for k, v in res.seconds.items()}
                if kind == "pair":  # the summaries' numbers, parsed now rather than after the last pair
                    tables.add((res.i, res.j), res.curve_csv, res.grid_csv, res.diagnostics)
            writes.reap()
            if time.monotonic() - last_flush > 2.0 and started.done():
                atomic_write_text(out / MANIFEST, _dump({**manifest, "timings": {"pairs": timings}}, compact=True))
                last_flush = time.monotonic()
        writes.reap(wait_all=True)
    bar.close()
    return helper


def _final_manifest(sweep: _Sweep, extra: dict, run: dict, timings: dict, times: tuple) -> dict:
    """The complete sweep's manifest: identity, versions, the assembly's results and the
    checksums of its csv files, the run (``run``) and its timings (``times``: start,
    compute start, assembly start, end, from :func:`time.perf_counter`)."""
    t_start, t_compute, t_assemble, t_end = times
    slowest = sorted(timings.items(), key=lambda kv: -sum(kv[1].values()))[:10]
    return {
        **sweep.ident,
        "status": "complete",
        "versions": _versions(),
        "sweep_identity": sweep.identity,
        "results": extra,
        "checksums": {name: sha256_text((sweep.out / name).read_text(encoding="utf-8"))
                      for name in extra["files"] if name.endswith(".csv")},
        "run": run,
        "timings": {
            "wall_seconds_this_run": round(t_end - t_start, 3),
            "compute_seconds_this_run": round(t_assemble - t_compute, 3),
            "assemble_seconds": round(t_end - t_assemble, 3),
            "pair_cpu_seconds_total": round(sum(sum(v.values()) for v in timings.values()), 3),
            "slowest": [{"task": k, "seconds": v} for k, v in slowest],
            "pairs": timings,
        },
    }


def _stderr_line(text: str) -> None:
    sys.stderr.write(f"exactdp sweep: {text}\n")
    sys.stderr.flush()


def _progress(total: int, quiet: bool, reused: int):
    """A progress bar on a terminal, one line per tenth of the tasks or per minute
    otherwise (:class:`~exactdp.sweep.runtime.ProgressLines`), nothing when ``quiet``."""
    from tqdm import tqdm

    if not quiet and not sys.stderr.isatty():  # no line before the first result: a refusal stays one line
        return ProgressLines(total, "exactdp sweep" + (f" ({reused} reused)" if reused else ""))
    return tqdm(total=total, disable=quiet, file=sys.stderr, unit="pair", desc="exactdp sweep", dynamic_ncols=True)


def _composition_key_memo(alloc):
    """A key of pair ``(i, j)`` equal for two pairs exactly when their
    :func:`~exactdp.sweep.twins.composition_key` are (the multiset of non-zero ρ): the two
    paths' counts of each ``(numerator, denominator)`` added.  A Fraction is equal to
    another exactly when its normalised numerator and denominator are, so the grouping
    is the same, without hashing ~170 Fractions a pair (~0.55 s for the DHC sweep)."""
    counts: dict = {}

    def key_of(i: int, j: int) -> tuple:
        for p in (i, j):
            if p not in counts:
                counts[p] = Counter((r.numerator, r.denominator) for r in alloc.path_rhos(p) if r)
        return tuple(sorted((counts[i] + counts[j]).items()))

    return key_of


def _import_plotting_meanwhile() -> threading.Thread:
    """Import the figures' code (matplotlib: ~1 s of CPU) in a thread of this process while
    the workers compute, instead of after them in the assembly.  Only the import: it
    touches no mpmath context and no output; an import error is left for the assembly
    to raise."""

    def run():
        try:
            import exactdp.sweep.plots  # noqa: F401
        except Exception:  # pragma: no cover - raised again where the plots are drawn
            pass

    thread = threading.Thread(target=run, name="exactdp-import-plots", daemon=True)
    thread.start()
    return thread


def _dump(obj, compact: bool = False) -> str:
    """The manifest's text; ``compact`` (the checkpoints written during the run, replaced by
    the indented final one): one line, by json's C encoder (an indent takes the Python
    encoder: ~8 ms against ~2 ms for 946 pairs' timings, every 2 s of the run)."""
    import json

    return json.dumps(obj, indent=None if compact else 1, sort_keys=False) + "\n"
