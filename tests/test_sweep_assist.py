"""The assembly's helper process (exactdp.sweep.assist) writes the serial code's bytes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from exactdp.census.allocations import load_allocation
from exactdp.sweep import driver
from exactdp.sweep.assist import Assistant
from exactdp.sweep.pair import SweepSettings
from exactdp.sweep.summary import assemble

PAIRS = "13-13,2-2,1-43,20-30"
FAST = SweepSettings(deltas=("1e-2", "1e-10"), tradeoff_half=20)


def _files(out: Path) -> dict:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", ".exactdp-sweep.lock", "report.html")}


def test_assembly_with_the_helper_writes_the_serial_bytes(tmp_path, monkeypatch):
    serial = tmp_path / "serial"
    rep = driver.run_sweep("dhc-persons-2020", serial, pairs=PAIRS, settings=FAST, jobs=1, plots=True)
    assert rep.computed == 4
    helped = tmp_path / "helped"
    shutil.copytree(serial / "pairs", helped / "pairs")
    alloc = load_allocation("dhc-persons-2020")
    pairs = sorted((int(a), int(b)) for a, b in (p.split("-") for p in PAIRS.split(",")))
    with Assistant(alloc.total_rho, FAST, plots=True) as helper:
        info = assemble(helped, alloc, pairs, FAST, plots=True, assistant=helper)
    got, want = _files(helped), _files(serial)
    assert any(k.endswith(".png") for k in want) and any(k.endswith(".pdf") for k in want)
    assert got.keys() == want.keys()
    assert [k for k in want if got[k] != want[k]] == []
    assert info == rep.manifest["results"]
    # the driver starts the helper for big sweeps (here: from one computation on)
    monkeypatch.setattr(driver, "_ASSIST_MIN_CALLS", 1)
    monkeypatch.setattr(driver, "_ASSIST_AFTER", 1)  # started inside the result loop
    one = tmp_path / "one"
    rep1 = driver.run_sweep("dhc-persons-2020", one, pairs="2-2", settings=FAST, jobs=1, plots=False)
    assert (one / "envelope.csv").read_bytes().count(b"\n") == FAST.envelope_points + 1
    assert rep1.computed == 1


def test_helper_column_only_for_its_grid_and_errors_propagate(tmp_path):
    from exactdp.sweep.pair import grid_alphas
    from exactdp.sweep.summary import gdp_column

    alloc = load_allocation("dhc-persons-2020")
    texts = list(grid_alphas(FAST)[0])
    with Assistant(alloc.total_rho, FAST, plots=False) as helper:
        assert helper.gdp_column(texts) == gdp_column(texts, alloc.total_rho)
        assert helper.gdp_column(texts[:-1]) is None
        helper.draw("plot_proxy_sensitivity", [1e-2, 1e-3], [0.5], tmp_path, "1-1")  # lengths differ
        with pytest.raises(ValueError):
            helper.figures()
    with pytest.raises(RuntimeError):
        with Assistant(alloc.total_rho, FAST, plots=False):
            raise RuntimeError("the block failed: the process is killed, not waited for")
    assert assemble  # the serial entry point is the one the helper mirrors


def test_a_dead_helper_leaves_the_work_to_this_process(tmp_path):
    import os
    import signal

    alloc = load_allocation("dhc-persons-2020")
    with Assistant(alloc.total_rho, FAST, plots=False) as helper:
        helper._gdp.result()
        for pid in list(helper._pool._processes):
            os.kill(pid, signal.SIGKILL)
        helper.draw("plot_proxy_sensitivity", [1e-2, 1e-3], [0.5, 0.25], tmp_path, "1-1")
        assert helper.figures() == [[tmp_path / "proxy_sensitivity.png", tmp_path / "proxy_sensitivity.pdf"]]
    assert (tmp_path / "proxy_sensitivity.png").stat().st_size > 0
