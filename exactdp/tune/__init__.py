"""Tuning an allocation with exact, certified accounting in the loop (``exactdp tune``).

* :mod:`exactdp.tune.spine` — the spine rule that rebuilds every path of a tuned table;
* :mod:`exactdp.tune.problem` — groups (level, query, cell), weights, bounds, objectives
  and the continuous proxy (water-filling);
* :mod:`exactdp.tune.grid` — proposals snapped to exact designs on a small lattice;
* :mod:`exactdp.tune.evaluate` — the one exact evaluator (certified δ(ε) of a pair) and
  its parallel batches;
* :mod:`exactdp.tune.trace` — the run folder: identity, lock, resumable trace;
* :mod:`exactdp.tune.search` — the optimiser (certified boundary searches);
* :mod:`exactdp.tune.outputs`, :mod:`exactdp.tune.plots` — the files and figures;
* :mod:`exactdp.tune.run` — :func:`tune`, :class:`TuneResult`.
"""

from __future__ import annotations

from exactdp.tune.evaluate import DeltaBound, Target, delta_bound
from exactdp.tune.problem import Problem, read_weights
from exactdp.tune.run import TuneResult, tune

__all__ = ["tune", "TuneResult", "Target", "DeltaBound", "Problem", "read_weights", "delta_bound"]
