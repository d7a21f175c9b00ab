"""``exactdp census-2020``: every 2020 product and their composition in one folder.

One run (a partial DHC persons sweep of pairs 13-13 and 6-6, so the page must say it is
partial) is checked against references computed here independently of the job: the
Bun–Steinke ε in closed form (mpmath), the sweep's own per-pair files (the DHC row is
their maximum), the composition order (a portfolio is no more private than any of its
members: post-processing), the sign of δ at the Bureau's ε, and every number the page
cites against the CSV's certified upper bound rounded up.  The page is opened in headless
Chromium offline (``tests/browser.py``).
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from browser import console_problems, open_browser

from exactdp.cli import main
from exactdp.report.columns import UNDOCUMENTED, column_dictionary
from exactdp.report.numbers import round_up

PAIRS = "13-13,6-6"


@pytest.fixture(scope="module")
def census(tmp_path_factory):
    """(folder, the --json envelope) of one partial run."""
    out = tmp_path_factory.mktemp("census") / "out"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["census-2020", "--dhc-pairs", PAIRS, "--out", str(out), "--json", "--quiet", "--jobs", "1"])
    assert code == 0
    return out, json.loads(buf.getvalue())


def _rows(out: Path) -> list[dict]:
    with open(out / "census_2020.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _by_key(out: Path) -> dict:
    return {r["key"]: r for r in _rows(out)}


_NUMBERS = ("configured_rho", "delta_target", "eps_bureau", "eps_cks", "eps_exact_lower", "eps_exact_upper", "eps_cite",
            "delta_at_eps_bureau_lower", "delta_at_eps_bureau_upper", "delta_cite")


def test_the_envelope_and_the_csv(census):
    out, env = census
    assert list(env)[:3] == ["command", "design", "points"] and env["command"] == "census-2020"
    assert env["partial"] is True and Path(env["report"]).is_file() and Path(env["csv"]).is_file()
    rows = _rows(out)
    assert env["points"] == rows
    assert [r["key"] for r in rows][:3] == ["pl94-persons-2020", "pl94-units-2020", "dhc-persons-2020"]
    assert {r["run"] for r in rows} == {"US", "PR"} and len(rows) == 14
    for r in rows:
        for c in _NUMBERS:  # every number a decimal text
            assert re.fullmatch(r"[0-9]+(\.[0-9]+)?(e-?[0-9]+)?", r[c]), (c, r[c])
        lo, hi = Fraction(r["eps_exact_lower"]), Fraction(r["eps_exact_upper"])
        assert 0 < lo <= hi <= lo * (1 + Fraction(1, 10**8)), r["key"]
        assert Fraction(r["delta_at_eps_bureau_lower"]) <= Fraction(r["delta_at_eps_bureau_upper"])
        assert r["eps_cite"] == round_up(r["eps_exact_upper"]) and r["delta_cite"] == round_up(
            r["delta_at_eps_bureau_upper"])
        assert Fraction(r["configured_rho_exact"]) == Fraction(r["configured_rho"]) or "/" in r["configured_rho_exact"]
    assert [r["complete"] for r in rows].count("0") == 1 and _by_key(out)["dhc-persons-2020"]["complete"] == "0"
    assert "PARTIAL" in _by_key(out)["dhc-persons-2020"]["scope"]


def test_the_bureaus_epsilon_is_bun_steinke_in_closed_form(census):
    out, _ = census
    for r in _rows(out):
        rho = Fraction(r["configured_rho_exact"])
        with mpmath.workdps(60):
            ref = mpmath.mpf(rho.numerator) / rho.denominator
            ref = ref + 2 * mpmath.sqrt(ref * mpmath.log(mpmath.mpf(10) ** 10))
            ref_text = mpmath.nstr(ref, 40)
        got = Fraction(r["eps_bureau"])
        assert got >= Fraction(ref_text) * (1 - Fraction(1, 10**35)), r["key"]
        assert got - Fraction(ref_text) <= Fraction(ref_text) * Fraction(1, 10**18), r["key"]


def test_exact_guarantee_is_below_the_bureaus_and_composition_is_monotone(census):
    out, _ = census
    rows = _by_key(out)
    for r in rows.values():
        assert Fraction(r["eps_exact_upper"]) < Fraction(r["eps_cks"]) < Fraction(r["eps_bureau"]), r["key"]
        assert Fraction(r["delta_at_eps_bureau_upper"]) < Fraction("1e-10"), r["key"]
    for run, members in (("us", ("pl94-persons-2020", "pl94-units-2020", "dhc-units-2020", "safetab-p-2020-us",
                                 "safetab-h-2020-us", "phsafe-2020-us")),
                         ("pr", ("dhc-persons-2020-pr", "dhc-units-2020-pr", "safetab-p-2020-pr", "safetab-h-2020-pr",
                                 "phsafe-2020-pr"))):
        port = rows[f"portfolio-{run}"]
        # the portfolio releases every member's output: it is no more private than any member
        assert all(Fraction(port["eps_exact_upper"]) >= Fraction(rows[m]["eps_exact_lower"]) for m in members)
        assert Fraction(port["configured_rho_exact"]) == sum(Fraction(rows[m]["configured_rho_exact"])
                                                             for m in members) + (
            Fraction(rows["dhc-persons-2020"]["configured_rho_exact"]) if run == "us" else 0)
    # the recorded values (allocations/README.md, README: the configuration's decimals, which the production
    # floats' brackets contain)
    for key, ref in (("phsafe-2020-us", "10.2302106817"), ("safetab-h-2020-pr", "23.8284086366"),
                     ("portfolio-pr", "61.8229456694")):
        r = rows[key]
        assert Fraction(r["eps_exact_lower"]) - Fraction(1, 10**10) <= Fraction(ref) <= Fraction(
            r["eps_exact_upper"]) + Fraction(1, 10**10), key


def test_the_dhc_row_is_the_maximum_of_the_sweeps_pair_files(census):
    from exactdp.studies.census2020 import TARGET_DELTA, _sweep_row

    out, _ = census
    sweep = out / "dhc-persons"
    uppers, lowers = [], []
    for pair in PAIRS.split(","):
        i, j = pair.split("-")
        with open(sweep / "pairs" / f"pair_{i}_{j}.csv", encoding="utf-8", newline="") as fh:
            r = next(x for x in csv.DictReader(fh) if Fraction(x["delta_target"]) == TARGET_DELTA)
        uppers.append(Fraction(r["eps_upper"]))
        lowers.append(Fraction(r["eps_lower"]))
    row = _by_key(out)["dhc-persons-2020"]
    assert Fraction(row["eps_exact_upper"]) == max(uppers) and Fraction(row["eps_exact_lower"]) == max(lowers)
    reused, _manifest = _sweep_row(sweep, TARGET_DELTA)  # what --dhc-sweep reads
    assert reused.eps_upper == row["eps_exact_upper"] and not reused.complete
    assert (sweep / "report.html").is_file()


def test_a_finished_sweep_is_reused(census, monkeypatch, tmp_path):
    import exactdp.studies.census2020 as job

    out, _ = census
    monkeypatch.setattr(job, "PLAN", tuple(p for p in job.PLAN if p[3] == "sweep"))  # only the DHC persons row
    res = job.census_2020(tmp_path / "o", dhc_sweep=out / "dhc-persons")
    (row,) = res.rows
    assert row.eps_upper == _by_key(out)["dhc-persons-2020"]["eps_exact_upper"] and res.dhc_sweep == out / "dhc-persons"
    assert res.dhc_pairs == ("6-6", "13-13") and res.dhc_pair_13 is not None
    assert not (tmp_path / "o").exists()  # nothing run, nothing written


def test_a_second_run_into_the_folder_reuses_its_sweep(census):
    from exactdp.census.allocations import parse_pair_spec
    from exactdp.studies.census2020 import _run_sweep

    out, _ = census
    before = (out / "dhc-persons" / "summary.csv").read_bytes()
    assert _run_sweep(out, parse_pair_spec(PAIRS, 43), 1, True) == out / "dhc-persons"
    assert (out / "dhc-persons" / "summary.csv").read_bytes() == before


def _page_table(page: str, anchor: str) -> list[list[str]]:
    sec = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S).group(1)
    return [[html.unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", tr)]
            for tr in re.findall(r"<tr>(.*?)</tr>", sec)]


def test_every_cited_number_is_the_csv_upper_bound_rounded_up(census):
    out, _ = census
    page = (out / "report.html").read_text(encoding="utf-8")
    table = _page_table(page, "products")
    head, body = table[0], table[1:]
    rows = _rows(out)
    assert len(body) == len(rows)
    cite, bureau, delta = (next(k for k, h in enumerate(head) if h.startswith(p)) for p in
                           ("exact ε(1e-10) to cite", "the Bureau's ε", "exact δ at the Bureau's ε"))
    for cells, r in zip(body, rows):
        assert cells[cite] == round_up(r["eps_exact_upper"]) == r["eps_cite"]
        assert cells[bureau] == round_up(r["eps_bureau"])
        assert cells[delta] == round_up(r["delta_at_eps_bureau_upper"])
    us, pr = _by_key(out)["portfolio-us"], _by_key(out)["portfolio-pr"]
    headline = _page_table(page, "headline")
    assert headline[1][1] == f"ε ≤ {us['eps_cite']}" and headline[2][1] == f"ε ≤ {pr['eps_cite']}"
    assert f"ε = {us['eps_cite']} at δ = 1e-10" in html.unescape(page)
    # a partial DHC sweep is said at the top, in its headline and in its row
    assert 'class="note">PARTIAL RESULT' in page and "not the guarantee" in headline[3][0]
    assert any("PARTIAL" in c[0] for c in body)


def test_the_column_dictionary_documents_the_folder(census):
    out, _ = census
    entries = column_dictionary(out)
    assert [e.name for e in entries] == ["census_2020.csv"]  # the sweep's subfolder has its own page
    assert all(m != UNDOCUMENTED for e in entries for _, m in e.columns) and entries[0].about != UNDOCUMENTED


@pytest.mark.parametrize("argv, field", [
    (["--dhc-pairs", "44-44"], "--dhc-pairs"),
    (["--dhc-sweep", "no-such-folder"], "--dhc-sweep"),
    (["--dhc-sweep", ".", "--dhc-pairs", "13-13"], "--dhc-pairs"),
    (["--jobs", "0"], "--jobs"),
])
def test_bad_input_is_refused_before_any_work(argv, field, tmp_path, capsys):
    assert main(["census-2020", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err
    assert not (tmp_path / "o").exists()


def test_the_page_in_a_real_browser(census, tmp_path):
    out, _ = census
    driver, profile = open_browser()
    try:
        driver.get((out / "report.html").as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        images = driver.execute_script(
            "return Array.from(document.querySelectorAll('figure img')).map(i => [i.complete, i.naturalWidth, "
            "i.getBoundingClientRect().width])")
        assert len(images) == 1 and all(done and w > 300 and shown > 300 for done, w, shown in images), images
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        text = {s: driver.execute_script(f"return document.querySelector('#{s}').innerText")
                for s in ("headline", "products", "assumptions", "meaning", "provenance")}
        assert "number to cite" in text["headline"] and "PARTIAL" in text["headline"]
        assert "What this guarantee means" in text["meaning"] and "best attacker" in text["meaning"]
        for words in ("13-13", "PHSafe's worst neighbour", "SafeTab's adaptivity"):
            assert words in text["assumptions"], words
        assert "DAS_2020_DDHCA_Production_Code" in text["provenance"]
        # the table wraps inside the page: no horizontal scrolling at 1200 px
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert console_problems(driver) == []
        shot = tmp_path / "census.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        driver.set_window_size(800, 1000)  # A4 width: no table runs off the page or scrolls in its box
        driver.refresh()
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert driver.execute_script("return Array.from(document.querySelectorAll('.scroll')).filter(e => "
                                     "e.scrollWidth > e.clientWidth + 1).length") == 0
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_the_readme_products_table_is_what_the_job_prints(census):
    """Every row of the README's products table (configured ρ, both published-style ε, the exact ε
    and δ at the Bureau's ε) against this run's CSV: a number in the README cannot drift from
    what the command prints.  Rows are matched by their configured ρ; the β and seconds columns
    come from `exactdp product` runs (β) and timings, not from this job."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    head = "| product | configured ρ | ε Bun–Steinke | ε CKS | exact ε | exact δ at ε Bun–Steinke |"
    assert head in readme, "the README's products table moved: update this test"
    lines = readme[readme.index(head):].splitlines()[2:]
    lines = lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    table = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    rows = [r for r in _rows(census[0]) if r["key"] != "dhc-persons-2020"]
    assert len(table) == 8

    def shown(said: str, got: str) -> bool:  # ``said`` is ``got`` to the digits shown
        return abs(Fraction(said) - Fraction(got)) <= Fraction(1, 2 * 10 ** len(said.split(".")[1]))

    for name, rho, bs, cks, exact, delta, *_ in table:
        (r,) = [r for r in rows if shown(rho, r["configured_rho"])] or [None]
        assert r is not None, (name, rho)
        for said, got in ((bs, r["eps_bureau"]), (cks, r["eps_cks"])):
            assert shown(said, got), (name, said, got)
        lo, hi = Fraction(r["eps_exact_lower"]), Fraction(r["eps_exact_upper"])
        assert lo - Fraction(1, 10**10) <= Fraction(exact) <= hi + Fraction(1, 10**10), (name, exact, lo, hi)
        mant = delta.split("e")[0]
        dl, dh = Fraction(r["delta_at_eps_bureau_lower"]), Fraction(r["delta_at_eps_bureau_upper"])
        digits = len(mant.split(".")[1]) if "." in mant else 0
        ulp = Fraction(delta.replace(mant, "1")) / 10**digits
        assert dl - ulp / 2 <= Fraction(delta) <= dh + ulp / 2, (name, delta, dl, dh)
