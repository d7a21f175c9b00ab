"""``tune``: the Python face of ``exactdp tune`` (one run, one output folder)."""

from __future__ import annotations

import functools
import os
import platform
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from exactdp.census.allocations import load_allocation
from exactdp.numerics.bracket import Bracket
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, fraction_str, to_fraction
from exactdp.runs.files import atomic_write_text, read_csv
from exactdp.tune.cost import PROFILE_DELTAS, check_tune_budget, profile_settings
from exactdp.tune.evaluate import BatchEvaluator, DeltaBound, Target, composition_key, delta_bound
from exactdp.tune.grid import default_grid
from exactdp.tune.outputs import cell_sigma2, dec, write_result, write_tables, write_trace_csv
from exactdp.tune.problem import DEFAULT_BOUNDS, Problem, read_weights
from exactdp.tune.screen import SCREEN_TOL, screen_tol_for
from exactdp.tune.search import Tuner, Unreachable
from exactdp.tune.trace import FORMAT, Trace, design_id, open_tune_dir, run_identity, write_manifest

__all__ = ["tune", "TuneResult", "PROFILE_DELTAS"]



@dataclass(frozen=True)
class TuneResult(Bracket):
    """A finished tune run.

    Attributes
    ----------
    out : Path
        The run folder.
    allocation : Allocation
        The tuned allocation (also ``out/tuned.toml``).
    target : Target
    objective_before, objective_after : Fraction
        The objective of the input and of the result (Σ w σ², or the uniform multiplier).
    delta_before, delta_after : DeltaBound
        The largest certified δ(ε) over every neighbour pair, input and result.
    pair_before, pair_after : tuple of int
        Their pairs.
    certificate : Enclosure
        Arb enclosure of δ(ε) of the result's worst pair (``upper`` ≤ the target δ).
    result : dict
        ``out/result.json``.

    A :class:`~exactdp.numerics.bracket.Bracket`: ``value`` is ``delta_after.upper`` (the
    certified guarantee of the tuned allocation), ``lower``/``upper``/``estimate`` and
    ``error_bound`` (the half-width) those of ``delta_after``.
    """

    _NAME = "δ"

    out: Path
    allocation: object
    target: Target
    objective_before: Fraction
    objective_after: Fraction
    delta_before: DeltaBound
    delta_after: DeltaBound
    pair_before: tuple
    pair_after: tuple
    certificate: object
    result: dict

    @property
    def value(self) -> Fraction:
        return self.delta_after.upper

    @property
    def upper(self) -> Fraction:
        return self.delta_after.upper

    @property
    def lower(self) -> Fraction:
        return self.delta_after.lower

    @property
    def estimate(self) -> Fraction:
        return self.delta_after.estimate

    @property
    def error_bound(self) -> Fraction:
        # a bound on |estimate − δ|: the larger of the two sides (upper − estimate alone
        # is not, when the estimate sits nearer the upper end)
        return self.delta_after.error_bound

    @property
    def objective_change(self) -> Fraction:
        """``after/before − 1`` (negative: less noise)."""
        return self.objective_after / self.objective_before - 1


def _weights(weights, alloc):
    if weights is None:
        return None, "equal (1 for every cell)"
    if isinstance(weights, dict):
        return {k: to_fraction(v, "weights") for k, v in weights.items()}, "given in Python"
    import hashlib

    table = read_weights(weights, alloc)  # first: it refuses a special file or one beyond the input size limit
    text = Path(weights).read_bytes()
    return table, f"{Path(weights).name} (sha256 {hashlib.sha256(text).hexdigest()[:16]})"


def tune(allocation, delta, eps=None, *, vary: str = "level", objective: str = "variance", weights=None,
         bounds=DEFAULT_BOUNDS, no_worse: bool = False, out="exactdp-tune", backend: str = "loky", jobs: int = 1,
         scheduler=None, resume: bool = False, refine: int = 1, rel_tol: float = 1e-10, profile: bool = True,
         plots: bool = True, progress=None, evaluator=delta_bound, grid=None,
         screen: float | None = SCREEN_TOL) -> TuneResult:
    """Tune an allocation's noise variances with exact, certified accounting in the loop.

    Parameters
    ----------
    allocation : str, path or Allocation
    delta : exact rational in (0, 1)
        Target δ: every neighbour pair must have a certified δ(ε) ≤ ``delta``.
    eps : exact rational, optional
        Target ε (default: the Bureau's ε_BS(δ) at the input allocation's ρ, exactly).
    vary : {"level", "query", "cell"}
        One variance multiplier per level, per query, or per (level, query) cell.
    objective : {"variance", "uniform"}
        Minimise the total weighted variance Σ w σ², or find the largest uniform reduction.
    weights : path or dict, optional
        Cell weights (:func:`~exactdp.tune.problem.read_weights`); default all 1.
    bounds : (m_lo, m_hi)
        Bounds of every variance multiplier (default 1/1000, 1000).
    no_worse : bool
        No variance of any cell on any path may exceed the input's.
    out : path
        Output folder (locked while the run lasts; new or empty unless ``resume``).
    backend, jobs, scheduler
        Where the exact evaluations run (:mod:`exactdp.runs.backends`).
    resume : bool
        Finish a killed run in ``out`` (same settings).
    refine : int
        Grid refinement (:func:`~exactdp.tune.grid.default_grid`).
    grid : Grid, optional
        An explicit grid of designs instead (e.g. a coarse one for a small allocation).
    rel_tol : float
        Certified relative accuracy of every tail.
    screen : float, optional
        Tolerance of the full checks' screen (:mod:`exactdp.tune.screen`: every pair
        bracketed at it first, at ``rel_tol`` only where a decision could depend on it;
        the same decisions, about half the cost); None (or not 1000× looser than
        ``rel_tol``): every pair at ``rel_tol``.
    profile, plots : bool
        Also the certified profiles of input and result (two sweeps) and the figures.
    progress : callable, optional
        ``progress(message)`` per stage.
    evaluator : callable
        The exact evaluator ``fn(rhos, target, rel_tol) -> DeltaBound`` (module level).

    Returns
    -------
    TuneResult

    Raises
    ------
    InputError
        Bad input, or ``no_worse`` with an input that misses the target.
    UncertifiedError
        The Arb certificate of the result's worst pair does not confirm the target.

    Notes
    -----
    Method: water-filling proxy shapes and exact-gradient reshapes, each pushed to the
    boundary by certified secant brackets on a few active pairs, then every pair
    evaluated exactly (:mod:`exactdp.tune.search`); designs on a small-lattice grid
    (:mod:`exactdp.tune.grid`).  Error bound: the result's every pair has a certified
    δ(ε) ≤ δ (engine bracket, ≤ 1e-9 relative) and its worst pair an Arb enclosure below
    δ.  The search is a heuristic: the result is certified, its optimality is not.
    Reference: docs/tune.rst; Su, Su & Wang (exact accounting of the 2020 Census).
    """
    t0 = time.perf_counter()
    alloc = load_allocation(allocation)
    wmap, wtext = _weights(weights, alloc)
    problem = Problem(alloc, vary, objective, wmap, bounds, no_worse)
    target = Target(delta, eps, None) if eps is not None else Target(delta, None, alloc.total_rho)
    grid = grid if grid is not None else default_grid(problem, refine)
    from exactdp.runs.backends import check_backend
    from exactdp.sweep.plan import check_jobs

    check_backend(backend, scheduler)
    jobs = check_jobs(jobs, backend)  # local workers beyond this machine's CPUs refused, as for a sweep
    check_tune_budget(problem, jobs if jobs > 0 else (os.cpu_count() or 1), profile)
    screen = screen_tol_for(screen, rel_tol)
    identity = _identity(problem, target, grid, wtext, rel_tol, profile, screen)
    say = progress or (lambda msg: None)
    with open_tune_dir(out, identity, resume, say) as out, \
            BatchEvaluator(evaluator, backend=backend, jobs=jobs, scheduler=scheduler, rel_tol=rel_tol) as batch:
        for trusted in (True, False):
            trace = Trace(out, batch, target, alloc.levels, run_identity(identity), say, trust_stored=trusted)
            tuner = Tuner(problem, target, grid, trace, progress=say, screen=screen, rel_tol=rel_tol)
            try:
                inputs, settled = tuner.run()
            except Unreachable as exc:
                lo, hi = (fraction_str(b) for b in problem.bounds)
                raise InputError("delta", fraction_str(target.delta),
                                 f"no design with variance multipliers in [{lo}, {hi}] meets the target ({exc}); "
                                 "a larger --delta or --eps, or wider --bounds") from None
            fresh = None
            if trace.reused:  # numbers read from disk steered the search: every claim is recomputed here
                fresh = functools.partial(_fresh_results, tuner, batch)
                say(f"--resume: {trace.reused} stored batches reused; the input and the result are evaluated "
                    "again on every pair, from scratch")
            try:
                if fresh is not None and fresh(problem.input_design(), screen=False) != inputs:
                    raise _TraceAltered("the input's numbers")
                t_search = time.perf_counter()
                best, tuned, cert, result = _conclude(out, tuner, trace, inputs, settled, wtext, say, fresh)
                break
            except _TraceAltered as exc:
                say(f"--resume: {exc} differ from the stored trace's (a trace file was altered with its checksum); "
                    "searching again with every stored batch ignored")
        t_profile = time.perf_counter()
        if profile:
            _profiles(out, alloc, tuned, target, jobs, backend, scheduler, rel_tol, plots)
        if plots:
            _sigma_plot(out, problem, best.design)
        write_manifest(out, {
            **identity, "status": "complete", "versions": _versions(),
            "run": {"batches": len(trace.records), "computed": trace.computed, "reused": trace.reused,
                    "recomputed_damaged": trace.damaged, "jobs": jobs, "backend": backend,
                    "cpu_count": os.cpu_count()},
            "timings": {"search_seconds": round(t_search - t0, 2), "profile_seconds":
                        round(time.perf_counter() - t_profile, 2),
                        "wall_seconds": round(time.perf_counter() - t0, 2)}})
        from exactdp.report.tune import write_tune_report

        write_tune_report(out)  # report.html: read from the files just written
    before = max(inputs, key=lambda p: (inputs[p].upper, p))
    return TuneResult(out, tuned, target, tuner.objective(problem.input_design()), best.objective, inputs[before],
                      best.results[best.worst], before, best.worst, cert, result)


class _TraceAltered(Exception):
    """Numbers computed again differ from those the search read from the trace."""


def _fresh_results(tuner, batch, design, screen: bool = True) -> dict:
    """Certified δ of ``design`` on every pair, computed now (no trace, no cache), screened
    as the run's full checks are (:meth:`~exactdp.tune.search.Tuner.screened`; the input's:
    ``screen=False``)."""
    rhos = tuner.rhos_of(design)
    keys = {p: composition_key(rhos(*p)) for p in tuner.pairs}

    def at(pairs, tol=None) -> dict:
        todo = list(dict.fromkeys(keys[p] for p in pairs))
        comps = [tuple(r for r, m in key for _ in range(m)) for key in todo]
        res = dict(zip(todo, batch(comps, tuner.target) if tol is None else batch(comps, tuner.target, rel_tol=tol)))
        return {p: res[keys[p]] for p in pairs}

    if tuner.screen is None or not screen:
        return at(tuner.pairs)
    return tuner.screened(at(tuner.pairs, tuner.screen), at)


def _conclude(out, tuner, trace, inputs, settled, wtext, say, fresh=None):
    """The best settled design certified on every pair — by numbers computed in this run
    (``fresh``: computed again now when the search reused stored batches; numbers that
    differ from the stored ones raise :class:`_TraceAltered`) — and its allocation, Arb
    certificate, tables and result files."""
    problem, target, grid = tuner.problem, tuner.target, tuner.grid
    refused = []
    for best in sorted(settled, key=lambda s: (s.objective, settled.index(s))):
        if fresh is not None and fresh(best.design) != best.results:
            raise _TraceAltered(f"the numbers of the {best.stage} design")
        tuned = _tuned_allocation(problem, best.design, target, grid, wtext)
        try:
            cert = _certify(tuned, best, target)
            break
        except (UncertifiedError, ValueError, OverflowError) as exc:  # the certifier refuses this lattice
            refused.append(f"{best.stage}: {exc}")
            say(f"{best.stage}: the Arb certificate refused pair {best.worst[0]}-{best.worst[1]} ({exc}); "
                f"trying the next design")
    else:
        raise UncertifiedError("no design certified on every pair could be enclosed by the Arb certificate: "
                               + "; ".join(refused))
    say(f"result: objective {dec(best.objective, 10)} (input {dec(tuner.objective(problem.input_design()), 10)})"
        f"; max delta {dec(best.results[best.worst].upper, 10)} (pair {best.worst[0]}-{best.worst[1]}), "
        f"Arb enclosure upper {dec(cert.upper_exact, 10)}")
    atomic_write_text(out / "tuned.toml", tuned.to_toml())
    write_tables(out, problem, problem.input_design(), best.design)
    trace.prune()
    write_trace_csv(out, trace, problem)
    result = _result(problem, target, tuner, inputs, settled, best, tuned, cert, grid)
    result["certificate"]["refused_designs"] = refused
    write_result(out, result)
    return best, tuned, cert, result


def _identity(problem, target, grid, wtext, rel_tol, profile, screen=None) -> dict:
    """What a resumed run must share with the run it finishes."""
    alloc = problem.alloc
    return {"format": FORMAT, "allocation": {"name": alloc.name, "content_hash": alloc.content_hash()},
            "target": target.as_dict(), "vary": problem.vary, "objective": problem.objective, "weights": wtext,
            "cell_weights": [fraction_str(w) for w in problem.cell_weights],
            "bounds": [fraction_str(b) for b in problem.bounds], "no_worse": bool(problem.no_worse),
            "grid": grid.as_text(), "rel_tol": repr(float(rel_tol)), "profile": bool(profile),
            "screen_tol": None if screen is None else repr(float(screen))}


def _tuned_allocation(problem, design, target, grid, wtext):
    from exactdp._version import __version__

    a = problem.alloc
    eps_text = (fraction_str(target.eps) if target.eps is not None
                else f"eps_BS(delta) at rho = {fraction_str(target.bureau_rho)}")
    prov = {"source": f"exactdp tune {__version__}: {a.name} (content {a.content_hash()[:16]}) with variances "
                      f"multiplied per {problem.vary}",
            "input": a.name, "input_content_hash": a.content_hash(),
            "target": f"certified delta(eps) <= {fraction_str(target.delta)} at eps = {eps_text} for every "
                      f"neighbour pair",
            "objective": problem.objective + ("" if problem.objective == "uniform" else f" (weights: {wtext})"),
            "constraints": f"variance multipliers in [{fraction_str(problem.bounds[0])}, "
                           f"{fraction_str(problem.bounds[1])}]" + ("; no variance above the input's on any path"
                                                                     if problem.no_worse else ""),
            "grid": grid.as_text(), "paths": "rebuilt by the input's spine rule (exactdp.tune.spine)",
            "exactdp_version": __version__}
    desc = (f"{a.name} tuned by exactdp tune ({problem.objective} objective, one variance multiplier per "
            f"{problem.vary}) to a certified delta(eps) <= {fraction_str(target.delta)} on every neighbour pair.")
    return problem.allocation(design, name=f"{a.name}-tuned", description=desc, provenance=prov)


def _certify(tuned, best, target):
    """Arb enclosure of δ(ε) of the worst pair (refused unless its upper end meets δ)."""
    from exactdp.certify import bureau_epsilon, certify_delta
    from exactdp.mechanisms import Composition

    eps = target.eps if target.eps is not None else bureau_epsilon(target.bureau_rho, target.delta)
    enc = certify_delta(Composition.from_rhos(tuned.pair_rhos(*best.worst)), eps)
    if enc.upper_exact > target.delta:
        raise UncertifiedError(f"the Arb enclosure of pair {best.worst[0]}-{best.worst[1]} reaches "
                               f"{float(enc.upper_exact):.6g} > delta = {float(target.delta):.6g}")
    return enc


def _bound_json(b: DeltaBound, pair) -> dict:
    return {"pair": f"{pair[0]}-{pair[1]}", "lower": dec(b.lower), "upper": dec(b.upper), "estimate": dec(b.estimate),
            "upper_exact": fraction_str(b.upper)}


def _result(problem, target, tuner, inputs, settled, best, tuned, cert, grid) -> dict:
    before = max(inputs, key=lambda p: (inputs[p].upper, p))
    ob, oa = tuner.objective(problem.input_design()), best.objective
    mults = problem.multipliers(best.design)
    groups = []
    for name, ks in problem.groups:
        ms = [mults[k] for k in ks]
        groups.append({"group": name, "multiplier_min": dec(min(ms)), "multiplier_max": dec(max(ms)),
                       "multiplier_exact": fraction_str(ms[0]) if len(set(ms)) == 1 else None})
    return {
        "allocation": {"input": problem.alloc.name, "input_content_hash": problem.alloc.content_hash(),
                       "tuned": tuned.name, "tuned_content_hash": tuned.content_hash(),
                       "total_rho_before": fraction_str(problem.alloc.total_rho),
                       "total_rho_after": fraction_str(tuned.total_rho), "pairs": len(inputs)},
        "target": {**target.as_dict(), "eps_decimal": target.eps_decimal()},
        "problem": {"vary": problem.vary, "objective": problem.objective, "no_worse": problem.no_worse,
                    "bounds": [fraction_str(b) for b in problem.bounds], "grid": grid.as_text(),
                    "groups": len(problem.groups)},
        "objective": {"before": dec(ob), "after": dec(oa), "change_percent": dec((oa / ob - 1) * 100, 12),
                      "after_exact": fraction_str(oa),
                      "meaning": "variance multiplier of every cell (uniform reduction = 1 - it)"
                      if problem.objective == "uniform" else "sum over cells of weight * sigma^2 (full chain)"},
        "max_delta_before": _bound_json(inputs[before], before),
        "max_delta_after": _bound_json(best.results[best.worst], best.worst),
        "certificate": {"pair": f"{best.worst[0]}-{best.worst[1]}", "lower": dec(cert.lower_exact),
                        "upper": dec(cert.upper_exact), "upper_exact": fraction_str(cert.upper_exact),
                        "method": cert.method},
        "groups": groups,
        "stages": [{"stage": s.stage, "x": fraction_str(s.x),
                    "x_infeasible": fraction_str(s.x_infeasible) if s.x_infeasible is not None else None,
                    "objective": dec(s.objective), "max_delta_upper": dec(s.results[s.worst].upper)}
                   for s in settled],
        "chosen_stage": best.stage,
        "design": design_id(best.design, problem.alloc.levels),
    }


def _profiles(out, alloc, tuned, target, jobs, backend, scheduler, rel_tol, plots):
    """Certified profiles (sweeps) of the input and the result, and the ε–δ figure."""
    from exactdp.report import write_sweep_report
    from exactdp.sweep.driver import run_sweep
    from exactdp.sweep.pair import canonical_delta

    settings = profile_settings(canonical_delta(target.delta), rel_tol)
    curves = {}
    for label, a, folder in (("input", alloc, "profile-before"), ("tuned", tuned, "profile-after")):
        run_sweep(a, out / folder, settings=settings, jobs=jobs, backend=backend, scheduler=scheduler, resume=True,
                  plots=False, finish=write_sweep_report)
        rows = read_csv(out / folder / "summary.csv")
        curves[f"{label} (max over pairs)"] = ([float(Fraction(r["delta_target"])) for r in rows],
                                               [float(r["eps_overall_upper"]) for r in rows])
    if plots:
        from exactdp.tune.plots import plot_eps_delta

        plot_eps_delta(curves, float(target.eps_decimal(17)), float(target.delta), out / "plots")


def _sigma_plot(out, problem, design):
    from exactdp.tune.plots import plot_sigma2_change

    b = {k: float(v) for k, v in cell_sigma2(problem, problem.input_design()).items()}
    a = {k: float(v) for k, v in cell_sigma2(problem, design).items()}
    plot_sigma2_change(problem.alloc.levels, problem.alloc.queries, b, a, out / "plots")


def _versions() -> dict:
    import mpmath
    import numpy

    from exactdp._version import __version__

    return {"exactdp": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "mpmath": mpmath.__version__}
