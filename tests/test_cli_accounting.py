"""`exactdp delta|epsilon|tradeoff` in-process: JSON shape, values, errors."""

import json
from fractions import Fraction

import mpmath
import pytest

from exactdp.cli import main


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_delta_json_shape_and_headline_value(capsys):
    out = _json(capsys, ["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "13",
                         "--eps", "26.3405888527", "--eps", "30", "--json"])
    assert out["command"] == "delta" and out["design"]["rho_zcdp"] == "24811/5000"
    assert [p["epsilon"][:13] for p in out["points"]] == ["26.3405888527", "30.0000000000"]
    first = out["points"][0]
    assert set(first) >= {"epsilon", "delta", "error_bound"}
    assert len(first["delta"].split("e")[0].replace(".", "").lstrip("0")) >= 17
    assert abs(mpmath.mpf(first["delta"]) / mpmath.mpf("1.78319933513e-12") - 1) < 1e-9


def test_sigma2_counts_and_mechanism_files_agree(capsys, tmp_path):
    a = _json(capsys, ["delta", "--sigma2", "10000/11x20", "--sigma2", "2.5025", "--eps", "1", "--json"])
    toml = tmp_path / "m.toml"
    toml.write_text('[[mechanism]]\nsigma2 = "10000/11"\ncount = 20\n\n[[mechanism]]\nsigma2 = "2.5025"\nshift = 1\n')
    b = _json(capsys, ["delta", "--mechanisms", str(toml), "--eps", "1", "--json"])
    csvf = tmp_path / "m.csv"
    csvf.write_text("sigma2,shift,count\n10000/11,1,20\n2.5025,1,1\n")
    c = _json(capsys, ["delta", "--mechanisms", str(csvf), "--eps", "1", "--json"])
    assert a["points"] == b["points"] == c["points"]
    assert a["design"]["rho_zcdp"] == "211011/1001000"


def test_epsilon_and_tradeoff_json(capsys):
    e = _json(capsys, ["epsilon", "--sigma2", "2x3", "--delta", "1e-6", "--delta", "1e-12", "--json"])
    assert [p["delta"][:5] for p in e["points"]] == ["1.000", "1.000"]
    eps = [Fraction(p["epsilon"]) for p in e["points"]]
    assert eps[0] < eps[1]
    t = _json(capsys, ["tradeoff", "--sigma2", "2x3", "--alpha", "0.05", "--alpha", "1/2", "--json"])
    assert [set(p) >= {"alpha", "beta", "error_bound"} for p in t["points"]] == [True, True]
    assert Fraction(t["points"][0]["beta"]) > Fraction(t["points"][1]["beta"])


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["delta", "--sigma2", "3", "--eps", "0.x"], "--eps"),
        (["delta", "--sigma2", "-3", "--eps", "1"], "--sigma2='-3'"),
        (["delta", "--sigma2", "0", "--eps", "1"], "--sigma2='0'"),
        (["delta", "--sigma2", "3", "--eps", "1", "--nope"], "unrecognized arguments"),
        (["delta", "--mechanisms", "/nonexistent/m.toml", "--eps", "1"], "/nonexistent/m.toml"),
        (["epsilon", "--sigma2", "3", "--delta", "2"], "delta"),
        (["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "99", "--eps", "1"], "--pair='13-99'"),
        (["delta", "--eps", "1"], "design"),
    ],
)
def test_bad_input_is_one_line_error(capsys, argv, needle):
    try:
        code = main(argv)
    except SystemExit as exc:  # found by argparse
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert needle in err


def test_float_in_python_api_is_refused():
    from exactdp.mechanisms import DiscreteGaussian
    from exactdp.numerics.exact import InputError

    with pytest.raises(InputError, match="sigma2=0.5"):
        DiscreteGaussian(0.5)


def test_verify_flag_reports_agreement(capsys):
    out = _json(capsys, ["delta", "--sigma2", "3x4", "--eps", "2", "--verify", "--json"])
    p = out["points"][0]
    assert p["agrees"] is True
    assert mpmath.mpf(p["disagreement"]) <= mpmath.mpf(p["error_bound"])


def test_verify_table_shows_the_twin_value_with_its_exponent(capsys):
    assert main(["delta", "--sigma2", "3x4", "--eps", "5", "--verify"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1].split()
    fast, twin = mpmath.mpf(row[1]), mpmath.mpf(row[3])
    assert abs(twin / fast - 1) < 1e-9
