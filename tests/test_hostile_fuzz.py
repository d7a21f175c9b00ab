"""Hostile input, fuzzed (issue 26): files, argument vectors and API values.

The property, for every generated input:

* the command or call ends within a time bound (no value is expanded before its range is
  checked: ``1e999999999`` is refused at once);
* the CLI exits 0, 2 (the user's input or environment) or 3 (an uncertifiable result);
  on failure stderr is exactly one line ``exactdp...: error: ...``, never a traceback,
  and under ``--json`` stdout is the one envelope ``{"command", "design", "error"}``;
* the API returns or raises :class:`InputError` / :class:`UncertifiedError`, nothing else.

The number parser is checked against an independent reference (the standard library's
:class:`decimal.Decimal`, exact, on ASCII decimal literals of moderate size).  Values that
only the engine finds slow (σ² ≥ 1e17, thousands of distinct σ²; issue 24) are not drawn
here: ``tests/test_hostile_engine.py`` lists them.  Fixed seed (``derandomize``), CI-sized.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.cli import main
from exactdp.numerics.errors import InputError, UncertifiedError
from exactdp.numerics.exact import MAX_DIGITS, to_fraction

FUZZ = settings(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
#: seconds one fuzzed command may take (a refusal is immediate; a small valid design
#: answers in about a second once the kernels are loaded)
BOUND = 30.0

#: numbers as a hostile user types them (refused at once, or small and valid)
HOSTILE = ["1e999999999", "1e-999999999", "-1e999999999", "١", "𝟏", "٣/٤", "1e4300", "1e-4300", "9" * 5000,
           "1/" + "9" * 5000, "nan", "inf", "-inf", "Infinity", "", " ", "1/0", "0x10", "1_0", "1__0", "1e", "e5",
           ".", "+", "--1", "1/2/3", "0.1f", "1,5", "1e+", "\x00", "1\n2", "1e99999999999999999999", "0e999999999",
           "-0", "0", "-1", "1e-400", "1e400", "3/2", "2", "0.5", "1e-10", "10000/11", "2.5025"]
#: values every query flag refuses
REFUSED = ["1e999999999", "1e-999999999", "١", "𝟏", "nan", "inf", "", "1/0", "0x10", "1e", "9" * 5000, "2", "-1", "0"]
VALID_SIGMA2 = ["2", "3/2", "10000/11x3", "2.5025", "7x2"]


def _run(argv, capsys):
    t0 = time.perf_counter()
    try:
        code = main(argv)
    except SystemExit as exc:  # found by argparse (it raises after printing its line)
        code = exc.code
    took = time.perf_counter() - t0
    out, err = capsys.readouterr()
    return code, out, err, took


def _check_cli(argv, capsys):
    code, out, err, took = _run(argv, capsys)
    assert took < BOUND, (argv, took)
    assert code in (0, 2, 3), (argv, code, err)
    assert "Traceback" not in err and "Warning" not in err, (argv, err)
    if code:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("exactdp") and ": error: " in lines[0], (argv, err)
        assert "<class" not in lines[0] and "ConversionSyntax" not in lines[0], lines[0]  # no Python internals
    if "--json" in argv:
        obj = json.loads(out)
        assert obj["command"] == argv[0] and "design" in obj
        assert ("error" in obj) == (code != 0) and ("points" in obj) == (code == 0)
        if code:
            assert obj["error"]["code"] == code
    return code


# ----------------------------------------------------------------------------- parser
@settings(FUZZ, max_examples=300)
@given(st.text(min_size=0, max_size=40))
def test_any_text_is_a_number_or_one_input_error(text):
    t0 = time.perf_counter()
    try:
        q = to_fraction(text, "x")
    except InputError as exc:
        assert "\n" not in exc.reason
    else:
        assert text.strip().isascii()
        assert len(str(abs(q.numerator))) <= MAX_DIGITS and len(str(q.denominator)) <= MAX_DIGITS
    assert time.perf_counter() - t0 < 0.5


@st.composite
def decimal_literals(draw):
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(st.text("0123456789", min_size=0, max_size=12))
    frac = draw(st.text("0123456789", min_size=0, max_size=12))
    if not whole and not frac:
        whole = "0"
    body = whole + ("." + frac if frac or draw(st.booleans()) else "")
    exp = draw(st.one_of(st.just(""), st.integers(-999, 999).map(lambda e: f"e{e}"),
                         st.integers(-10**12, 10**12).map(lambda e: f"E{e:+d}")))
    return sign + body + exp


@settings(FUZZ, max_examples=300)
@given(decimal_literals())
def test_decimal_literals_match_the_standard_library(text):
    """Reference: Decimal(text), exact, expanded only where it is small (the exponent
    decides before any expansion whether the value fits the digit limit)."""
    ref = Decimal(text)
    _, digits, exp = ref.as_tuple()
    mantissa = "".join(map(str, digits)).lstrip("0").rstrip("0")
    trailing = len("".join(map(str, digits)).lstrip("0")) - len(mantissa)
    scale = exp + trailing
    fits = not mantissa or (len(mantissa) + max(scale, 0) <= MAX_DIGITS and 1 - scale <= MAX_DIGITS)
    t0 = time.perf_counter()
    if fits:
        assert to_fraction(text, "x") == Fraction(ref)
    else:
        with pytest.raises(InputError, match="digits"):
            to_fraction(text, "x")
    assert time.perf_counter() - t0 < 0.5


@pytest.mark.parametrize("digit", ["١", "۱", "१", "𝟏", "１", "¹", "Ⅰ"])
def test_unicode_digits_are_refused_everywhere(digit):
    with pytest.raises(InputError, match="non-ASCII"):
        to_fraction(digit, "sigma2")
    with pytest.raises(InputError, match="non-ASCII"):
        to_fraction(f"1/{digit}", "sigma2")


# ----------------------------------------------------------------------------- API values
_API_VALUES = HOSTILE + [Decimal("1e999999999"), Decimal("-1e-999999999"), Decimal("NaN"), 10**5000, -(10**4400),
                         0.1, float("nan"), True, b"12", [], None, object(), Fraction(10) ** 5000]


@settings(FUZZ, max_examples=120)
@given(st.sampled_from(["DiscreteGaussian", "shift", "from_sigma2", "from_rhos", "delta", "epsilon", "tradeoff"]),
       st.sampled_from(_API_VALUES), st.booleans())
def test_api_values_return_or_raise_input_error(call, value, listed):
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.mechanisms import Composition, DiscreteGaussian

    arg = [value] if listed else value
    t0 = time.perf_counter()
    try:
        if call == "DiscreteGaussian":
            DiscreteGaussian(value)
        elif call == "shift":
            DiscreteGaussian(2, shift=value)
        elif call == "from_sigma2":
            Composition.from_sigma2(arg)
        elif call == "from_rhos":
            Composition.from_rhos(arg)
        else:
            getattr(ExactAccountant(Composition.from_sigma2(["2"])), call)(arg)
    except (InputError, UncertifiedError) as exc:
        assert "\n" not in str(exc)
    assert time.perf_counter() - t0 < BOUND


@pytest.mark.parametrize("call, text", [("from_sigma2", "25"), ("from_rhos", "12")])
def test_a_lone_string_is_never_read_digit_by_digit(call, text):
    from exactdp.mechanisms import Composition

    with pytest.raises(InputError, match="not a lone value"):
        getattr(Composition, call)(text)
    assert getattr(Composition, call)([text]).size == 1


# ----------------------------------------------------------------------------- argument vectors
@st.composite
def argument_vectors(draw):
    cmd = draw(st.sampled_from(["delta", "epsilon", "tradeoff", "calibrate", "sweep", "release", "crosscheck"]))
    flag = {"delta": "--eps", "epsilon": "--delta", "tradeoff": "--alpha", "calibrate": "--delta",
            "crosscheck": "--delta"}.get(cmd)
    argv = [cmd]
    if cmd in ("sweep", "release"):  # at least one option the command refuses: a sweep is never run
        refused = [
            ("--pairs", st.sampled_from(["99-1", "1-x", "١-1", "13-13,13-13", "0-1", "all x", ""])),
            ("--pair", st.sampled_from(["13 99", "x y", "1 2 3"])),
            ("--delta", st.sampled_from(REFUSED)),
            ("--budget-seconds", st.sampled_from(["0", "-1", "x", "1e999"])),
            ("--budget-memory", st.sampled_from(["0", "2Q", "-1G", "x"])),
        ] + ([
            ("--jobs", st.sampled_from(["1e20", "1000", "0", "-2", "١", "1.5"])),
            ("--tradeoff-half", st.sampled_from(["1000000000", "1", "-3", "1e4300", "x"])),
            ("--alpha-min", st.sampled_from(["1e-300", "2", "0", "1e999999999", "nan"])),
            ("--deltas", st.sampled_from(["0", "1", "x", "1e-999999999", "١e-5", "1e-5,,nan"])),
        ] if cmd == "sweep" else [])
        opts = draw(st.lists(st.sampled_from(refused), min_size=1, max_size=3))
        if cmd == "sweep":
            argv += ["--out", "{out}", "--no-plots", "--quiet"]
        for name, values in opts:
            argv += [name, *draw(values).split(" ")] if name == "--pair" else [name, draw(values)]
    else:
        design = draw(st.sampled_from(["sigma2", "hostile", "allocation"]))
        if design == "sigma2":
            argv += ["--sigma2", draw(st.sampled_from(VALID_SIGMA2))]
        elif design == "hostile":
            argv += ["--sigma2", draw(st.sampled_from(HOSTILE)) + draw(st.sampled_from(["", "x2", "x1e99", "x١"]))]
        else:
            argv += ["--allocation", draw(st.sampled_from(["dhc-persons-2020", "nowhere", "../x.toml"])),
                     draw(st.sampled_from(["--pair", "--pairs"])), draw(st.sampled_from(["13-13", "1-99", "x"]))]
        if cmd != "crosscheck" or draw(st.booleans()):
            argv += [flag, draw(st.sampled_from(HOSTILE))]
        if cmd == "crosscheck":
            argv += ["--out", "{out}", "--no-calibration"]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@settings(FUZZ, max_examples=60)
@given(argv=argument_vectors())
def test_argument_vectors_end_with_one_line_and_a_meaningful_code(argv, tmp_path_factory, capsys):
    out = tmp_path_factory.mktemp("fuzz")
    argv = [a.replace("{out}", str(out / "o")) for a in argv]
    code = _check_cli(argv, capsys)
    if code == 0 and argv[0] == "sweep":  # only refusals are drawn for the sweep
        pytest.fail(f"a fuzzed sweep ran: {argv}")


# ----------------------------------------------------------------------------- files
_TOML_HOSTILE = [
    '[[mechanism]]\nsigma2 = "1e999999999"\n',
    '[[mechanism]]\nsigma2 = "١"\n',
    '[[mechanism]]\nsigma2 = 2.5\n',
    'mechanism = [1, 2]\n',
    'mechanism = "2"\n',
    '[[mechanism]]\nsigma2 = ["2"]\n',
    '[[mechanism]]\nsigma2 = {a = 1}\n',
    '[[mechanism]]\nsigma2 = "2"\ncount = "1e20"\n',
    '[[mechanism]]\nsigma2 = "2"\nshift = "1e-999999999"\n',
    '[[mechanism]]\nsigma2 = true\n',
    "a = " + "[" * 5000 + "]" * 5000 + "\n",
    "a = " + "{b=" * 3000 + "1" + "}" * 3000 + "\n",
    '[[mechanism]]\nsigma2 = "2"\n',
]
_CSV_HOSTILE = [
    "sigma2,sigma2\n2,3\n",
    'sigma2,count\n"2,3\n',
    "sigma2\n1e999999999\n",
    "sigma2,count\n2\n",
    "sigma2\n2,3\n",
    "sigma2\n١\n",
    ",count\n2,1\n",
    "\n\n",
    "sigma2,shift,count\n2,1,2\n",
]


@st.composite
def mechanism_files(draw):
    kind = draw(st.sampled_from(["toml", "csv", "bytes", "utf16"]))
    if kind == "toml":
        return "toml", draw(st.sampled_from(_TOML_HOSTILE)).encode("utf-8")
    if kind == "csv":
        return "csv", draw(st.sampled_from(_CSV_HOSTILE)).encode("utf-8")
    if kind == "utf16":
        return draw(st.sampled_from(["toml", "csv"])), '[[mechanism]]\nsigma2 = "2"\n'.encode("utf-16")
    return draw(st.sampled_from(["toml", "csv"])), draw(st.binary(min_size=0, max_size=64))


@settings(FUZZ, max_examples=50)
@given(spec=mechanism_files(), as_json=st.booleans())
def test_mechanism_files_end_with_one_line_and_a_meaningful_code(spec, as_json, tmp_path_factory, capsys):
    suffix, data = spec
    path = tmp_path_factory.mktemp("mech") / f"m.{suffix}"
    path.write_bytes(data)
    _check_cli(["delta", "--mechanisms", str(path), "--eps", "1"] + (["--json"] if as_json else []), capsys)


_ALLOCATION = """format = "exactdp-allocation/1"
name = "fuzz"
description = "a fuzzed allocation"
levels = ["A", "B"]
queries = ["q1", "q2"]
[provenance]
source = "tests"
[budget]
mode = "{mode}"
{budget}
[base]
A = [{a}]
B = [{b}]
[paths]
"1" = [{p1}]
"2" = [{p2}]
"""

#: (a huge integer global_scale, 2**63 − 1, is the engine's: tests/test_hostile_engine.py)
_CELLS = ['"1/10"', '"1/20"', '"0"', '"1e999999999"', '"1e-999999999"', '"1e400"', '"1e-400"', '"١"', '0.5',
          '"nan"', '"-1"', "2", '["1"]', '"1/0"', "{a = 1}"]


@st.composite
def allocation_files(draw):
    cell = lambda: draw(st.sampled_from(_CELLS))  # noqa: E731
    if draw(st.booleans()):
        mode, budget = "shares", (f"global_scale = {draw(st.sampled_from(_CELLS))}\n"
                                  'geolevel_shares = ["1/2", "1/2"]\n')
        a, b = '"1/2", "1/2"', '"1/2", "1/2"'
    else:
        mode = "absolute"
        budget = draw(st.sampled_from(["", f"expected_total_rho = {draw(st.sampled_from(_CELLS))}"]))
        a, b = f"{cell()}, {cell()}", f"{cell()}, {cell()}"
    text = _ALLOCATION.format(mode=mode, budget=budget, a=a, b=b, p1=f"{cell()}, {cell()}", p2=f"{cell()}, {cell()}")
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "latin-1"]))
    return text.encode(encoding, errors="replace")


@settings(FUZZ, max_examples=40)
@given(data=allocation_files(), as_json=st.booleans())
def test_allocation_files_end_with_one_line_and_a_meaningful_code(data, as_json, tmp_path_factory, capsys):
    path = tmp_path_factory.mktemp("alloc") / "fuzz.toml"
    path.write_bytes(data)
    _check_cli(["delta", "--allocation", str(path), "--pair", "1", "2", "--eps", "1"] + (["--json"] if as_json else []),
               capsys)
