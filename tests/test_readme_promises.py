"""The README's exit-code and error-type promises, walked one by one (issue 34).

README, "--json" paragraph and "What can be refused, and why": exit status 0; 2 for the
input or the environment (the line names the field, file or folder); 3 only for a result
that cannot be certified; 130/143 after Ctrl-C/SIGTERM; every error one line on stderr,
and under ``--json`` the envelope ``{"command", "design", "error": {"code", "kind",
"message", "field", "value"}}``; in Python ``InputError`` (bad input) and
``UncertifiedError`` (an accuracy that could not be certified), nothing else.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import exactdp
from exactdp.cli import main
from exactdp.numerics.errors import InputError, UncertifiedError


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and "Traceback" not in err, err
    return lines[0]


# ----------------------------------------------------------------------------- README refusal table, CLI
@pytest.mark.parametrize("argv, field", [
    # a binary float where an exact value is meant is a Python-API case; on the CLI these are:
    (["delta", "--sigma2", "2", "--eps", "1", "--rel-tol", "1e-16"], "--rel-tol"),
    (["epsilon", "--sigma2", "2", "--delta", "1"], "--delta"),
    (["tradeoff", "--sigma2", "2", "--alpha", "2"], "--alpha"),
    (["delta", "--sigma2", "0", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x0", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2x", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2", "--eps", "1e51"], "--eps"),
    (["delta", "--sigma2", "2x1000000001", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e999999999", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e-4301", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "\u0661", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "\U0001d7cf", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "nan", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1/0", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e-301", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e301", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "\u00a02", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "5/2e3", "--eps", "1"], "--sigma2"),
    (["sweep", "--pairs", "13-13", "--alpha-min", "1e-31", "--out", "{tmp}/s"], "--alpha-min"),
    (["sweep", "--pairs", "13-13", "--tradeoff-half", "1000000000", "--out", "{tmp}/s"], "--tradeoff-half"),
    (["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "\u0661\u0663", "--eps", "1"], "--pair"),
    (["portfolio", "--member", "dhc-persons-2020:"], "--member"),
])
def test_input_refusals_exit_2_naming_the_field(argv, field, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _run(argv + ["--json"], capsys)
    assert code == 2, err
    assert field in _one_line(err)
    env = json.loads(out)
    assert list(env) == ["command", "design", "error"] and env["command"] == argv[0]
    assert env["error"]["code"] == 2 and env["error"]["kind"] == "input" and env["error"]["message"]
    assert set(env["error"]) <= {"code", "kind", "message", "field", "value"}


def test_input_files_exit_2_naming_the_file(tmp_path, capsys):
    cases = {"utf16.toml": '[[mechanism]]\nsigma2 = "2"\n'.encode("utf-16"), "bin.csv": b"sigma2\n\x00\x01",
             "float.toml": b"[[mechanism]]\nsigma2 = 2.5\n", "dup.csv": b"sigma2,sigma2\n2,3\n",
             "quote.csv": b'sigma2\n"2\n', "row.csv": b"sigma2\n2,3\n",
             "deep.toml": b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n",
             "shift.toml": b'[[mechanism]]\nsigma2 = "2"\nshift = "3"\n'}
    for name, data in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        code, _, err = _run(["delta", "--mechanisms", str(f), "--eps", "1"], capsys)
        assert code == 2 and str(f) in _one_line(err), (name, err)


def test_environment_exits_2_naming_the_path(tmp_path, capsys):
    f = tmp_path / "a-file"
    f.write_text("x")
    code, _, err = _run(["calibrate", "--sigma2", "2x3", "--delta", "1e-3", "--out", str(f / "sub")], capsys)
    assert code == 2 and str(f) in _one_line(err)


def test_uncertifiable_exits_3(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("sigma2,count\n1e300,1000000000\n")
    code, out, err = _run(["delta", "--mechanisms", str(f), "--eps", "1", "--json"], capsys)
    assert code == 3 and "could not certify" in _one_line(err)
    env = json.loads(out)
    assert env["error"]["code"] == 3 and env["error"]["kind"] == "uncertified"


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt, 130), ("term", 143)])
def test_interrupts_exit_130_and_143(exc, code, monkeypatch, capsys):
    import exactdp.cli.accounting as acc
    from exactdp.cli import Terminated

    def boom(args):
        raise Terminated() if exc == "term" else KeyboardInterrupt()

    monkeypatch.setattr(acc, "_run_delta", boom)
    got, _, err = _run(["delta", "--sigma2", "2", "--eps", "1"], capsys)
    assert got == code and len(err.splitlines()) == 1


def test_one_pair_syntax(capsys):
    designs = []
    for spec in (["--pair", "13", "13"], ["--pair", "13-13"], ["--pairs", "13-13"]):
        code, out, _ = _run(["delta", "--allocation", "dhc-persons-2020", *spec, "--eps", "26", "--json"], capsys)
        assert code == 0
        designs.append(json.loads(out)["design"])
    assert designs[0] == designs[1] == designs[2]


def test_success_envelope_for_every_cheap_command(tmp_path, capsys):
    for argv in (["delta", "--sigma2", "2", "--eps", "1"], ["epsilon", "--sigma2", "2", "--delta", "1e-3"],
                 ["tradeoff", "--sigma2", "2", "--alpha", "0.5"], ["calibrate", "--sigma2", "2x3", "--delta", "1e-3"],
                 ["product", "phsafe-2020-pr", "--cases", "1", "--quiet"],
                 ["portfolio", "--member", "phsafe-2020-pr:1", "--quiet"],
                 ["risk", "decision", "--preset", "paper", "--convention", "paper", "--p", "1/2"],
                 ["countdep", "bounds", "--r", "1/10", "--n", "10"]):
        code, out, err = _run(argv + ["--json"], capsys)
        assert code == 0, (argv, err)
        env = json.loads(out)
        assert list(env)[:3] == ["command", "design", "points"], (argv, list(env))
        assert env["command"] == " ".join(argv[:2] if argv[0] in ("risk", "countdep") else argv[:1])


# ----------------------------------------------------------------------------- Python API
API_INPUT_ERRORS = [
    lambda: exactdp.DiscreteGaussian(0.1),
    lambda: exactdp.DiscreteGaussian("0"),
    lambda: exactdp.DiscreteGaussian("2", shift=10**13),
    lambda: exactdp.DiscreteGaussian("\u0661"),
    lambda: exactdp.DiscreteGaussian("1/0"),
    lambda: exactdp.DiscreteGaussian("5/2e3"),
    lambda: exactdp.DiscreteGaussian("1e999999999"),
    lambda: exactdp.Composition.from_sigma2("25"),
    lambda: exactdp.Composition(((exactdp.DiscreteGaussian("2"), 10**9 + 1),)),
    lambda: exactdp.Composition(0),
    lambda: exactdp.Composition(("2",)),
    lambda: exactdp.Composition.of(0),
    lambda: exactdp.ExactAccountant(None),
    lambda: exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["2"])).delta(["1e51"]),
    lambda: exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["2"])).epsilon(["1"]),
    lambda: exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["2"])).tradeoff(["2"]),
    lambda: exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["2"]), rel_tol=1e-16),
    lambda: exactdp.delta(exactdp.Composition.from_sigma2(["2"]), [0.5]),
    lambda: exactdp.load_allocation("nowhere"),
    lambda: exactdp.load_allocation("/nonexistent/x.toml"),
    lambda: exactdp.fraction_str("1/0"),
    lambda: exactdp.to_fraction(float("nan")),
]


@pytest.mark.parametrize("call", API_INPUT_ERRORS, ids=range(len(API_INPUT_ERRORS)))
def test_api_bad_input_raises_input_error(call):
    with pytest.raises(InputError) as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's overflow note on the way to the refusal
def test_api_uncertifiable_raises_uncertified_error():
    comp = exactdp.Composition(((exactdp.DiscreteGaussian("1e300"), 10**9),))
    with pytest.raises(UncertifiedError):
        exactdp.ExactAccountant(comp).delta(["1"])
    with pytest.raises(UncertifiedError):  # no split fits: the engine's TooCostly is an UncertifiedError here
        exactdp.LatticeFreeAccountant(exactdp.Composition.from_sigma2(["1e300"])).delta(["1"])


def test_api_errors_are_the_documented_types():
    assert issubclass(InputError, ValueError) and exactdp.InputError is InputError
    assert exactdp.UncertifiedError is UncertifiedError
    p = exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["2"])).delta([Fraction(1)])[0]
    assert p.value >= p.estimate and p.error_bound >= 0
