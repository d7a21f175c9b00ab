"""The ray backend for real: ``exactdp sweep --backend ray`` (a private local ray instance
started for the sweep, tasks through ray's own API, results as they finish) must write
data files byte-identical to the loky run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from exactdp.cli import main

pytest.importorskip("ray")

PAIRS = "13-13,6-6"


def _data(out: Path) -> dict:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.csv"))}


def test_ray_sweep_is_byte_identical_to_loky(tmp_path):
    common = ["sweep", "--pairs", PAIRS, "--jobs", "2", "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "loky")]) == 0
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    run = subprocess.run([sys.executable, "-m", "exactdp", *common, "--backend", "ray", "--out", str(tmp_path / "ray"),
                          "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert '"computed": 2' in run.stdout
    ray_data, loky_data = _data(tmp_path / "ray"), _data(tmp_path / "loky")
    assert len(ray_data) == 2 * 3 + 3  # curve, trade-off, grid per pair; summary, envelope, spread
    assert ray_data == loky_data
    assert '"backend": "ray"' in (tmp_path / "ray" / "manifest.json").read_text()
