"""``exactdp product`` and ``exactdp portfolio``: output, errors, and the portfolio's composition."""

from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction
from pathlib import Path

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
    (["portfolio", "--member", "dhc-persons-2020:99-99"], "--member"),
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


# ----------------------------------------------------------------------------- issue 34: envelope, budget, caps
def _huge_product(tmp_path, n_choices=8, n_options=10):
    """phsafe-2020-pr with extra choices: n_options ** n_choices × 2 cases."""
    text = "allocations/products/phsafe-2020-pr.toml"
    base = (Path(__file__).resolve().parents[1] / text).read_text(encoding="utf-8")
    extra = ""
    for c in range(n_choices):
        opts = ", ".join('{ "neighbour-small-household" = 0 }' for _ in range(n_options))
        labels = ", ".join(f'"o{c}-{k}"' for k in range(n_options))
        extra += f'\n[[choice]]\nname = "extra {c}"\nlabels = [{labels}]\noptions = [{opts}]\n'
    f = tmp_path / "huge-product.toml"
    f.write_text(base + extra, encoding="utf-8")
    return f


def test_json_envelope_success_and_failure():
    code, out, _ = _run(["product", "phsafe-2020-pr", "--json", "--quiet", "--cases", "1"])
    res = json.loads(out)
    assert code == 0 and list(res)[:3] == ["command", "design", "points"]
    assert res["command"] == "product" and res["design"]["product"] == "phsafe-2020-pr" and res["points"]
    code, out, _ = _run(["portfolio", "--member", "dhc-persons-2020:", "--json"])
    res = json.loads(out)
    assert code == 2 and list(res) == ["command", "design", "error"] and res["command"] == "portfolio"
    assert res["error"]["field"] == "--member"


def test_product_of_1e8_cases_refused_at_once(tmp_path):
    f = _huge_product(tmp_path)
    code, _, err = _run(["product", str(f)])
    assert code == 2 and "200000000 cases" in err and "2000" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, words", [
    (["product", "safetab-p-2020-us", "--budget-seconds", "1"], ["--cases", "time budget", "--budget-seconds"]),
    (["product", "safetab-p-2020-us", "--budget-memory", "1M"], ["--cases", "memory budget", "--budget-memory"]),
    (["portfolio", "--member", "dhc-persons-2020:all"], ["--member", "946", "time budget"]),
    (["portfolio", "--budget-seconds", "2"], ["--member", "time budget"]),
])
def test_budget_refused_before_starting(argv, words):
    code, out, err = _run(argv + ["--quiet"])
    assert code == 2 and not out and len(err.splitlines()) == 1, err
    assert all(w in err for w in words), err


@pytest.mark.parametrize("argv, field", [
    (["portfolio", "--member", "dhc-persons-2020:"], "--member"),
    (["portfolio", "--member", "dhc-persons-2020:1-\u0661"], "--member"),
    (["portfolio", "--member", "dhc-persons-2020:\u00a013-13"], "--member"),
    (["product", "phsafe-2020-pr", "--cases", "\u0661"], "--cases"),
    (["product", "phsafe-2020-pr", "--cases", "1" * 5000], "--cases"),
])
def test_strict_case_and_pair_lists(argv, field):
    code, _, err = _run(argv)
    assert code == 2 and field in err and len(err.splitlines()) == 1, err
