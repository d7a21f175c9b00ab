"""`exactdp risk …` in-process: JSON formats, reference numbers, plots and error exits.

Reference numbers: the seed (Kazan and Reiter, arXiv 2204.04253) and mpmath one-liners
noted beside each assertion.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from exactdp.cli import main

from harness import theta3


def run_json(capsys, *argv):
    assert main(["risk", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def sig_digits(s: str) -> int:
    mant = s.lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return len(mant)


def test_decision_json_format_and_seed_value(capsys):
    data = run_json(capsys, "decision")
    assert data["design"]["convention"] == "paper"
    # default ρ1: 2.56·165/4099·3945/4097 = 1666368/16793603
    assert Fraction(data["design"]["rho1"]) == Fraction(256, 100) * Fraction(165, 4099) * Fraction(3945, 4097)
    assert [r["p"] for r in data["points"]] == ["1/2", "1/5", "1/10", "1/50", "1/864"]
    first = data["points"][0]
    assert {"p", "p_correct", "expected_risk"} <= set(first)
    for key in ("p_correct", "expected_risk"):
        assert isinstance(first[key], str) and sig_digits(first[key]) >= 17
    # seed: 58.89% ; mpmath: 1/2 + 1/(2·jtheta(3, 0, exp(-1666368/16793603)))
    with mpmath.workdps(30):
        ref = mpmath.mpf(1) / 2 + 1 / (2 * theta3(Fraction(1666368, 16793603)))
        assert abs(mpmath.mpf(first["p_correct"]) - ref) < 1e-18
    assert first["p_correct"].startswith("0.58886")
    # expected_risk is E[R | has c]: 1.0473… for p = 1/2 (seed Table 5: 1.05)
    assert first["expected_risk"].startswith("1.0473")


def test_decision_production_convention_and_explicit_rho(capsys):
    data = run_json(capsys, "decision", "--rho1", "0.2", "--p", "1/2", "--convention", "production")
    assert data["design"]["convention"] == "production" and data["design"]["rho1"] == "1/5"
    # production: σ² = 1/ρ = 5 ⇒ kernel exp(-z²/10); p = 1/2 ⇒ 1/2 + 1/(2·θ3(0, e^{-1/10}))
    with mpmath.workdps(30):
        ref = mpmath.mpf(1) / 2 + 1 / (2 * theta3(Fraction(1, 10)))
        assert abs(mpmath.mpf(data["points"][0]["p_correct"]) - ref) < 1e-18


def test_posterior_json_and_plot(capsys, tmp_path):
    data = run_json(capsys, "posterior", "--p", "1/2", "--x-min", "3", "--x-max", "5", "--plot", str(tmp_path))
    pts = data["points"][0]["points"]
    assert [pt["x_star"] for pt in pts] == [3, 4, 5]
    # seed Table 4: x* = 4 occurs 3.6% and x* = 5 1.5% of the time (target lacks c)
    assert round(float(pts[1]["prob_if_lacks"]) * 100, 1) == 3.6
    assert round(float(pts[2]["prob_if_lacks"]) * 100, 1) == 1.5
    assert (tmp_path / "risk_posterior_vs_xstar.png").stat().st_size > 0
    assert (tmp_path / "risk_posterior_vs_xstar.pdf").stat().st_size > 0


def test_expected_text_output(capsys):
    assert main(["risk", "expected", "--p", "1/50"]) == 0
    out = capsys.readouterr().out
    assert "convention: paper" in out
    assert "1.2079712727963" in out  # seed Table 5: 1.21 (brute force in test_risk_single.py)


def test_hierarchical_json(capsys, tmp_path):
    data = run_json(capsys, "hierarchical", "--x2", "1", "--gibbs", "100", "--chains", "16", "--plot", str(tmp_path))
    assert data["design"]["model"] == "joint" and data["design"]["d"] == 27 and data["design"]["y_noise"] == "approx"
    res = data["points"][0]
    assert res["data"] == [2, 1, -1]
    # seed: without hierarchy 57.4%
    assert round(float(res["single_level_posterior"]) * 100, 1) == 57.4
    dp = res["decision_probabilities"][0]
    assert float(dp["left_out"]) <= 1e-12
    assert abs(float(res["gibbs"]["z"])) < 4.5
    assert (tmp_path / "risk_decision_map_p1_2.png").exists()
    assert (tmp_path / "risk_decision_vs_x2_p1_2.pdf").exists()


def test_sweeps(capsys, tmp_path):
    data = run_json(capsys, "sweep", "--over", "rho1", "--grid", "1/2", "--grid", "3/5", "--p", "1/5",
                    "--plot", str(tmp_path))
    # seed Figure 3 discussion: p = 1/5 ⇒ ≈ 0.30 at ρ1 = 0.5 and ≈ 0.28 at ρ1 = 0.6, threshold 2
    assert [round(float(r["p_correct"]), 2) for r in data["points"]] == [0.30, 0.28]
    assert [r["threshold"] for r in data["points"]] == [2, 2]
    assert (tmp_path / "risk_vs_rho1.png").exists()
    data = run_json(capsys, "sweep", "--over", "ell", "--ell-max", "2", "--p", "1/2")
    assert [r["ell"] for r in data["points"]] == [1, 2]
    assert data["points"][0]["p_correct"].startswith("0.58886")
    data = run_json(capsys, "sweep", "--over", "rho2", "--grid", "5", "--x2", "10", "--p", "1/2")
    assert len(data["points"]) == 1 and float(data["points"][0]["error_bound"]) < 1e-11


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["risk", "decision", "--rho1", "0.1x"], "rho1"),
        (["risk", "decision", "--rho1", "-1/10"], "rho1"),
        (["risk", "decision", "--p", "1.5"], "p="),
        (["risk", "decision", "--p", "0"], "p="),
        (["risk", "decision", "--convention", "exactish"], "convention"),
        (["risk", "hierarchical", "--d", "2.5"], "d="),
        (["risk", "hierarchical", "--d", "0"], "d=0"),
        (["risk", "hierarchical", "--x2", "0"], "x2"),
        (["risk", "posterior", "--x-min", "3", "--x-max", "1"], "--x-max"),
        (["risk", "sweep", "--over", "ell", "--ell-max", "7"], "--ell-max"),
    ],
)
def test_errors_exit_nonzero_with_field(capsys, argv, needle):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code != 0
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1
