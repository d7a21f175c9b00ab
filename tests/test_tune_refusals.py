"""Refusals of ``exactdp tune`` and of the sweep's planning (issue 34): every hostile
input below was an exit 1 ("this is a bug"), a crash of the process pool or a run that
grew for minutes; each is now one line and exit 2 (naming the field, the envelope or the
budget) before any long work.  Also tune's ``--json`` success and failure envelope."""

from __future__ import annotations

import json
import time

import pytest
from tune_toys import ONE_QUERY

from exactdp.cli import main

TUNE = ["--delta", "1e-6", "--bounds", "1/3:3", "--quiet", "--no-profile", "--no-plots"]
SWEEP = ["--quiet", "--no-plots", "--only-deltas", "--deltas", "1e-10", "--tradeoff-half", "20"]


def _alloc(name: str, queries: list, base: dict, paths: list | None = None) -> str:
    text = (f'format = "exactdp-allocation/1"\nname = "{name}"\ndescription = "test"\n'
            f'levels = {json.dumps(list(base))}\nqueries = {json.dumps(queries)}\n[provenance]\nsource = "test"\n'
            '[base]\n')
    text += "".join(f"{lev} = {json.dumps(row)}\n" for lev, row in base.items())
    if paths:
        text += "[paths]\n" + "".join(f'"{k}" = {json.dumps(p)}\n' for k, p in enumerate(paths, start=1))
    return text


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    out = {"one": ONE_QUERY,
           "rho50": _alloc("rho50", ["x", "y"], {"A": ["1e50", "1/8"]}),
           "paths": _alloc("many-paths", ["x"], {"A": ["1/8"]}, [["1"]] * 20_000),
           "budgets": _alloc("many-budgets", [f"q{k}" for k in range(40_000)],
                             {"A": [f"1/{k + 1000}" for k in range(40_000)]}),
           "common": _alloc("many-budgets-common", [f"q{k}" for k in range(40_000)],
                            {"A": [f"{k + 1}/1000000000" for k in range(40_000)]})}
    paths = {}
    for name, text in out.items():
        paths[name] = d / f"{name}.toml"
        paths[name].write_text(text)
    paths["w0"] = d / "w0.toml"
    paths["w0"].write_text('[levels]\nA = "0"\nB = 0\n')
    return paths


def _one_line(capsys, *words) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err


@pytest.mark.parametrize("extra, words", [
    (["--eps", "0"], ["--delta", "no design with variance multipliers in [1/3, 3] meets the target"]),
    (["--eps", "1e308"], ["--eps", "[0, 1e50]"]),
    (["--jobs", "100000"], ["--jobs", "CPU"]),
    (["--budget-seconds", "0.001"], ["time budget", "--budget-seconds"]),
], ids=["eps-0", "eps-1e308", "jobs", "budget"])
def test_tune_refusals_are_one_line_exit_2(files, tmp_path, capsys, extra, words):
    capsys.readouterr()
    assert main(["tune", "--allocation", str(files["one"]), "--out", str(tmp_path / "o"), "--jobs", "1"] + TUNE
                + extra) == 2
    _one_line(capsys, *words)


def test_tune_refuses_all_zero_weights_a_huge_rho_and_too_many_paths(files, tmp_path, capsys):
    capsys.readouterr()
    assert main(["tune", "--allocation", str(files["one"]), "--weights", str(files["w0"]), "--out",
                 str(tmp_path / "w"), "--jobs", "1"] + TUNE) == 2
    _one_line(capsys, "--weights", "positive weight")
    assert main(["tune", "--allocation", str(files["rho50"]), "--out", str(tmp_path / "r"), "--jobs", "1"]
                + TUNE) == 2
    _one_line(capsys, "rho", "1e50")
    t0 = time.process_time()
    assert main(["tune", "--allocation", str(files["paths"]), "--out", str(tmp_path / "p"), "--jobs", "1"]
                + TUNE) == 2
    _one_line(capsys, "memory budget", "--budget-memory")
    assert time.process_time() - t0 < 30
    assert not (tmp_path / "p").exists()


def test_sweep_planning_refuses_before_memory_grows(files, tmp_path, capsys):
    capsys.readouterr()
    for spec in ([], ["--pairs", "1-2"]):  # every pair, or one pair: the spread matrix is n_paths²
        t0 = time.process_time()
        assert main(["sweep", "--allocation", str(files["paths"]), "--out", str(tmp_path / "p")] + SWEEP + spec) == 2
        _one_line(capsys, "memory budget", "--budget-memory")
        assert time.process_time() - t0 < 30 and not (tmp_path / "p").exists()
    assert main(["sweep", "--allocation", str(files["budgets"]), "--out", str(tmp_path / "b")] + SWEEP) == 2
    _one_line(capsys, "at most 1000 digits")
    # a common denominator, but 16,032 distinct numerators: the variances' lattice (ran for minutes in one pair)
    assert main(["sweep", "--allocation", str(files["common"]), "--out", str(tmp_path / "c")] + SWEEP) == 2
    _one_line(capsys, "variances 1/rho", "at most 4000 digits")


def test_a_worker_refusal_reaches_the_driver_as_an_input_error(files, tmp_path, capsys):
    capsys.readouterr()
    assert main(["sweep", "--allocation", str(files["rho50"]), "--out", str(tmp_path / "r"), "--jobs", "2"]
                + SWEEP) == 2
    _one_line(capsys, "pair 1-1", "1e50")


def test_tune_json_is_the_one_envelope(files, tmp_path, capsys):
    capsys.readouterr()
    assert main(["tune", "--allocation", str(files["one"]), "--out", str(tmp_path / "j"), "--jobs", "1", "--json"]
                + TUNE) == 0
    obj = json.loads(capsys.readouterr().out)
    assert list(obj)[:3] == ["command", "design", "points"] and obj["command"] == "tune"
    (point,) = obj["points"]
    assert point["delta"] == obj["max_delta_after"]["upper"] and float(point["delta"]) <= 1e-6
    assert obj["design"]["allocation"] == "toy-two-levels" and obj["out"] == str(tmp_path / "j")
    assert main(["tune", "--allocation", str(files["one"]), "--out", str(tmp_path / "k"), "--jobs", "1", "--json",
                 "--eps", "1e308"] + TUNE) == 2
    obj = json.loads(capsys.readouterr().out)
    assert list(obj) == ["command", "design", "error"] and obj["error"]["field"] == "--eps"


def test_a_signal_inside_a_compiled_kernel_is_the_signal_not_a_bug():
    from exactdp.cli import Terminated, _signal_inside

    def wrapped(inner):
        try:
            try:
                raise inner
            except KeyboardInterrupt as exc:
                raise SystemError("CPUDispatcher(...) returned a result with an exception set") from exc
        except SystemError as exc:
            return exc

    assert isinstance(_signal_inside(wrapped(Terminated())), Terminated)
    assert type(_signal_inside(wrapped(KeyboardInterrupt()))) is KeyboardInterrupt
    assert _signal_inside(ValueError("x")) is None
