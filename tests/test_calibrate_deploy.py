"""``exactdp.calibrate``: the σ² to deploy meets the target, the bracket's other side misses it —
both re-accounted by the independent brute-force reference (``tests/harness.py`` BruteDesign),
and the CLI prints what the API returns (text, ``--json``, ``deploy.csv``, the report).
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction as F

import mpmath
import pytest

import exactdp
from exactdp import Composition, DiscreteGaussian, InputError
from exactdp.census.allocations import Allocation
from exactdp.cli import main

from harness import BruteDesign

WIDTH = F(1, 10**6)


def _brute(mechs, eps):
    """(lower, upper) of the reference δ(ε): mechs = [(σ², shift, count)]."""
    value, err = BruteDesign(mechs).delta(eps)
    return value - err, value + err


def _design_mechs(comp: Composition, s2):
    return [(s, m.shift, n) for (m, n), s in zip(comp.groups, s2)]


def _bs_eps(rho: F, delta: F):
    with mpmath.workdps(60):
        r = mpmath.mpf(rho.numerator) / rho.denominator
        return r + 2 * mpmath.sqrt(r * mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator))


@pytest.mark.parametrize("comp, delta, eps", [
    (Composition.from_sigma2(["2"] * 3), F(1, 1000), None),  # the Bureau's default target ε
    (Composition.of([DiscreteGaussian("7/3", 1)] * 3 + [DiscreteGaussian("11/5", 2)] * 2), F(1, 10**4), F(3)),
    (Composition.from_sigma2(["5", "9", "9"]), F(1, 10**6), F(5, 2)),
])
def test_deployed_sigma2_meets_the_target_and_the_other_side_misses_it(comp, delta, eps):
    cal = exactdp.calibrate(comp, delta, eps)
    r = cal.scale
    assert isinstance(cal, exactdp.Calibration) and r.lower < r.upper and r.error_bound <= WIDTH
    assert cal.value == cal.sigma2 == tuple(m.sigma2 * r.upper for m, _ in comp.groups)
    assert cal.sigma2_infeasible == tuple(m.sigma2 * r.lower for m, _ in comp.groups)
    assert cal.design == Composition(tuple((DiscreteGaussian(s, m.shift), n)
                                           for (m, n), s in zip(comp.groups, cal.sigma2)))
    assert cal.rho == tuple(F(m.shift ** 2) / (2 * s) for (m, _), s in zip(comp.groups, cal.sigma2))
    e = _bs_eps(comp.rho, delta) if eps is None else eps
    ok_hi = _brute(_design_mechs(comp, cal.sigma2), e)[1]
    bad_lo = _brute(_design_mechs(comp, cal.sigma2_infeasible), e)[0]
    assert ok_hi <= delta < bad_lo  # deployed: meets the target; the bracket's other side: misses it
    with pytest.raises(AttributeError):
        cal.sigma2 = ()  # frozen


def _tiny_allocation():
    # two levels, one query (small enough for the brute force); path 2 moves level B's budget
    # to A (same total 7/10)
    return Allocation(name="tiny", description="test allocation", provenance={"source": "test"},
                      levels=("A", "B"), queries=("q",), base={"A": (F(1, 5),), "B": (F(1, 2),)},
                      paths=((F(1), F(1)), (F(7, 2), F(0))))


def _pair_mechs(alloc, rho_cells: dict, i: int, j: int):
    """The pair (i, j) of the allocation whose full-chain cells carry ``rho_cells``."""
    mechs = []
    for path in (i, j):
        mult = alloc.paths[path - 1]
        for x, lev in enumerate(alloc.levels):
            for q in alloc.queries:
                r = rho_cells.get((lev, q), F(0)) * mult[x]
                if r:
                    mechs.append((1 / r, 1, 1))
    return mechs


@pytest.mark.parametrize("level", [None, "B"])
def test_allocation_rho_per_cell_meets_the_target_on_every_pair(level):
    alloc = _tiny_allocation()
    delta = F(1, 1000)
    cal = exactdp.calibrate(alloc, delta, level=level)
    r = cal.scale
    e = _bs_eps(alloc.total_rho, delta)
    deploy = dict(zip(cal.cells, cal.rho))
    miss = dict(zip(cal.cells, cal.rho_infeasible))
    assert all(cal.sigma2[k] == 1 / cal.rho[k] for k in range(len(cal.cells)))
    assert [c for c, on in zip(cal.cells, cal.scaled) if on] == [c for c in cal.cells if level in (None, c[0])]
    for p in alloc.pairs():  # the release: every pair meets the target with the deployed ρ
        assert _brute(_pair_mechs(alloc, deploy, *p), e)[1] <= delta, p
    assert _brute(_pair_mechs(alloc, miss, *r.argmax), e)[0] > delta  # the other side misses it on argmax
    if level is None:  # a uniform scaling is still an allocation (equal path totals)
        assert isinstance(cal.design, Allocation) and cal.design.total_rho == alloc.total_rho / r.upper
        assert cal.design.pair_rhos(1, 2) == tuple(x / r.upper for x in alloc.pair_rhos(1, 2))
    else:
        assert cal.design is None


def test_refusals():
    comp = Composition.from_sigma2(["2"])
    with pytest.raises(InputError, match="level"):
        exactdp.calibrate(comp, "1e-3", level="A")
    with pytest.raises(InputError, match="level"):
        exactdp.calibrate(_tiny_allocation(), "1e-3", level="Nowhere")
    with pytest.raises(InputError, match="design"):
        exactdp.calibrate([F(2)], "1e-3")
    with pytest.raises(InputError, match="delta"):
        exactdp.calibrate(comp, "2")


def test_notebook_faces():
    cal = exactdp.calibrate(Composition.from_sigma2(["2"] * 3), "1e-3")
    md = cal._repr_markdown_()
    assert "σ² to deploy" in md and "certified to meet" in md
    pd = pytest.importorskip("pandas")
    df = cal.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df["sigma2_deploy"]) == list(cal.sigma2)


def test_cli_prints_the_sigma2_to_deploy(tmp_path, capsys):
    cal = exactdp.calibrate(Composition.from_sigma2(["2"] * 3 + ["5"]), "1e-3", "3")
    assert main(["calibrate", "--sigma2", "2x3", "--sigma2", "5", "--delta", "1e-3", "--eps", "3"]) == 0
    text = capsys.readouterr().out
    assert "σ² to deploy" in text
    for s in cal.sigma2:
        assert f"sigma2 = {s.numerator}/{s.denominator}" in text
    out = tmp_path / "cal"
    assert main(["calibrate", "--sigma2", "2x3", "--sigma2", "5", "--delta", "1e-3", "--eps", "3", "--json",
                 "--out", str(out)]) == 0
    point = json.loads(capsys.readouterr().out)["points"][0]
    assert [F(c["sigma2_deploy"]) for c in point["sigma2_deploy"]] == list(cal.sigma2)
    assert [F(c["sigma2_infeasible"]) for c in point["sigma2_deploy"]] == list(cal.sigma2_infeasible)
    with open(out / "deploy.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [F(r["sigma2_deploy"]) for r in rows] == list(cal.sigma2)
    assert all(F(r["sigma2_deploy_decimal"]) >= F(r["sigma2_deploy"]) for r in rows)  # rounded up
    page = (out / "report.html").read_text(encoding="utf-8")
    s = cal.sigma2[0]
    assert "The noise to deploy" in page and f"{s.numerator}/{s.denominator}" in page
    assert "What this guarantee means" in page
    assert "at the given target ε = 3" in page  # --eps given: the caption says so (not Bun–Steinke)
