"""The optimiser: certified boundary searches along proxy shapes, refined by exact gradients.

A *family* maps a rational parameter x to an exact design (or None when the bounds cannot
hold); larger x means less budget, i.e. the feasible side.  Two families are used:

* :func:`shape_family` — the water-filling shape of :meth:`Problem.shape` at budget
  ``ref/x``, snapped to the grid (:class:`~exactdp.tune.grid.Grid`): coarse, it moves the
  budget between groups;
* :func:`scale_family` — one exact design with every ρ divided by x (a uniform variance
  scale; the integer lattice of every pair is unchanged, so x may be any rational): fine.

:meth:`Tuner.settle` brackets the largest feasible budget of a family on a few *active*
pairs — ``x_hi`` certified feasible (every active pair's certified upper bound ≤ δ), ``x_lo``
certified infeasible or not certified — by :func:`~exactdp.numerics.search.secant_narrow`,
then evaluates *all* pairs at ``x_hi``; a violator joins the active pairs and the bracket
is searched again.  :meth:`Tuner.run`: the input's profile; the uniform scale (objective
``uniform``) or the proxy shape then its fine scale (``variance``); then up to ``rounds``
reshapes with exact finite-difference gradients of log δ of the worst pair (the proxy's
costs ρ_g replaced by ∂ log δ/∂ρ_g · ρ_g).  Every decision compares certified bounds with
the target; estimates only propose trial points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from exactdp.calibration.calibrate import simplest_between
from exactdp.numerics.search import SearchError, expand, secant_narrow
from exactdp.tune.evaluate import CompositionKey
from exactdp.tune.screen import precise_margin, screened_results
from exactdp.tune.trace import design_id

__all__ = ["Tuner", "Settled", "shape_family", "scale_family", "Unreachable"]


class Unreachable(ArithmeticError):
    """No design of a family meets the target within the bounds."""


def _log(x: Fraction) -> float:
    x = Fraction(x)
    return math.log(int(x.numerator)) - math.log(int(x.denominator)) if x > 0 else -1e300  # any size of int


def shape_family(problem, grid, costs=None, ref=None):
    """x ↦ the grid design of the proxy shape at budget ``ref/x`` (costs: ρ_g by default)."""
    _, a = problem.group_sums()
    c = list(costs) if costs is not None else a
    if ref is None:
        ref = sum(c)

    def design(x: Fraction):
        return grid.snap(problem, problem.shape(float(ref / x), c))

    return design


def scale_family(problem, grid, shape):
    """x ↦ ``shape`` with every ρ divided by x (None outside the bounds)."""

    def design(x: Fraction):
        d = {lev: tuple(v / x for v in row) for lev, row in shape.items()}
        return None if grid.violations(problem, d) else d

    return design


@dataclass
class Settled:
    """A design certified on every pair, and how it was found."""

    design: dict
    stage: str
    x: Fraction
    x_infeasible: Fraction | None
    results: dict
    objective: Fraction
    worst: tuple = field(default=())


class Tuner:
    """The search state of one run (see the module notes).

    Parameters
    ----------
    problem : Problem
    target : Target
    grid : Grid
    trace : Trace
    progress : callable, optional
        ``progress(message)`` at each stage.
    active : int
        Pairs kept active besides the violators found (the worst at the last full check).
    rounds : int
        Gradient reshapes after the proxy (variance objective).
    screen : float, optional
        The full checks' screening tolerance (:mod:`exactdp.tune.screen`; the trace's
        evaluator is then called with ``rel_tol=``), or None: every pair at the run's
        tolerance ``rel_tol``.
    """

    def __init__(self, problem, target, grid, trace, *, progress=None, active: int = 4, rounds: int = 2,
                 width_coarse=Fraction(1, 10**4), width_fine=Fraction(1, 10**6), chunk: int = 96,
                 flat: float = 2e-3, screen: float | None = None, rel_tol: float = 1e-10):
        self.problem, self.target, self.grid, self.trace = problem, target, grid, trace
        self.screen, self.margin = screen, precise_margin(rel_tol)
        self.progress = progress or (lambda msg: None)
        self.n_active, self.rounds, self.chunk, self.flat = active, rounds, chunk, flat
        self.width_coarse, self.width_fine = Fraction(width_coarse), Fraction(width_fine)
        self.pairs = problem.alloc.pairs()
        self.active: list = []
        self._paths: dict = {}
        self._memo: dict = {}

    # -- evaluation ---------------------------------------------------------------------
    def rhos_of(self, design):
        """``rhos(i, j)``: the ρ of pair (i, j) of ``design``; ``rhos.key(i, j)`` is
        :func:`~exactdp.tune.evaluate.composition_key` of them, from each path's multiset
        counted once (over the ranks of the design's distinct ρ, sorted once)."""
        did = design_id(design, self.problem.alloc.levels)
        if did not in self._paths:
            if len(self._paths) > 64:
                self._paths.clear()
            self._paths[did] = (self.problem.allocation(design), {}, {}, [])
        alloc, memo, counts, ranked = self._paths[did]

        def rhos(i, j):
            for p in (i, j):
                if p not in memo:
                    memo[p] = alloc.path_rhos(p)
            return memo[i] + memo[j]

        def path_counts(p):
            hit = counts.get(p)
            if hit is None:
                if not ranked:  # every path's distinct non-zero ρ, ascending, and their ranks
                    seen = {}
                    for k in range(1, alloc.n_paths + 1):
                        for r in alloc.path_rhos(k):
                            if r:
                                seen.setdefault((r.numerator, r.denominator), Fraction(r))
                    values = sorted(seen.values())
                    ranked.append(values)
                    ranked.append({(r.numerator, r.denominator): k for k, r in enumerate(values)})
                rank = ranked[1]
                hit = {}
                for r in (memo[p] if p in memo else alloc.path_rhos(p)):
                    if r:
                        k = rank[r.numerator, r.denominator]
                        hit[k] = hit.get(k, 0) + 1
                counts[p] = hit
            return hit

        def key(i, j):
            both = dict(path_counts(i))
            for k, m in path_counts(j).items():
                both[k] = both.get(k, 0) + m
            values = ranked[0]
            return CompositionKey((values[k], both[k]) for k in sorted(both))

        rhos.key = key
        return rhos

    def check(self, design, pairs, purpose, note, screen: float | None = None):
        """``(status, results)``: 1 certified feasible on ``pairs``, −1 certified
        infeasible on one of them, 0 undecided (``screen``: at that tolerance)."""
        key = (design_id(design, self.problem.alloc.levels), tuple(pairs), screen)
        if key not in self._memo:
            if screen is None:
                res = self.trace.evaluate(design, pairs, self.rhos_of(design), purpose, note)
            else:
                res = self.trace.evaluate(design, pairs, self.rhos_of(design), purpose, note, screen=screen)
            d = self.target.delta
            status = -1 if any(b.lower > d for b in res.values()) else \
                (1 if all(b.upper <= d for b in res.values()) else 0)
            self._memo[key] = (status, res)
        return self._memo[key]

    def verify(self, design, purpose, note=None, screen: bool = True) -> dict:
        """Certified δ of every pair, in batches of ``chunk`` pairs taken in order of their
        number of mechanisms (the few-mechanism pairs, the engine's slowest, share batches
        and run side by side instead of trailing one batch each).  With ``screen``: every
        pair at the screen's tolerance (purpose ``<purpose>-screen``), then at the run's
        only those a decision could depend on (:func:`~exactdp.tune.screen.screened_results`);
        ``screen=False``: every pair at the run's tolerance."""
        rhos = self.rhos_of(design)

        def batches(pairs, screen=None) -> dict:
            order = sorted(pairs, key=lambda p: (len(rhos(*p)), p))
            out = {}
            for k in range(0, len(order), self.chunk):
                chunk = order[k:k + self.chunk]
                out.update(self.check(design, chunk, purpose if screen is None else f"{purpose}-screen", note,
                                      screen)[1])
            return out

        if self.screen is None or not screen:
            return batches(self.pairs)
        return self.screened(batches(self.pairs, self.screen), batches)

    def screened(self, coarse: dict, precise) -> dict:
        """:func:`~exactdp.tune.screen.screened_results` with this run's target, active
        count and tolerance."""
        return screened_results(coarse, precise, self.target.delta, self.n_active, self.margin)

    def _update_active(self, results):
        d = self.target.delta
        bad = sorted(p for p, b in results.items() if b.upper > d)
        top = sorted(results, key=lambda p: (-results[p].upper, p))[:self.n_active]
        self.active = sorted(set(self.active) | set(bad) | set(top))
        return bad

    # -- one family -----------------------------------------------------------------------
    def _status(self, family, stage):
        def status(x):
            design = family(x)
            if design is None:
                return -1
            return self.check(design, self.active, stage, {"x": str(x)})[0]

        def estimate(x):
            design = family(x)
            if design is None:
                return 1.0
            res = self.check(design, self.active, stage, {"x": str(x)})[1]
            return _log(max(b.estimate for b in res.values())) - _log(self.target.delta)

        return status, estimate

    def boundary(self, family, stage, width, hi=None, lo=None):
        """``(lo, hi)``: ``hi`` certified feasible on the active pairs, ``lo`` certified
        infeasible or undecided (None when the bounds leave no larger budget infeasible).

        Walks (:func:`~exactdp.numerics.search.expand`, steps doubling from 1/64 of the
        start) up to a feasible ``hi`` when none is known, down to an infeasible ``lo``
        when none is known, then :func:`~exactdp.numerics.search.secant_narrow`."""
        status, estimate = self._status(family, stage)
        if hi is None or status(hi) != 1:
            start = Fraction(1) if lo is None else lo + lo / 64
            try:
                prev, hi = expand(lambda x: status(x) == 1, start, start / 64, max_steps=40)
            except SearchError:
                raise Unreachable(f"{stage}: no design of this family meets the target within the bounds "
                                      f"(walked from x = {float(start):.6g} up to 2^40/64 times less budget)") from None
            lo = prev if prev is not None else lo
        if lo is None or lo >= hi or status(lo) == 1:
            prev, x = expand(lambda x: x <= 0 or status(x) == -1, hi - hi / 64, -hi / 64, max_steps=60)
            if prev is not None and status(prev) == 1:
                hi = prev  # the last feasible point of the walk
            if x <= 0:
                return None, hi
            lo = x
        return secant_narrow(status, estimate, simplest_between, lo, hi, width * hi)

    def settle(self, family, stage, width, hi=None, lo=None, verify: bool = True) -> Settled:
        """The boundary of a family, certified on every pair (violators join the active pairs);
        with ``verify=False`` on the active pairs only (a coarse stage, refined after)."""
        while True:
            lo, hi = self.boundary(family, stage, width, hi, lo)
            design = family(hi)
            if not verify:
                self.progress(f"{stage}: x in ({_fmt(lo)}, {_fmt(hi)}] on {len(self.active)} active pairs, "
                              f"objective {float(self.objective(design)):.9g}")
                return Settled(design, stage, hi, lo, {}, self.objective(design))
            results = self.verify(design, f"{stage}-verify", {"x": str(hi)})
            bad = self._update_active(results)
            worst = max(results, key=lambda p: (results[p].upper, p))
            self.progress(f"{stage}: x in ({_fmt(lo)}, {_fmt(hi)}], objective {float(self.objective(design)):.9g}, "
                          f"max delta {float(results[worst].upper):.6g} (pair {worst[0]}-{worst[1]}), "
                          f"{len(bad)} violator(s)")
            if not bad:
                return Settled(design, stage, hi, lo, results, self.objective(design), worst)
            lo, hi = hi, None

    def objective(self, design) -> Fraction:
        if self.problem.objective == "uniform":
            return max(self.problem.multipliers(design))
        return self.problem.objective_value(design)

    # -- gradients ----------------------------------------------------------------------------
    def gradient_pair(self, settled: Settled):
        """The pair whose gradient stands for the constraint: among the pairs within 1e-3
        (relative) of the largest certified δ, the one with the most mechanisms (the
        engine's sieve is fastest on many fine mechanisms; ties: the smaller pair)."""
        res = settled.results
        top = max(b.upper for b in res.values())
        near = [p for p, b in res.items() if b.upper * 1001 >= top * 1000]
        rhos = self.rhos_of(settled.design)
        return min(near, key=lambda p: (-len(rhos(*p)), p))

    def gradient_costs(self, settled: Settled, h: float = 0.02) -> list[float]:
        """Costs ``∂ log δ/∂ρ_g · ρ_g`` of every group at a settled design (forward
        differences on :meth:`gradient_pair`, steps of ``h`` in the group's budget,
        widened until the grid moves)."""
        prob, pair = self.problem, self.gradient_pair(settled)
        base = prob.input_design()
        r = []
        for _, ks in prob.groups:
            r.append(sum(prob.rho(settled.design, k) for k in ks) / sum(prob.rho(base, k) for k in ks))
        _, a = prob.group_sums()
        costs = []
        for g, (name, ks) in enumerate(prob.groups):
            step, cost = h, None
            while cost is None and step <= 0.25:
                rr = [float(v) for v in r]
                rr[g] *= 1 + step
                ends = [self.grid.snap(prob, rr), settled.design]
                if ends[0] is None or ends[0] == ends[1]:
                    step *= 4
                    continue
                lds, rhos = [], []
                for d in ends:
                    res = self.check(d, [pair], "gradient", {"group": name})[1]
                    lds.append(_log(res[pair].estimate))
                    rhos.append(float(sum(prob.rho(d, k) for k in ks)))
                if rhos[0] != rhos[1]:
                    cost = (lds[0] - lds[1]) / (rhos[0] - rhos[1]) * a[g]
                else:
                    step *= 4
            costs.append(cost)
        known = [c / a[g] for g, c in enumerate(costs) if c is not None and c > 0 and a[g] > 0]
        kappa = sum(known) / len(known) if known else 1.0
        return [c if c is not None and c > 0 else kappa * a[g] for g, c in enumerate(costs)]

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> tuple[dict, list[Settled]]:
        """Returns the input's results and the settled designs (the best one is the answer)."""
        prob = self.problem
        start = prob.input_design()
        # the input unscreened: an allocation as published spreads its budget evenly, its
        # pairs' δ agree to ~1e-10 (DHC: 810 of 946 within 1e-9 of the 4th largest), closer
        # than a screen resolves, so the ranking of the active pairs needs every precise one
        inputs = self.verify(start, "input", screen=False)
        self._update_active(inputs)
        worst = max(inputs, key=lambda p: (inputs[p].upper, p))
        self.progress(f"input: max delta {float(inputs[worst].upper):.6g} (pair {worst[0]}-{worst[1]}) "
                      f"at eps {self.target.eps_decimal(12)}; target delta {float(self.target.delta):.6g}")
        if prob.no_worse and inputs[worst].upper > self.target.delta:
            from exactdp.numerics.exact import InputError

            raise InputError("delta", str(self.target.delta),
                             f"the input allocation does not meet the target (pair {worst[0]}-{worst[1]} has "
                             f"delta up to {float(inputs[worst].upper):.6g}); --no-worse cannot hold")
        hi0 = Fraction(1) if inputs[worst].upper <= self.target.delta else None
        if prob.objective == "uniform":
            return inputs, [self.settle(scale_family(prob, self.grid, start), "uniform", self.width_fine, hi=hi0)]
        settled = []
        coarse = self.settle(shape_family(prob, self.grid), "proxy", self.width_coarse, verify=False)
        settled.append(self.settle(scale_family(prob, self.grid, coarse.design), "proxy-scale",
                                   self.width_fine, hi=Fraction(1)))
        for k in range(1, self.rounds + 1):
            best = min(settled, key=lambda s: (s.objective, settled.index(s)))
            costs = self.gradient_costs(best)
            _, a = prob.group_sums()
            ratios = [c / x for c, x in zip(costs, a) if x > 0]
            if max(ratios) <= min(ratios) * (1 + self.flat):
                self.progress(f"gradient-{k}: d log delta / d rho equal across groups within {self.flat:g} "
                              f"(the proxy's shape stands)")
                break
            r = [float(sum(prob.rho(best.design, kk) for kk in ks) / sum(prob.rho(start, kk) for kk in ks))
                 for _, ks in prob.groups]
            ref = Fraction(sum(c * x for c, x in zip(costs, r)))
            fam = shape_family(prob, self.grid, costs, ref)
            if fam(Fraction(1)) is None:
                break
            try:
                step = self.settle(fam, f"gradient-{k}", self.width_coarse, verify=False)
                step = self.settle(scale_family(prob, self.grid, step.design), f"gradient-{k}-scale",
                                   self.width_fine, hi=Fraction(1))
            except ArithmeticError as exc:  # the reshaped family has no feasible design: keep the best
                self.progress(f"gradient-{k}: {exc}; stopping the reshapes")
                break
            settled.append(step)
            if step.objective >= best.objective * (1 - Fraction(1, 10**7)):
                break
        return inputs, settled


def _fmt(x) -> str:
    return "-" if x is None else f"{float(x):.10g}"
