"""The all-pairs sweep: per-pair exact profiles, checkpoints, summary, envelope, plots.

* :mod:`exactdp.sweep.driver` — :func:`run_sweep` (joblib/dask/ray, resume, manifest);
* :mod:`exactdp.sweep.pair` — one pair's computation and its settings;
* :mod:`exactdp.sweep.io` — the task files: checksums, group commits (the generic run files,
  backends and number text are :mod:`exactdp.runs`);
* :mod:`exactdp.sweep.summary` — summary, spread matrix, release table;
* :mod:`exactdp.sweep.envelope` — the lower envelope of the trade-off curves;
* :mod:`exactdp.sweep.plots` — figures.

The sweep imports nothing of :mod:`exactdp.report` (a layer above): ``report.html`` is written
by the caller, ``run_sweep(..., finish=exactdp.report.write_sweep_report)`` (``exactdp sweep``).
"""

from __future__ import annotations

from exactdp.sweep.driver import SweepReport, run_sweep
from exactdp.sweep.pair import DEFAULT_DELTAS, SweepSettings

__all__ = ["run_sweep", "SweepReport", "SweepSettings", "DEFAULT_DELTAS"]
