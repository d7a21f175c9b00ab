"""Two sweeps on one output folder cannot interleave: the folder is locked for a whole run
and a second run stops at once with a one-line error (exit status 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from filelock import FileLock

from exactdp.runs.files import LOCK_FILE, SweepDirError
from exactdp.sweep.driver import run_sweep
from exactdp.sweep.pair import SweepSettings

PAIRS = "13-13,6-6,1-43,2-2"
FAST = SweepSettings(deltas=("1e-2", "1e-10"), tradeoff_half=20)
CLI_FAST = ["--only-deltas", "--deltas", "1e-2,1e-10", "--tradeoff-half", "20", "--quiet", "--no-plots"]


def test_cli_fails_fast_on_a_locked_folder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    with FileLock(out / LOCK_FILE, timeout=0):  # another run holds the folder
        t0 = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "exactdp", "sweep", "--pairs", "13-13", "--out", str(out),
                              *CLI_FAST], capture_output=True, text=True, timeout=300)
        took = time.monotonic() - t0
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out" in lines[0] and "in use by another running sweep" in lines[0], run.stderr
    assert took < 60 and sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written


def test_second_sweep_on_a_running_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-m", "exactdp", "sweep", "--pairs", PAIRS,
                              "--jobs", "1", "--out", str(out), *CLI_FAST], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (out / "manifest.json").is_file():  # the first run holds the lock from before this file
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # four pairs take seconds after the manifest is first written: the first run is still going
        assert json.loads((out / "manifest.json").read_text())["status"] == "running"
        with pytest.raises(SweepDirError, match="in use by another running sweep"):
            run_sweep("dhc-persons-2020", out, pairs=PAIRS, settings=FAST, resume=True, plots=False)
        _, err = first.communicate(timeout=300)
    finally:
        first.kill()
    assert first.returncode == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["run"]["computed"] == 4


def test_a_stale_lock_file_does_not_block_a_new_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / LOCK_FILE).write_text("")  # left by a killed run: the OS lock died with it
    rep = run_sweep("dhc-persons-2020", out, pairs="13-13", settings=FAST, plots=False)
    assert rep.computed == 1
    again = run_sweep("dhc-persons-2020", out, pairs="13-13", settings=FAST, resume=True, plots=False)
    assert again.reused == 1 and again.computed == 0
