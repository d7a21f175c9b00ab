"""Mixed designs on the command line and in mechanism files: a ``kind`` key per
``[[mechanism]]`` row, the short forms ``--dlaplace`` / ``--rr`` / ``--approx`` beside
``--sigma2``, the JSON envelope of a mixed design, one-line refusals naming the field, and
the answers against the brute force of tests/kinds_reference.py."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
from kinds_reference import approx_loss, dg_loss, dlap_loss, mixed_delta, rr_loss

from exactdp.cli import main
from exactdp.cli._designs import read_mechanisms_file
from exactdp.cli._kinds import parse_kind_specs
from exactdp.kinds import ApproxDP, DiscreteLaplace, Mixture, RandomizedResponse
from exactdp.mechanisms import Composition, DiscreteGaussian

TOML = '''
[[mechanism]]
kind = "discrete_laplace"
scale = "5/2"
shift = 2
count = 3

[[mechanism]]
kind = "randomized_response"
epsilon = "1/2"
k = 3

[[mechanism]]
kind = "approx_dp"
epsilon = "1"
delta = "1e-9"

[[mechanism]]
sigma2 = "4"
count = 2
'''
HAND = Mixture(((DiscreteLaplace(Fraction(5, 2), 2), 3), (RandomizedResponse(Fraction(1, 2), 3), 1),
                (ApproxDP(1, Fraction(1, 10**9)), 1), (DiscreteGaussian(4, 1), 2)))


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_files_and_short_forms_build_the_mixture_written_by_hand(tmp_path):
    toml = tmp_path / "m.toml"
    toml.write_text(TOML)
    assert read_mechanisms_file(toml) == HAND
    csv = tmp_path / "m.csv"
    csv.write_text("kind,sigma2,scale,epsilon,delta,k,shift,count\n"
                   "discrete_laplace,,5/2,,,,2,3\nrandomized_response,,,1/2,,3,,\n"
                   "approx_dp,,,1,1e-9,,,1\n,4,,,,,,2\n")
    assert read_mechanisms_file(csv) == HAND
    groups = (parse_kind_specs("--dlaplace", ["5/2x3@2"]) + parse_kind_specs("--rr", ["1/2:3"])
              + parse_kind_specs("--approx", ["1,1e-9"]))
    assert Mixture(tuple(groups) + ((DiscreteGaussian(4), 2),)) == HAND
    assert parse_kind_specs("--dlaplace", ["5/2@2x3"]) == [(DiscreteLaplace("5/2", 2), 3)]  # either order
    assert parse_kind_specs("--approx", ["1/2x4"]) == [(ApproxDP("1/2", 0), 4)]  # δ defaults to 0
    plain = tmp_path / "dg.toml"  # a file of discrete Gaussians only stays a Composition
    plain.write_text('[[mechanism]]\nkind = "discrete_gaussian"\nsigma2 = "4"\ncount = 2\n')
    assert read_mechanisms_file(plain) == Composition(((DiscreteGaussian(4), 2),))


BAD_ROWS = [
    ('kind = "randomized_response"\nepsilon = "1/2"\nscale = "2"', "mechanism[0]: scale", "not a field of a "
                                                                                         "randomized_response"),
    ('kind = "randomized_response"', "mechanism[0]: epsilon", "missing"),
    ('kind = "approx_dp"\ndelta = "1e-9"', "mechanism[0]: epsilon", "missing"),
    ('kind = "cauchy"\nscale = "2"', "mechanism[0]: kind", "unknown mechanism kind"),
    ('kind = "discrete_laplace"\nscale = 2.5', "mechanism[0]: scale", "TOML float"),
    ('kind = "discrete_laplace"\nscale = "2"\nshift = "1"', "mechanism[0]: shift", "TOML integer"),
    ('scale = "2"', "mechanism[0]: scale", 'kind = "discrete_laplace"'),
    ('kind = "randomized_response"\nepsilon = "1/2"\nk = 1', "mechanism[0]: k", "[2, inf)"),
    ('kind = "approx_dp"\nepsilon = "1"\ndelta = "1"', "mechanism[0]: delta", "[0, 1)"),
    ('kind = "discrete_laplace"\nscale = "0"', "mechanism[0]: scale", "> 0"),
    ('kind = "discrete_laplace"\nscale = "2"\nsigma2 = "4"', "mechanism[0]: sigma2", "not a field"),
]


@pytest.mark.parametrize("row,field,reason", BAD_ROWS)
def test_bad_rows_exit_2_with_one_line_naming_the_field(row, field, reason, tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text("[[mechanism]]\n" + row + "\n")
    code, out, err = _run(["delta", "--mechanisms", str(path), "--eps", "1", "--json"], capsys)
    assert code == 2 and err.count("\n") == 1 and field in err and reason in err, err
    assert json.loads(out)["error"]["field"].endswith(field)


BAD_FLAGS = [
    (["--dlaplace", "5/2x"], "--dlaplace", "a count must follow"),
    (["--dlaplace", "5/2x3x4"], "--dlaplace", "twice"),
    (["--dlaplace", "2.5.1"], "--dlaplace", "not a rational"),
    (["--dlaplace", "5/2@1e7"], "--dlaplace shift", "1e6"),
    (["--rr", "1/2@2"], "--rr", "no '@SHIFT'"),
    (["--rr", "1/2:1"], "--rr k", "[2, inf)"),
    (["--rr", "1/2x0"], "--rr count", "[1, 1e9]"),
    (["--approx", "1,2"], "--approx delta", "[0, 1)"),
    (["--approx", "1,"], "--approx", "a δ must follow"),
    (["--dlaplace", "2", "--allocation", "dhc-2020"], "design", "exactly one of"),
]


@pytest.mark.parametrize("flags,field,reason", BAD_FLAGS)
def test_bad_short_forms_exit_2_naming_the_flag(flags, field, reason, capsys):
    code, _, err = _run(["epsilon", *flags, "--delta", "1e-6"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"error: {field}" in err and reason in err, err


def test_mixed_design_refuses_checks_for_discrete_gaussians_and_other_commands(tmp_path, capsys):
    code, _, err = _run(["delta", "--dlaplace", "2", "--eps", "1", "--verify"], capsys)
    assert code == 2 and "--verify" in err  # (--certify encloses a mixed design: test_certify_kinds.py)
    path = tmp_path / "m.toml"
    path.write_text(TOML)
    code, _, err = _run(["calibrate", "--mechanisms", str(path), "--delta", "1e-6"], capsys)
    assert code == 2 and "--eps" in err  # a mixed design calibrates one kind, for an explicit target ε


def test_help_documents_the_short_forms(capsys):
    code, out, _ = _run(["delta", "--help"], capsys)
    assert code == 0
    for text in ("--dlaplace SCALE[xCOUNT][@SHIFT]", "--rr EPS[:K][xCOUNT]", "--approx EPS[,DELTA][xCOUNT]"):
        assert text in " ".join(out.split())


def test_json_envelope_describes_the_mixed_design_and_delta_meets_brute_force(capsys):
    argv = ["delta", "--dlaplace", "5/2x2@2", "--rr", "1/2:3", "--approx", "1/4,1e-6", "--sigma2", "4",
            "--eps", "1", "--eps", "3/2", "--json"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    obj = json.loads(out)
    design = obj["design"]
    assert design["groups"] == [
        {"kind": "approx_dp", "epsilon": "1/4", "delta": "1/1000000", "count": 1},
        {"kind": "discrete_gaussian", "sigma2": "4", "shift": 1, "count": 1},
        {"kind": "discrete_laplace", "scale": "5/2", "shift": 2, "count": 2},
        {"kind": "randomized_response", "epsilon": "1/2", "k": 3, "count": 1},
    ]
    assert design["mechanisms"] == 5 and design["gaussian_rho_zcdp"] == "1/8" and design["pure_epsilon"] is None
    assert design["dlaplace"] == ["5/2x2@2"] and obj["diagnostics"]["route"] == "mixed"
    dl, dropped = dlap_loss("5/2", 2)
    parts = [(dl, 2), (rr_loss("1/2", 3), 1), (approx_loss("1/4", "1e-6"), 1), (dg_loss(4), 1)]
    for point, eps in zip(obj["points"], (Fraction(1), Fraction(3, 2))):
        with mpmath.workdps(40):
            ref = mixed_delta(parts, eps)
            reported = mpmath.mpf(point["delta"])
            # the conservative side (the brute force leaves out at most 2·dropped of P-mass)
            assert reported >= ref - 2 * dropped
            assert abs(reported - ref) <= 1e-9 * ref


def test_pure_design_epsilon_against_brute_force(capsys):
    """365 daily counts with discrete Laplace noise of scale 20: ε(δ) bracketed around the
    brute-force inverse of δ(ε) (a binomial: each loss is ±1/20)."""
    code, out, _ = _run(["epsilon", "--dlaplace", "20x365", "--delta", "1e-6", "--json"], capsys)
    assert code == 0
    point = json.loads(out)["points"][0]
    with mpmath.workdps(50):
        r = mpmath.exp(mpmath.mpf(-1) / 20)
        q = 1 / (1 + r)  # P[loss = +1/20] = P[X ≤ 0]

        def delta(eps):
            return mpmath.fsum(mpmath.binomial(365, j) * q**j * (1 - q) ** (365 - j)
                               * (1 - mpmath.exp(eps - mpmath.mpf(2 * j - 365) / 20))
                               for j in range(366) if mpmath.mpf(2 * j - 365) / 20 > eps)

        lo, hi = mpmath.mpf(0), mpmath.mpf(365) / 20
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > mpmath.mpf("1e-6") else (lo, mid)
        upper, lower = mpmath.mpf(point["epsilon"]), mpmath.mpf(point["epsilon_lower"])
        assert lower <= hi and upper >= lo and upper - lo <= 1e-9 * lo


def test_the_mixing_page_shows_what_the_cli_prints(capsys):
    """docs/mixing.rst's console block is this command's output, and its mechanism file is
    the same design as the short forms."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    argv = ["epsilon", "--dlaplace", "50x365", "--sigma2", "25x4", "--delta", "1e-9"]
    code, out, _ = _run(argv, capsys)
    page = (docs / "mixing.rst").read_text(encoding="utf-8")
    assert code == 0 and "$ exactdp " + " ".join(argv) in page
    for line in out.strip().splitlines():
        assert line.strip() in page, line
    assert read_mechanisms_file(docs / "examples" / "year_of_counts.toml") == Mixture(
        ((DiscreteLaplace(50), 365), (DiscreteGaussian(25), 4)))


def test_tradeoff_of_a_mixed_design_against_brute_force(capsys):
    from kinds_reference import mixed_tradeoff

    code, out, _ = _run(["tradeoff", "--dlaplace", "5/2x3", "--rr", "1/2", "--approx", "1/2,1e-3", "--sigma2", "4",
                         "--alpha", "0.05", "--alpha", "1e-3", "--json"], capsys)
    assert code == 0
    dl, dropped = dlap_loss("5/2", 1)
    parts = [(dl, 3), (rr_loss("1/2"), 1), (approx_loss("1/2", "1e-3"), 1), (dg_loss(4), 1)]
    for point, alpha in zip(json.loads(out)["points"], (Fraction(5, 100), Fraction(1, 1000))):
        with mpmath.workdps(40):
            ref = mixed_tradeoff(parts, alpha)
            beta = mpmath.mpf(point["beta"])
            assert beta <= ref + 4 * dropped and abs(beta - ref) <= 1e-9 * ref  # the lower bound, conservative


def test_continuous_gaussian_kind_in_files_and_short_form(tmp_path, capsys):
    """kind = "gaussian" (continuous, a rational shift) and --gaussian SIGMA2[xCOUNT][@SHIFT];
    δ(ε) beside a discrete Laplace against the closed form Σ_v p_v·δ_N(ε − v)."""
    from exactdp.kinds import Gaussian

    path = tmp_path / "g.toml"
    path.write_text('[[mechanism]]\nkind = "gaussian"\nsigma2 = "4"\nshift = "1/2"\ncount = 3\n'
                    '[[mechanism]]\nkind = "discrete_laplace"\nscale = "2"\n')
    hand = Mixture(((Gaussian(4, Fraction(1, 2)), 3), (DiscreteLaplace(2), 1)))
    assert read_mechanisms_file(path) == hand
    assert parse_kind_specs("--gaussian", ["4x3@1/2"]) == [(Gaussian(4, Fraction(1, 2)), 3)]
    code, out, _ = _run(["delta", "--gaussian", "4x3@1/2", "--dlaplace", "2", "--eps", "1", "--json"], capsys)
    assert code == 0
    obj = json.loads(out)
    assert {"kind": "gaussian", "sigma2": "4", "shift": "1/2", "count": 3} in obj["design"]["groups"]
    assert obj["design"]["gaussian_rho_zcdp"] == "3/32"
    dl, dropped = dlap_loss(2, 1)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(2 * mpmath.mpf(3) / 32)  # ρ = 3/32: the Gaussian loss N(ρ, 2ρ), μ = √(2ρ)

        def delta_n(e):
            return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)

        ref = mpmath.fsum(p * delta_n(1 - mpmath.mpf(v.numerator) / v.denominator) for v, p in dl.items())
        got = mpmath.mpf(obj["points"][0]["delta"])
        assert got >= ref - 2 * dropped and abs(got - ref) <= 1e-9 * ref
