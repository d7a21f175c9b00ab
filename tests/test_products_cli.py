"""``exactdp product`` and ``exactdp portfolio``: output, errors, and the portfolio's composition."""

from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction

import mpmath
import pytest

from exactdp.census.allocations import load_allocation
from exactdp.census.portfolio import PORTFOLIOS, parse_member, portfolio_cases, portfolio_rho
from exactdp.census.products import load_product
from exactdp.cli import main
from exactdp.cli._designs import read_mechanisms_file
from exactdp.numerics.exact import InputError


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_product_json_and_mechanisms_file_agree(tmp_path):
    code, out, _ = _run(["product", "safetab-h-2020-pr", "--budget-rule", "decimal", "--quiet", "--json",
                         "--delta", "1e-10", "--delta", "1e-5"])
    assert code == 0
    res = json.loads(out)
    assert res["configured_rho"] == "4.754134" and res["cases"] == {"1": "single case"}
    p = res["points"][0]
    assert (Fraction(p["eps_exact_lower"]) <= Fraction(p["eps_exact"]) < Fraction(p["eps_cks"])
            < Fraction(p["eps_bun_steinke"]))
    assert Fraction(p["delta_at_eps_bun_steinke"]) < Fraction(1, 10**10)
    # the same design through a mechanisms file and exactdp epsilon
    design = tmp_path / "case.toml"
    code, out, _ = _run(["product", "safetab-h-2020-pr", "--budget-rule", "decimal", "--cases", "1",
                         "--write-mechanisms", str(design)])
    assert code == 0 and "144 mechanisms in 3 groups" in out  # 4 regions x 2 levels x (T3, T4) x 9 groups
    comp = read_mechanisms_file(design)
    assert comp == load_product("safetab-h-2020-pr").case_composition(1, "decimal")
    code, out, _ = _run(["epsilon", "--mechanisms", str(design), "--delta", "1e-10", "--json"])
    eps = json.loads(out)["points"][0]
    assert Fraction(eps["epsilon_lower"]) <= Fraction(p["eps_exact"]) and Fraction(p["eps_exact_lower"]) <= Fraction(
        eps["epsilon"])


@pytest.mark.parametrize("argv, field", [
    (["product", "safetab-q"], "product"),
    (["product", "phsafe-2020-pr", "--cases", "3"], "--cases"),
    (["product", "phsafe-2020-pr", "--cases", "1,1"], "--cases"),
    (["product", "phsafe-2020-pr", "--write-mechanisms", "x.toml"], "--cases"),
    (["portfolio", "--member", "nope"], "member"),
    (["portfolio", "--member", "dhc-persons-2020:99-99"], "pair"),
])
def test_errors_are_one_line_exit_2(argv, field):
    code, out, err = _run(argv)
    assert code == 2, (out, err)
    assert field in err and len(err.strip().splitlines()) == 1


def test_portfolio_composes_every_member():
    members = [parse_member(s, "decimal") for s in PORTFOLIOS["pr"]]
    assert [m.kind for m in members] == ["allocation", "allocation", "product", "product", "product"]
    cases = portfolio_cases(members)
    assert len(cases) == 30 * 2
    rho = portfolio_rho(members)
    assert rho == (load_allocation("dhc-persons-2020-pr").total_rho + load_allocation("dhc-units-2020-pr").total_rho
                   + Fraction("2.643") + Fraction("4.754134") + Fraction("1.226649"))
    # one portfolio case is the sum of its members' cases
    first = cases[0].composition
    assert first.size == sum(m.cases[0][1].size for m in members)
    assert first.rho == sum(m.cases[0][1].rho for m in members)
    assert cases[0].label.startswith(
        "dhc-persons-2020-pr pair 1-1 | dhc-units-2020-pr pair 1-1 | safetab-p-2020-pr case 1")
    with pytest.raises(InputError, match="exceed"):
        portfolio_cases(members * 2)


def test_portfolio_cli_small():
    code, out, _ = _run(["portfolio", "--member", "dhc-units-2020-pr", "--member", "phsafe-2020-pr:1",
                         "--budget-rule", "decimal", "--quiet", "--json"])
    assert code == 0
    res = json.loads(out)
    assert res["n_cases"] == 1 and res["member_rho"] == {"dhc-units-2020-pr": "7.7005", "phsafe-2020-pr": "1.226649"}
    p = res["points"][0]
    with mpmath.workdps(30):
        assert mpmath.mpf(p["eps_exact"]) < mpmath.mpf(p["eps_cks"]) < mpmath.mpf(p["eps_bun_steinke"])
