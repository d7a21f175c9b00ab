"""One CLI vocabulary (issues 26, 29): one pair syntax, one JSON envelope, exit codes and
messages of the environment.

* ``--pair I J``, ``--pair I-J`` and ``--pairs I-J`` name the same pair in every
  subcommand; ``--pairs A --pairs B`` is A and B; a pair named twice is refused;
* ``--json`` prints ``{"command", "design", "points"}`` (or ``"error"``) everywhere;
* a file or folder the command cannot use is exit 2 naming it; a full disk too.
"""

from __future__ import annotations

import errno
import json

import pytest

from exactdp.cli import main

D13 = ["--only-deltas", "--deltas", "1e-2", "--tradeoff-half", "8", "--no-plots", "--quiet"]


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spelling", [["--pair", "13", "13"], ["--pair", "13-13"], ["--pairs", "13-13"]])
def test_every_pair_spelling_names_the_same_design(spelling, capsys):
    code, out, _ = _run(["delta", "--allocation", "dhc-persons-2020", *spelling, "--eps", "26", "--json"], capsys)
    obj = json.loads(out)
    assert code == 0 and obj["command"] == "delta" and obj["design"]["pairs"] == ["13-13"]
    assert obj["design"]["rho_zcdp"] == "24811/5000" and obj["design"]["mechanisms"] == 160


def test_repeated_pairs_add_up_and_a_pair_named_twice_is_refused(tmp_path, capsys):
    code, out, err = _run(["sweep", "--pairs", "13-13", "--pairs", "1-1", "--out", str(tmp_path / "a"), "--json",
                           *D13], capsys)
    assert code == 0, err
    assert json.loads(out)["design"]["pairs"] == ["13-13", "1-1"]
    written = sorted(p.name for p in (tmp_path / "a" / "pairs").glob("pair_*.json"))
    assert written == ["pair_13_13.json", "pair_1_1.json"]
    code, _, err = _run(["sweep", "--pairs", "13-13", "--pair", "13", "13", "--out", str(tmp_path / "b"), *D13], capsys)
    assert code == 2 and "listed twice" in err and len(err.splitlines()) == 1
    code, _, err = _run(["delta", "--allocation", "dhc-persons-2020", "--pairs", "13-13,1-1", "--eps", "1"], capsys)
    assert code == 2 and "this command takes one" in err


@pytest.mark.parametrize("argv", [
    ["delta", "--sigma2", "2", "--eps", "1"],
    ["epsilon", "--sigma2", "2", "--delta", "1e-5"],
    ["tradeoff", "--sigma2", "2", "--alpha", "1/10"],
    ["calibrate", "--sigma2", "2x3", "--delta", "1e-3", "--width", "1e-3"],
    ["risk", "decision", "--p", "1/2"],
    ["countdep", "bounds", "--r", "1/10", "--n", "10"],
])
def test_one_envelope_on_success_and_on_error(argv, capsys):
    code, out, _ = _run([*argv, "--json"], capsys)
    obj = json.loads(out)
    command = " ".join(argv[:2]) if argv[0] in ("risk", "countdep") else argv[0]
    assert code == 0 and list(obj)[:3] == ["command", "design", "points"] and obj["command"] == command
    assert isinstance(obj["points"], list) and obj["points"]
    code, out, err = _run([*argv, "--budget-seconds", "x", "--json"], capsys)
    obj = json.loads(out)
    assert code == 2 and list(obj) == ["command", "design", "error"] and obj["error"]["field"] == "--budget-seconds"
    assert len(err.splitlines()) == 1


def test_messages_carry_no_python_internals(capsys):
    code, _, err = _run(["delta", "--sigma2", "2", "--eps", "1x"], capsys)
    assert code == 2 and "<class" not in err and "ConversionSyntax" not in err and "--eps='1x'" in err


@pytest.mark.parametrize("make, needle", [
    (lambda d: (d / "f").write_text("x") and d / "f", "is a file, not a folder"),
    (lambda d: (d / "f").write_text("x") and d / "f" / "sub", "a component of the path is a file"),
])
def test_out_that_cannot_be_a_folder_is_named(tmp_path, capsys, make, needle):
    out = make(tmp_path)
    code, _, err = _run(["sweep", "--pairs", "13-13", "--out", str(out), *D13], capsys)
    assert code == 2 and err.startswith("exactdp: error: --out=") and needle in err and len(err.splitlines()) == 1


def test_a_full_disk_is_exit_2_naming_the_out_folder_and_file(tmp_path, capsys, monkeypatch):
    from exactdp.sweep import runtime

    def full(items):
        raise OSError(errno.ENOSPC, "No space left on device", str(items[0][0]["curve"]))

    monkeypatch.setattr(runtime, "write_tasks", full)
    code, _, err = _run(["sweep", "--pairs", "13-13", "--out", str(tmp_path / "o"), "--jobs", "1", *D13], capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "--out=" in err and "pair_13_13.csv" in err and "disk full" in err


@pytest.mark.parametrize("data, needle", [
    ('[[mechanism]]\nsigma2 = "2"\n'.encode("utf-16"), "UTF-16"),
    (b"\x00\x01\x02binary", "binary"),
    ('[[mechanism]]\nsigma2 = "2\xe9"\n'.encode("latin-1"), "not UTF-8"),
])
def test_files_that_are_not_utf8_text_are_named(tmp_path, capsys, data, needle):
    for name in ("m.toml", "a.toml"):
        (tmp_path / name).write_bytes(data)
    for argv in (["delta", "--mechanisms", str(tmp_path / "m.toml"), "--eps", "1"],
                 ["delta", "--allocation", str(tmp_path / "a.toml"), "--pair", "1", "1", "--eps", "1"]):
        code, _, err = _run(argv, capsys)
        assert code == 2 and needle in err and str(tmp_path) in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("text, needle", [
    ("sigma2,sigma2\n2,3\n", "twice"),
    ('sigma2,count\n"2,3\n', "not valid CSV"),
    ("sigma2,count\n2\n", "has 1 fields but the header has 2"),
    ("a = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
    ("mechanism = [1, 2]\n", "must be a table"),
])
def test_malformed_mechanism_files_are_refused(tmp_path, capsys, text, needle):
    path = tmp_path / ("m.toml" if "=" in text else "m.csv")
    path.write_text(text)
    code, _, err = _run(["delta", "--mechanisms", str(path), "--eps", "1"], capsys)
    assert code == 2 and needle in err and len(err.splitlines()) == 1, err
