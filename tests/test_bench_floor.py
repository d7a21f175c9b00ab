"""bench/bench_floor.py's instruments: timing wrappers around the kernels and the stages leave
a pair's results unchanged, count the kernel calls, and are undone completely."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import exactdp.sweep.pair as pair
from exactdp.accounting.lattice_route import LatticeAccountant

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_floor", ROOT / "bench" / "bench_floor.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wrappers_time_kernels_and_stages_without_changing_results():
    bf = _bench()
    heads, n_pairs = bf.compositions("dhc-persons-2020", "13-13,1-43")
    assert n_pairs == 2 and len(heads) == 2
    settings = pair.SweepSettings(deltas=("1e-6", "1e-10"), tradeoff_half=20, envelope_points=11)
    i, j, rhos = heads[0]
    plain = pair.compute_pair(i, j, rhos, settings)  # builds the kernels it calls
    before_pair = dict(vars(pair))
    before_acc = dict(vars(LatticeAccountant))
    meter = bf.Meter()
    undo = bf.install_kernel_wrappers(meter) + bf.install_stage_wrappers(meter)
    try:
        assert undo
        timed = pair.compute_pair(i, j, rhos, settings)
    finally:
        bf.restore(undo)
    assert (timed.curve_csv, timed.tradeoff_csv, timed.grid_csv) == (plain.curve_csv, plain.tradeoff_csv,
                                                                      plain.grid_csv)
    assert sum(meter.kernel_n.values()) > 0 and all(v >= 0 for v in meter.kernel_s.values())
    assert {"delta", "epsilon", "tradeoff", "format"} <= set(meter.stage_cpu)
    assert sum(meter.stage_kernel.values()) <= sum(meter.kernel_s.values()) + 1e-9
    assert vars(pair) == before_pair and dict(vars(LatticeAccountant)) == before_acc  # undone
