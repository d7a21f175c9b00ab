"""``exactdp tune`` end to end on a small allocation: the files, the CLI, kill -9 and
--resume (byte-identical), the worker count, the folder lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction as F
from pathlib import Path

import pytest
from tune_toys import TWO_LEVELS

from exactdp.census.allocations import load_allocation
from exactdp.cli import main
from exactdp.runs.files import SweepDirError, locked_out_dir, read_csv
from exactdp.tune import tune

TOY = TWO_LEVELS
ARGS = ["--delta", "1e-6", "--vary", "level", "--bounds", "1/3:3", "--quiet"]


def data_files(out: Path, profiles: bool = True) -> dict:
    """Every file of a run whose bytes must not depend on interruptions or workers (the
    manifests hold timings; the figures are not data); ``profiles=False``: without the
    two profile sweeps."""
    keep = (".csv", ".toml", ".json")
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.suffix in keep and p.name != "manifest.json" and "plots" not in p.parts
            and (profiles or not p.relative_to(out).parts[0].startswith("profile-"))}


@pytest.fixture(scope="module")
def toy_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("alloc") / "toy.toml"
    path.write_text(TOY)
    return path


@pytest.fixture(scope="module")
def reference(toy_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    assert main(["tune", "--allocation", str(toy_file), "--out", str(out), "--jobs", "1"] + ARGS) == 0
    return out


def test_outputs_of_a_run(reference, toy_file):
    out = reference
    for name in ("tuned.toml", "sigma2.csv", "groups.csv", "trace.csv", "result.json", "manifest.json",
                 "profile-before/summary.csv", "profile-after/summary.csv", "plots/eps_delta.png",
                 "plots/sigma2_change.pdf"):
        assert (out / name).is_file(), name
    tuned = load_allocation(out / "tuned.toml")
    toy = load_allocation(toy_file)
    result = json.loads((out / "result.json").read_text())
    assert result["allocation"]["tuned_content_hash"] == tuned.content_hash()
    assert tuned.provenance["input_content_hash"] == toy.content_hash()
    # the table is the tuned file's own numbers
    rows = read_csv(out / "sigma2.csv")
    assert len(rows) == 4
    for r in rows:
        q = toy.queries.index(r["query"])
        assert F(r["rho_before"]) == toy.base[r["level"]][q] and F(r["rho_after"]) == tuned.base[r["level"]][q]
        assert F(r["rho_before"]) / F(r["rho_after"]) == F(r["variance_multiplier"]) or \
            abs(float(r["variance_multiplier"]) - float(F(r["rho_before"]) / F(r["rho_after"]))) < 1e-15
    # the objective: Σσ² of the full chain, recomputed here
    after = sum(1 / v for row in tuned.base.values() for v in row)
    assert abs(float(result["objective"]["after"]) - float(after)) < 1e-12 * float(after)
    # the tuned profile (a sweep of the tuned file) meets the target at the target δ
    summary = {r["delta_target"]: r for r in read_csv(out / "profile-after" / "summary.csv")}
    assert float(summary["1e-6"]["eps_overall_upper"]) <= float(result["target"]["eps_decimal"])
    # the trace holds every batch, among them the result's design certified on every pair
    trace = read_csv(out / "trace.csv")
    assert len(trace) == len(list((out / "trace").glob("batch-*.json")))
    assert any(r["design"] == result["design"] and r["pairs"] == "3" and r["status"] == "feasible" for r in trace)


def test_cli_json_and_errors(reference, toy_file, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "j"
    assert main(["tune", "--allocation", str(toy_file), "--out", str(out), "--jobs", "1", "--json",
                 "--no-profile", "--no-plots"] + ARGS) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["out"] == str(out) and "max_delta_after" in obj
    # the same settings give the same tuned allocation whether or not profiles are drawn
    assert (out / "tuned.toml").read_bytes() == (reference / "tuned.toml").read_bytes()
    for bad, field in ((["--bounds", "2"], "--bounds"), (["--bounds", "2:3"], "bounds"),
                       (["--delta", "2"], "--delta"), (["--weights", str(tmp_path / "none.toml")], "--weights")):
        try:
            code = main(["tune", "--allocation", str(toy_file), "--out", str(tmp_path / "e"), "--quiet"] + ARGS + bad)
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        assert code == 2
        assert field in capsys.readouterr().err
    # a finished folder is not overwritten without --resume
    assert main(["tune", "--allocation", str(toy_file), "--out", str(out), "--jobs", "1"] + ARGS) == 2
    assert "--resume" in capsys.readouterr().err


def test_folder_lock_refuses_a_second_run(toy_file, tmp_path):
    out = tmp_path / "locked"
    with locked_out_dir(out):
        with pytest.raises(SweepDirError, match="in use"):
            tune(toy_file, "1e-6", out=out, profile=False, plots=False)


def test_jobs_do_not_change_outputs(reference, toy_file, tmp_path):
    out = tmp_path / "j2"
    assert main(["tune", "--allocation", str(toy_file), "--out", str(out), "--jobs", "2", "--no-profile",
                 "--no-plots"] + ARGS) == 0
    assert data_files(out) == data_files(reference, profiles=False)


def test_kill_and_resume_is_byte_identical(reference, toy_file, tmp_path):
    out = tmp_path / "killed"
    light = ["--no-profile", "--no-plots"]
    cmd = [sys.executable, "-m", "exactdp", "tune", "--allocation", str(toy_file), "--out", str(out), "--jobs",
           "1"] + ARGS + light
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if len(list((out / "trace").glob("batch-*.json"))) >= 3 or proc.poll() is not None:
                break
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    n_done = len(list((out / "trace").glob("batch-*.json")))
    total = len(list((reference / "trace").glob("batch-*.json")))
    assert 3 <= n_done < total, "the kill should land during the search"
    assert not (out / "tuned.toml").exists()
    assert main(["tune", "--allocation", str(toy_file), "--out", str(out), "--jobs", "1", "--resume"] + ARGS
                + light) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["run"]["reused"] == n_done and man["run"]["computed"] == total - n_done
    assert data_files(out) == data_files(reference, profiles=False)
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]
