"""Every bad input of every subcommand: exit 2, one line on stderr naming the field (and,
under --json, the JSON envelope with an "error" object on stdout); uncertifiable results:
exit 3; a bug: exit 1; never a traceback.  All cases fail before any computation, so the file runs in seconds."""

import json

import pytest

from exactdp.cli import main


def _run(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # found by argparse (it raises after printing its line)
        return exc.code


@pytest.fixture
def bad_files(tmp_path):
    files = {
        "float.toml": '[[mechanism]]\nsigma2 = 2.5\n',
        "count.toml": '[[mechanism]]\nsigma2 = "2"\ncount = 0\n',
        "shift.toml": '[[mechanism]]\nsigma2 = "2"\nshift = "1e300"\n',
        "broken.toml": '[mechanism\n',
        "empty.toml": 'title = "x"\n',
        "unknown.toml": '[[mechanism]]\nsigma2 = "2"\nsigmaa = "3"\n',
        "huge.toml": '[[mechanism]]\nsigma2 = "1e99999"\n',
        "count.csv": 'sigma2,count\n2,abc\n',
        "nosigma.csv": 'shift,count\n1,2\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


D = ["delta", "--sigma2", "2", "--eps", "1"]
CASES = [
    # delta / epsilon / tradeoff: designs
    (["delta", "--sigma2", "1e-400", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e400", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e99999", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x0", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x-3", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x1e30", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x1.5", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "abc", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "-2", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2", "--pair", "1", "2", "--eps", "1"], "--pair"),
    (["delta", "--allocation", "dhc-persons-2020", "--eps", "1"], "--pair"),
    (["delta", "--allocation", "dhc-persons-2020", "--pair", "0", "2", "--eps", "1"], "--pair"),
    (["delta", "--allocation", "dhc-persons-2020", "--pair", "1", "x", "--eps", "1"], "--pair"),
    (["delta", "--allocation", "nowhere", "--pair", "1", "2", "--eps", "1"], "allocation"),
    (["delta", "--eps", "1"], "design"),
    # queries
    (["delta", "--sigma2", "2", "--eps", "1e19x"], "--eps"),
    (["delta", "--sigma2", "2", "--eps", "nan"], "--eps"),
    (["delta", "--sigma2", "2", "--eps", "1e60"], "--eps"),
    (["delta", "--sigma2", "2", "--eps", "-1e60"], "--eps"),
    (["delta", "--sigma2", "2", "--eps", "1e50000"], "--eps"),
    (["delta", "--sigma2", "2", "--eps", "1e2000000"], "--eps"),
    (["epsilon", "--sigma2", "2", "--delta", "1e-2000000"], "--delta"),
    (["epsilon", "--sigma2", "2", "--delta", "0"], "--delta"),
    (["epsilon", "--sigma2", "2", "--delta", "1"], "--delta"),
    (["epsilon", "--sigma2", "2", "--delta", "-1e-5"], "--delta"),
    (["tradeoff", "--sigma2", "2", "--alpha", "1.5"], "--alpha"),
    (["tradeoff", "--sigma2", "2", "--alpha", "-0.1"], "--alpha"),
    (D + ["--rel-tol", "0"], "--rel-tol"),
    (D + ["--rel-tol", "-1"], "--rel-tol"),
    (D + ["--rel-tol", "inf"], "--rel-tol"),
    (D + ["--rel-tol", "0.1abc"], "--rel-tol"),
    (D + ["--rel-tol", "1e-20"], "--rel-tol"),
    (D + ["--nope"], "--nope"),
    # mechanism files
    (["delta", "--mechanisms", "{d}/float.toml", "--eps", "1"], "sigma2"),
    (["delta", "--mechanisms", "{d}/count.toml", "--eps", "1"], "count"),
    (["delta", "--mechanisms", "{d}/shift.toml", "--eps", "1"], "shift"),
    (["delta", "--mechanisms", "{d}/broken.toml", "--eps", "1"], "--mechanisms"),
    (["delta", "--mechanisms", "{d}/empty.toml", "--eps", "1"], "--mechanisms"),
    (["delta", "--mechanisms", "{d}/unknown.toml", "--eps", "1"], "sigmaa"),
    (["delta", "--mechanisms", "{d}/huge.toml", "--eps", "1"], "sigma2"),
    (["delta", "--mechanisms", "{d}/count.csv", "--eps", "1"], "count"),
    (["delta", "--mechanisms", "{d}/nosigma.csv", "--eps", "1"], "--mechanisms"),
    (["delta", "--mechanisms", "{d}/missing.toml", "--eps", "1"], "--mechanisms"),
    # sweep
    (["sweep", "--pairs", "99-1", "--out", "{d}/sw"], "pairs"),
    (["sweep", "--pairs", "abc", "--out", "{d}/sw"], "pairs"),
    (["sweep", "--rel-tol", "nan", "--out", "{d}/sw"], "--rel-tol"),
    (["sweep", "--tradeoff-half", "-3", "--out", "{d}/sw"], "--tradeoff-half"),
    (["sweep", "--alpha-min", "2", "--out", "{d}/sw"], "--alpha-min"),
    (["sweep", "--deltas", "1e-5,x", "--out", "{d}/sw"], "--deltas"),
    (["sweep", "--deltas", "0", "--out", "{d}/sw"], "--deltas"),
    (["sweep", "--jobs", "0", "--out", "{d}/sw"], "--jobs"),
    (["sweep", "--backend", "mpi", "--out", "{d}/sw"], "--backend"),
    # release
    (["release", "--pairs", "44-1"], "pairs"),
    (["release", "--delta", "2"], "--delta"),
    (["release", "--pl94", "nowhere"], "allocation"),
    # calibrate
    (["calibrate", "--sigma2", "2", "--delta", "0"], "--delta"),
    (["calibrate", "--sigma2", "2", "--delta", "1e-10", "--rel-tol", "nan"], "--rel-tol"),
    (["calibrate", "--sigma2", "2", "--delta", "1e-10", "--width", "-1"], "--width"),
    (["calibrate", "--sigma2", "2", "--delta", "1e-10", "--eps", "-1"], "--eps"),
    # crosscheck
    (["crosscheck", "--sigma2", "2", "--delta", "5"], "--delta"),
    (["crosscheck", "--sigma2", "2", "--rho", "-1", "--edgeworth"], "--rho"),
    # risk
    (["risk", "posterior", "--p", "2"], "--p"),
    (["risk", "decision", "--rho1", "-1"], "--rho1"),
    (["risk", "expected", "--p", "1/2", "--rho1", "1e-400"], "--rho1"),
    (["risk", "posterior", "--known", "x"], "--known"),
    (["risk", "sweep", "--grid", "0"], "--grid"),
    # countdep
    (["countdep", "bounds", "--r", "0"], "r"),
    (["countdep", "bounds", "--r", "1/10", "--n", "-5"], "n"),
    (["countdep", "bounds", "--r", "1/10", "--n", "10", "--dps", "0"], "--dps"),
    (["countdep", "budget", "--r", "1/10", "--n", "10", "--delta", "2"], "delta"),
    (["countdep", "sample", "--r", "1/10", "--n", "10", "--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize("argv, field", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_exits_2_with_one_line_naming_the_field(capsys, bad_files, argv, field):
    argv = [a.replace("{d}", str(bad_files)) for a in argv]
    assert _run(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert field in lines[0] and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("argv, field", [
    (["delta", "--sigma2", "2x", "--eps", "1", "--json"], "--sigma2"),
    (["delta", "--sigma2", "2", "--eps", "1", "--rel-tol", "0", "--json"], "--rel-tol"),
    (["epsilon", "--sigma2", "2", "--delta", "1", "--json"], "--delta"),
])
def test_json_mode_carries_an_error_object(capsys, argv, field):
    assert _run(argv) == 2
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert obj["error"]["code"] == 2 and obj["error"]["field"] == field
    assert len(err.strip().splitlines()) == 1


def test_negative_epsilon_in_exponent_form_is_a_value(capsys):
    assert _run(["delta", "--sigma2", "2", "--eps", "-1e-3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["points"][0]["epsilon"].startswith("-0.001")


def test_uncertifiable_exits_3_with_what_to_try(capsys, monkeypatch):
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.numerics.errors import UncertifiedError

    def refuse(self, eps):
        raise UncertifiedError("δ(ε=1) could not be certified")

    monkeypatch.setattr(ExactAccountant, "delta", refuse)
    assert _run(["delta", "--sigma2", "2", "--eps", "1", "--json"]) == 3
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1
    assert "--rel-tol" in err and "--method lattice-free" in err
    assert json.loads(out)["error"]["code"] == 3


def test_unexpected_exception_is_one_line_exit_1(capsys, monkeypatch):
    """A bug is neither the user's input (2) nor an uncertifiable result (3): exit 1."""
    from exactdp.accounting.accountant import ExactAccountant

    def boom(self, eps):
        raise KeyError("internal")

    monkeypatch.setattr(ExactAccountant, "delta", boom)
    assert _run(["delta", "--sigma2", "2", "--eps", "1"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("call", ["delta", "epsilon", "tradeoff"])
def test_lone_string_is_refused_by_every_accountant(call):
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.accounting.lattice_free import LatticeFreeAccountant
    from exactdp.mechanisms import Composition, DiscreteGaussian
    from exactdp.numerics.errors import InputError

    comp = Composition(((DiscreteGaussian(2, 1), 1),))
    for acc in (ExactAccountant(comp), LatticeFreeAccountant(comp)):
        for bad in ("0.1", 10):
            with pytest.raises(InputError):
                getattr(acc, call)(bad)


@pytest.mark.parametrize("argv", [
    ["calibrate", "--sigma2", "2", "--delta", "1e-10"],
    ["release", "--pairs", "13-13"],
    ["product", "phsafe-2020-pr"],
    ["portfolio", "--run", "pr"],
    ["census-2020", "--dhc-pairs", "13-13"],
])
def test_commands_refuse_another_commands_folder_before_any_work(argv, tmp_path, capsys):
    sweep_folder = tmp_path / "a-sweep"
    (sweep_folder / "pairs").mkdir(parents=True)
    (sweep_folder / "pairs" / "pair_1_1.csv").write_text("kept\n")
    assert main([*argv, "--out", str(sweep_folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds the output of exactdp sweep" in err, err
    assert (sweep_folder / "pairs" / "pair_1_1.csv").read_text() == "kept\n"
    assert sorted(p.name for p in sweep_folder.iterdir()) == ["pairs"]


def test_the_program_prints_no_thread_traceback():
    """The program's background threads print no traceback on stderr (loky's executor-manager
    thread raised KeyError when Ctrl-C landed while it queued work: CI saw 11 lines before the
    one-line error); with ``EXACTDP_DEBUG`` the traceback is shown."""
    import os
    import subprocess
    import sys

    code = ("from exactdp.cli import as_program; as_program(); import threading; "
            "t = threading.Thread(target=lambda: {}[54]); t.start(); t.join()")
    env = {k: v for k, v in os.environ.items() if k != "EXACTDP_DEBUG"}
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    loud = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "EXACTDP_DEBUG": "1"}, timeout=120)
    assert "KeyError: 54" in loud.stderr, loud.stderr
