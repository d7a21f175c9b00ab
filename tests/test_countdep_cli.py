"""`exactdp countdep` in-process: JSON shapes, values against closed forms, errors, plots."""

import json
from fractions import Fraction

import mpmath
import pytest

from exactdp.cli import main


def _run(capsys, *argv):
    code = main(["countdep", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _sig_digits(text):
    mant = text.lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return len(mant)


def test_budget_json(capsys):
    code, out, _ = _run(capsys, "budget", "--r", "1/10", "--n", "0", "--n", "1", "--n", "1000", "--json")
    assert code == 0
    obj = json.loads(out)
    assert set(obj) >= {"sigma", "points"}
    assert [p["n"] for p in obj["points"]] == [0, 1, 1000]
    with mpmath.workdps(40):
        # σ = Φ⁻¹(1/2 + r0/4) with r0 = 1/20, c = 1 (eq. 3), by findroot; v from Cor. 3.2
        s = mpmath.findroot(lambda x: mpmath.ncdf(x) - (mpmath.mpf(1) / 2 + mpmath.mpf(1) / 80), 0.03)
        assert abs(mpmath.mpf(obj["sigma"]) / s - 1) < 1e-18
        refs = [mpmath.log(2) ** 2, mpmath.log(2) ** 2, mpmath.log(1 + mpmath.mpf(1) / 1000) ** 2]
        for p, ref in zip(obj["points"], refs):
            assert isinstance(p["v"], str) and _sig_digits(p["v"]) >= 17
            assert abs(mpmath.mpf(p["v"]) / (ref / (2 * s * s)) - 1) < 1e-18


def test_budget_text_with_delta(capsys):
    code, out, _ = _run(capsys, "budget", "--r", "0.2", "--r0", "0.15", "--c", "1/2", "--delta", "1e-6", "--n", "10")
    assert code == 0 and "sigma=" in out and "cks" in out


def test_bounds_json(capsys):
    code, out, _ = _run(capsys, "bounds", "--r", "1/10", "--n", "1", "--n", "100", "--json", "--dps", "20")
    assert code == 0
    obj = json.loads(out)
    assert {"points", "truncated_gaussian_constant", "c_star_lower", "c_star_upper"} <= set(obj)
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(obj["c_star_lower"]) / (mpmath.pi / (4 * mpmath.e**2)) - 1) < 1e-12
        assert abs(mpmath.mpf(obj["c_star_upper"]) * mpmath.pi - 1) < 1e-12
        assert obj["truncated_gaussian_constant"] == obj["c_star_lower"]
        r = Fraction(1, 10)
        for p in obj["points"]:
            assert {"n", "two_count", "uniform", "optimised_prior"} <= set(p)
            for key in ("two_count", "uniform", "optimised_prior", "best"):
                assert isinstance(p[key], str) and _sig_digits(p[key]) >= 17
            n = p["n"]
            # (14) in exact arithmetic, typed from the paper
            import math

            m = math.ceil(((1 + 3 * r) / (1 - r)) ** 2 * n)
            tc = (1 - r) ** 2 / (2 * Fraction(m - n) ** 2)
            assert abs(mpmath.mpf(p["two_count"]) / (mpmath.mpf(tc.numerator) / tc.denominator) - 1) < 1e-18
            assert mpmath.mpf(p["optimised_prior"]) >= mpmath.mpf(p["uniform"])
            assert mpmath.mpf(p["best"]) == max(mpmath.mpf(p[k]) for k in ("two_count", "uniform", "optimised_prior"))
            assert mpmath.mpf(p["ratio"]) >= 1


def test_bounds_vacuous_and_r_equal_one(capsys):
    code, out, _ = _run(capsys, "bounds", "--r", "3/5", "--n", "5", "--json", "--dps", "20")
    p = json.loads(out)["points"][0]
    assert code == 0 and p["many_count_vacuous"] and mpmath.mpf(p["optimised_prior"]) == 0
    assert p["best_source"] == "two-count (14)"
    code, out, _ = _run(capsys, "bounds", "--r", "3/5", "--n", "5", "--dps", "20")
    assert code == 0 and "vacuous" in out
    code, out, _ = _run(capsys, "bounds", "--r", "1", "--n", "5", "--json", "--dps", "20")
    obj = json.loads(out)
    assert code == 0 and mpmath.mpf(obj["points"][0]["best"]) == 0 and obj["two_count_limit"] is None


def test_sample_reproducible(capsys):
    args = ("sample", "--r", "1/2", "--n", "0", "--n", "7", "--size", "3", "--seed", "5", "--json")
    _, out1, _ = _run(capsys, *args)
    _, out2, _ = _run(capsys, *args)
    a = json.loads(out1)
    assert out1 == out2 and a["design"]["counts"] == [0, 7] and len(a["points"]) == 3
    code, out, _ = _run(capsys, "sample", "--r", "1/2", "--n", "3", "--round", "--seed", "1")
    assert code == 0 and "counts: 3" in out


def test_utility_json_and_text(capsys):
    code, out, _ = _run(capsys, "utility", "--r", "1/2", "--n", "0", "--n", "10", "--mc", "20000", "--json",
                        "--dps", "20")
    obj = json.loads(out)
    assert code == 0 and obj["all_within"]
    with mpmath.workdps(30):
        s = mpmath.mpf(obj["sigma"])
        # Lemma 4.1 with r0/(1+c) = 1/8
        assert abs(mpmath.mpf(obj["lemma41"]) - mpmath.mpf(1) / 8) < 1e-18
        assert abs(mpmath.mpf(obj["drift"]["argmin"]) / (s * s) - 1) < 1e-9
    for mc, pt in zip(obj["monte_carlo"], obj["points"]):
        assert float(mc["low"]) <= float(pt["error"]) <= float(mc["high"])
    code, out, _ = _run(capsys, "utility", "--r", "1/2", "--n", "3", "--quad", "--dps", "20")
    assert code == 0 and "holds" in out and "quadrature twin" in out


def test_plots(capsys, tmp_path):
    code, out, _ = _run(capsys, "utility", "--r", "1/10", "--plot", str(tmp_path), "--dps", "20")
    assert code == 0
    code, out, _ = _run(capsys, "budget", "--r", "1/10", "--n", "10", "--n", "1000", "--plot", str(tmp_path),
                        "--dps", "20")
    assert code == 0
    for stem in ("countdep_budget", "countdep_utility"):
        for ext in ("png", "pdf"):
            f = tmp_path / f"{stem}.{ext}"
            assert f.is_file() and f.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv, field",
    [
        (["budget", "--r", "3/2"], "r"),
        (["budget", "--r", "0"], "r"),
        (["budget", "--r", "1/10", "--r0", "1/10"], "r0"),
        (["budget", "--r", "1/10", "--r0", "2/10"], "r0"),
        (["budget", "--r", "1/10", "--c", "0"], "c"),
        (["budget", "--r", "1/10", "--n", "-1"], "n"),
        (["budget", "--r", "1/10", "--n", "2.5"], "n"),
        (["bounds", "--r", "1/10", "--n", "0"], "n"),
        (["budget", "--r", "1/10", "--delta", "2"], "delta"),
        (["utility", "--r", "1/10", "--n", "1", "--mc", "10", "--confidence", "1"], "confidence"),
    ],
)
def test_input_errors_exit_nonzero_naming_field(capsys, argv, field):
    code = main(["countdep", *argv])
    _, err = capsys.readouterr()
    assert code == 2
    assert f"{field}=" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, field", [(["budget", "--r", "nan"], "r"),
                                         (["budget", "--r", "1/10", "--c", "one"], "c")])
def test_unparsable_rationals_rejected_by_argparse(capsys, argv, field):
    with pytest.raises(SystemExit) as info:
        main(["countdep", *argv])
    _, err = capsys.readouterr()
    assert info.value.code == 2 and f"{field}=" in err
