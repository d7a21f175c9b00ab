"""The dask backend for real: a two-worker LocalCluster on the loopback interface runs a
small sweep through joblib's dask backend; the data files must be byte-identical to the
loky run."""

from __future__ import annotations

from pathlib import Path

import pytest

from exactdp.sweep.driver import run_sweep
from exactdp.sweep.pair import SweepSettings

distributed = pytest.importorskip("distributed")

PAIRS = "13-13,1-43,20-30"
SETTINGS = SweepSettings(deltas=("1e-3", "1e-10"), tradeoff_half=20)


def _data(out: Path) -> dict:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.csv"))}


def test_dask_cluster_matches_loky(tmp_path):
    loky_out = tmp_path / "loky"
    run_sweep("dhc-persons-2020", loky_out, pairs=PAIRS, settings=SETTINGS, jobs=2, backend="loky", plots=False)
    dask_out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        rep = run_sweep("dhc-persons-2020", dask_out, pairs=PAIRS, settings=SETTINGS, jobs=2, backend="dask",
                        scheduler=cluster.scheduler_address, plots=False)
    assert rep.computed == 3
    assert rep.manifest["run"]["backend"] == "dask"
    assert _data(dask_out) == _data(loky_out)
    assert len(_data(dask_out)) == 3 * 3 + 3  # curve, trade-off, grid per pair; summary, envelope, spread
