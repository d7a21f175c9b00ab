"""``exactdp tune`` under faults (issue 34), as the sweep's (``test_sweep_faults.py``):
killed at seeded random points under SIGKILL, SIGTERM and SIGINT, then ``--resume``
gives the uninterrupted run's bytes; no worker or resource tracker outlives a killed
driver.  A tiny problem (the one-query toy, three pairs, two workers) keeps it cheap.
Each run is a separate ``python -m exactdp`` process in its own session."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_sweep_faults import _as_from_a_terminal, _reap, _session_processes, _wait_for, _workers
from tune_toys import ONE_QUERY

ARGS = ["--jobs", "2", "--delta", "1e-6", "--vary", "level", "--bounds", "1/3:3", "--quiet", "--no-profile",
        "--no-plots"]
DATA = ("tuned.toml", "result.json", "trace.csv", "sigma2.csv", "groups.csv")
SEED = 34


def _tune(toy: Path, out: Path, *extra):
    return subprocess.Popen([sys.executable, "-m", "exactdp", "tune", "--allocation", str(toy), "--out", str(out),
                             *ARGS, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)


def _files(out: Path) -> dict:
    files = {name: (out / name).read_bytes() for name in DATA}
    files.update({p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "trace").rglob("*.json"))})
    return files


def _batches(out: Path) -> int:
    return len(list((out / "trace").glob("batch-*.json"))) if (out / "trace").is_dir() else 0


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("one") / "one.toml"
    path.write_text(ONE_QUERY)
    return path


@pytest.fixture(scope="module")
def reference(toy, tmp_path_factory):
    out = tmp_path_factory.mktemp("tref") / "run"
    proc = _tune(toy, out)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out


_RNG = random.Random(SEED)
_KILLS = [(signal.SIGKILL, None), (signal.SIGTERM, 143), (signal.SIGINT, 130)]


@pytest.mark.parametrize("sig, code, frac", [(s, c, _RNG.uniform(0.15, 0.85)) for s, c in _KILLS],
                         ids=[s.name for s, _ in _KILLS])
def test_killed_at_a_random_point_resumes_byte_identical_and_leaves_no_process(toy, reference, tmp_path, sig,
                                                                               code, frac):
    total = _batches(reference)
    at = max(2, int(frac * total))
    out = tmp_path / "killed"
    proc = _tune(toy, out)
    try:
        assert _wait_for(lambda: _batches(out) >= at or proc.poll() is not None, timeout=300, step=0.002)
        if sig == signal.SIGKILL:
            assert _workers(proc.pid), "the kill should find the workers running"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # Ctrl-C: the terminal signals the whole foreground group
        else:
            os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
        assert proc.poll() is not None
        n_done = _batches(out)
        assert n_done < total, "the run finished before the kill: the test proves nothing"
        if code is not None:
            assert proc.returncode == code, err
            assert len(err.strip().splitlines()) == 1 and "--resume" in err, err
        # no worker, no resource tracker outlives its driver (their idle timeout was 5 minutes)
        assert _wait_for(lambda: not _session_processes(proc.pid), timeout=20, step=0.2), (
            f"processes outlived the killed driver: {_session_processes(proc.pid)}")
    finally:
        _reap(proc.pid)
    again = _tune(toy, out, "--resume", "--jobs", "1")
    _, err = again.communicate(timeout=600)  # (one worker: the same bytes, no pool to start)
    assert again.returncode == 0, err
    assert _files(out) == _files(reference)
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "complete" and man["run"]["reused"] + man["run"]["computed"] == total
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]
