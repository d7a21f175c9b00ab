"""A sweep under faults (issue 26): kill -9 mid-sweep, damaged files, a damaged manifest,
SIGTERM and Ctrl-C.

The reference is an uninterrupted run of the same small sweep (six pairs, two target δ,
41 trade-off vertices): every data file of an interrupted and resumed or repaired run is
byte-identical to it.  The checksums a pair's json file carries are checked with
``hashlib`` and ``json`` (not with the code that wrote them).  Each run is a separate
``python -m exactdp`` process in its own session, so that the signals and the survival of
its workers can be observed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

PAIRS = "1-1,1-2,2-2,13-13,6-6,6-10"  # 6-10 takes seconds: a kill lands mid-sweep
FAST = ["--only-deltas", "--deltas", "1e-2,1e-10", "--tradeoff-half", "20", "--no-plots", "--jobs", "2"]
DATA = ("summary.csv", "envelope.csv", "spread_matrix.csv")


def _as_from_a_terminal():
    """In the child before exec: SIGINT and SIGTERM at their defaults and unblocked, as a
    shell starts a command (the test process may have inherited or set them otherwise:
    a disposition SIG_IGN and a blocked mask both survive exec, and Ctrl-C would not arrive)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _sweep(out, *extra, **kw):
    return subprocess.Popen([sys.executable, "-m", "exactdp", "sweep", "--pairs", PAIRS, "--out", str(out), *FAST,
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_from_a_terminal, **kw)


def _finish(proc, timeout=600):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _data_files(folder: Path) -> dict:
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in (folder / "pairs").iterdir()}
    files.update({name: (folder / name).read_bytes() for name in DATA})
    return files


def _wait_for(predicate, timeout=300, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return False


def _session_processes(sid: int) -> list:
    """Processes still in the session ``sid`` (the sweep's driver, workers, trackers)."""
    out = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def _workers(pid: int) -> list:
    """The loky worker processes of the driver ``pid``."""
    return subprocess.run(["pgrep", "-P", str(pid), "-f", "popen_loky"], capture_output=True, text=True).stdout.split()


def _reap(sid: int) -> None:
    for pid in _session_processes(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults") / "reference"
    code, _, err = _finish(_sweep(out, "--quiet"))
    assert code == 0 and err == "", err
    return out


def _finished_pairs(out: Path) -> int:
    return len(list((out / "pairs").glob("pair_*_*.json"))) if (out / "pairs").is_dir() else 0


def test_pair_files_carry_checksums_a_reader_can_verify(reference):
    for info_path in (reference / "pairs").glob("pair_*_*.json"):
        raw = info_path.read_text(encoding="utf-8")
        info = json.loads(raw)
        stem = info_path.stem
        kinds = (("curve", f"{stem}.csv"), ("tradeoff", f"{stem}_tradeoff.csv"), ("grid", f"{stem}_grid.csv"))
        for kind, name in kinds:
            digest = hashlib.sha256((reference / "pairs" / name).read_bytes()).hexdigest()
            assert info["checksums"][kind] == f"sha256:{digest}"
        own = info.pop("self_sha256")
        body = json.dumps(info, indent=1, sort_keys=True) + "\n"
        assert own == "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()
        assert info["sweep_identity"].startswith("sha256:")
    manifest = json.loads((reference / "manifest.json").read_text())
    for name, digest in manifest["checksums"].items():
        assert digest == "sha256:" + hashlib.sha256((reference / name).read_bytes()).hexdigest()


def test_kill_9_mid_sweep_leaves_no_worker_and_resumes_byte_identical(reference, tmp_path):
    out = tmp_path / "killed"
    proc = _sweep(out, "--quiet")
    try:
        assert _wait_for(lambda: _finished_pairs(out) >= 1), "no pair finished"
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        at_kill = _finished_pairs(out)
        assert at_kill < 6, "the sweep finished before the kill: the test proves nothing"
        assert _wait_for(lambda: not _session_processes(proc.pid), timeout=20, step=0.2), (
            f"processes outlived the killed driver: {_session_processes(proc.pid)}")
    finally:
        _reap(proc.pid)
    code, _, err = _finish(_sweep(out, "--resume", "--quiet"))
    assert code == 0 and err == "", err
    assert _data_files(out) == _data_files(reference)


def _damage(folder: Path) -> dict:
    """One digit of a finished pair's ε–δ row, a truncated trade-off file, a ``nan`` in a
    grid file, a changed number in a pair's json file: what each damaged file is."""
    pairs = folder / "pairs"
    curve = pairs / "pair_1_2.csv"
    lines = curve.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[4] = cells[4][:-1] + ("7" if cells[4][-1] != "7" else "3")
    lines[1] = ",".join(cells)
    curve.write_text("".join(lines))
    trade = pairs / "pair_2_2_tradeoff.csv"
    trade.write_bytes(trade.read_bytes()[: trade.stat().st_size // 2])
    grid = pairs / "pair_13_13_grid.csv"
    text = grid.read_text().splitlines(keepends=True)
    row = text[3].split(",")
    row[1] = "nan"
    text[3] = ",".join(row)
    grid.write_text("".join(text))
    info = pairs / "pair_6_6.json"
    obj = json.loads(info.read_text())
    obj["worst_delta_rel_error"] = 0.0
    info.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
    return {"1-2": "pair_1_2.csv", "2-2": "pair_2_2_tradeoff.csv", "13-13": "pair_13_13_grid.csv",
            "6-6": "pair_6_6.json"}


def test_damaged_pair_files_are_recomputed_and_said(reference, tmp_path):
    out = tmp_path / "damaged"
    shutil.copytree(reference, out)
    damaged = _damage(out)
    code, _, err = _finish(_sweep(out, "--resume", "--quiet"))
    assert code == 0, err
    lines = err.splitlines()
    for pair, name in damaged.items():
        assert any(f"pair {pair} failed verification" in ln and name in ln for ln in lines), (pair, err)
    assert len(lines) == len(damaged), err
    assert _data_files(out) == _data_files(reference)


def test_damaged_manifest_is_rebuilt_from_the_verified_pairs(reference, tmp_path):
    out = tmp_path / "manifest"
    shutil.copytree(reference, out)
    text = (out / "manifest.json").read_text()
    (out / "manifest.json").write_text(text[: len(text) // 3])
    code, _, err = _finish(_sweep(out, "--quiet"))
    assert code == 2 and len(err.splitlines()) == 1 and "--resume" in err, err
    code, _, err = _finish(_sweep(out, "--resume", "--quiet"))
    assert code == 0, err
    assert err.splitlines() == [f"exactdp sweep: {out / 'manifest.json'} is damaged (JSONDecodeError); "
                                "rebuilding it from the verified pair files"]
    assert json.loads((out / "manifest.json").read_text())["run"]["computed"] == 0
    assert _data_files(out) == _data_files(reference)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_sigterm_and_ctrl_c_end_with_one_line_and_release_the_lock(tmp_path, sig, code, word):
    out = tmp_path / "signal"
    proc = _sweep(out, "--quiet")
    try:
        assert _wait_for(lambda: _finished_pairs(out) >= 1), "no pair finished"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # Ctrl-C: the terminal signals the whole foreground group
        else:
            os.kill(proc.pid, sig)
        rc, stdout, err = _finish(proc, timeout=120)
        assert rc == code, err
        assert err.splitlines() == [f"exactdp: error: {word} ({'SIGTERM' if code == 143 else 'Ctrl-C'}); finished "
                                    "pairs are kept, --resume finishes the sweep"], err
        assert stdout == ""
        assert _wait_for(lambda: not _session_processes(proc.pid), timeout=20, step=0.2), _session_processes(proc.pid)
    finally:
        _reap(proc.pid)
    with FileLock(out / ".exactdp-sweep.lock", timeout=0):  # released
        pass


def test_ctrl_c_while_the_workers_start_prints_no_worker_traceback(tmp_path):
    out = tmp_path / "early"
    proc = _sweep(out, "--quiet")
    try:
        assert _wait_for(lambda: len(_workers(proc.pid)) == 2, timeout=120, step=0.01), "no workers started"
        time.sleep(0.05)  # past the instant of the last start (SIGINT ignored there, runtime.workers_ignore_sigint)
        os.killpg(proc.pid, signal.SIGINT)  # the workers are starting: importing joblib, exactdp
        rc, _, err = _finish(proc, timeout=120)
    finally:
        _reap(proc.pid)
    assert rc == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert len(err.splitlines()) == 1, err


def test_a_symlinked_pair_file_is_never_followed(reference, tmp_path):
    out = tmp_path / "linked"
    shutil.copytree(reference, out)
    link = out / "pairs" / "pair_1_1.csv"
    link.unlink()
    link.symlink_to(out / "pairs" / "pair_2_2.csv")  # another pair's intact file
    code, _, err = _finish(_sweep(out, "--resume", "--quiet"))
    assert code == 0, err
    assert err.splitlines() == ["exactdp sweep: --resume: pair 1-1 failed verification (pair_1_1.csv is a symbolic "
                                "link); computing it again"], err
    assert not link.is_symlink() and _data_files(out) == _data_files(reference)


def test_a_sweep_never_writes_into_a_tune_folder(tmp_path):
    out = tmp_path / "tune"
    (out / "trace").mkdir(parents=True)
    manifest = json.dumps({"format": "exactdp-tune/2", "status": "running"})
    (out / "manifest.json").write_text(manifest)
    for extra in ((), ("--resume",)):
        code, _, err = _finish(_sweep(out, "--quiet", *extra))
        assert code == 2 and len(err.splitlines()) == 1 and "holds the output of exactdp tune" in err, err
    assert (out / "manifest.json").read_text() == manifest and sorted(p.name for p in out.iterdir()) == [
        "manifest.json", "trace"]
