"""report.html of the sweep, release and calibrate folders: numbers, column dictionary,
self-containment — and the page in a real browser (Debian's headless Chromium, offline).

The browser test (``tests/browser.py``) needs Debian's ``chromium`` and ``chromium-driver``
(``.ci/run`` installs them); without them it fails under CI and skips, saying so, elsewhere.
"""

from __future__ import annotations

import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from browser import console_problems, open_browser
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.report import (
    column_dictionary,
    round_down,
    round_up,
    write_calibration_report,
    write_release_report,
    write_sweep_report,
)
from exactdp.report.columns import UNDOCUMENTED
from exactdp.sweep.driver import run_sweep
from exactdp.sweep.pair import SweepSettings

FAST = SweepSettings(deltas=("1e-2", "1e-10"), tradeoff_half=30)


# ----------------------------------------------------------------------------- folders
@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "out"
    run_sweep("dhc-persons-2020", out, pairs="13-13,6-6", settings=FAST, jobs=1, plots=True,
              finish=write_sweep_report)
    return out


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    from exactdp.census.allocations import load_allocation
    from exactdp.census.release import release_rows

    out = tmp_path_factory.mktemp("release") / "out"
    alloc, pl94 = load_allocation("dhc-persons-2020"), load_allocation("pl94-persons-2020")
    write_release_report(out, release_rows(alloc, [(13, 13)], ["1e-10"]), alloc, pl94)
    return out


@pytest.fixture(scope="module")
def calibration_dir(tmp_path_factory) -> Path:
    """Two target δ with the σ² to deploy (the reduction curve and the noise figure)."""
    import exactdp
    from exactdp.mechanisms import Composition

    out = tmp_path_factory.mktemp("calibration") / "out"
    comp = Composition.from_sigma2(["10000/11"] * 20)
    cals = [exactdp.calibrate(comp, "1e-10"), exactdp.calibrate(comp, "1e-3")]
    write_calibration_report(out, [c.scale for c in cals], design="20 × σ² = 10000/11", deploy=cals)
    return out


@pytest.fixture(scope="module")
def calibration_one_dir(tmp_path_factory) -> Path:
    """exactdp calibrate --out with one target δ on an allocation pair (the figure must still say something)."""
    from exactdp.cli import main

    out = tmp_path_factory.mktemp("calibration_one") / "out"
    assert main(["calibrate", "--allocation", "dhc-persons-2020", "--pair", "13-13", "--delta", "1e-10", "--width",
                 "1e-4", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def tune_dir(tmp_path_factory) -> Path:
    """exactdp tune on a toy allocation, with its profiles (every figure of a tune page)."""
    from tune_toys import TWO_LEVELS

    from exactdp.cli import main

    base = tmp_path_factory.mktemp("tune")
    (base / "toy.toml").write_text(TWO_LEVELS)
    out = base / "out"
    assert main(["tune", "--allocation", str(base / "toy.toml"), "--out", str(out), "--jobs", "1", "--delta", "1e-6",
                 "--vary", "level", "--bounds", "1/3:3", "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def product_dir(tmp_path_factory) -> Path:
    """exactdp product --out with two target δ and an α (the ε-against-δ figure)."""
    from exactdp.cli import main

    out = tmp_path_factory.mktemp("product") / "out"
    assert main(["product", "phsafe-2020-us", "--delta", "1e-10", "--delta", "1e-5", "--alpha", "0.05", "--quiet",
                 "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def portfolio_dir(tmp_path_factory) -> Path:
    """exactdp portfolio --out with one target δ (the figure must still say something)."""
    from exactdp.cli import main

    out = tmp_path_factory.mktemp("portfolio") / "out"
    assert main(["portfolio", "--member", "dhc-units-2020", "--member", "safetab-h-2020-us", "--quiet",
                 "--out", str(out)]) == 0
    return out


def _csv(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:]]


def _cited(page: str, symbol: str) -> list[Fraction]:
    """The numbers of the headline's "number to cite" column that read ``symbol ≤ x``."""
    return [Fraction(x) for x in re.findall(rf"<td>{symbol} ≤ ([0-9.e+-]+)</td>", page)]


# ----------------------------------------------------------------------------- numbers
@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**30), max_value=Fraction(10**12)), st.integers(1, 12))
def test_cited_numbers_are_rounded_to_the_safe_side(x, digits):
    up, down = Fraction(round_up(x, digits)), Fraction(round_down(x, digits))
    assert down <= x <= up
    # a neighbour of the right number of digits: the gap is at most one unit of the last digit
    exponent = len(str(int(up))) - 1 if up >= 1 else -len(str(int(1 / up)))
    assert up - down <= Fraction(10) ** (exponent - digits + 2)
    for text in (round_up(x, digits), round_down(x, digits)):
        mantissa = re.sub(r"e.*$", "", text).replace(".", "").lstrip("0")
        assert len(mantissa.rstrip("0")) <= digits <= len(mantissa), text


def test_sweep_headline_is_the_summary_rounded_up(sweep_dir):
    page = (sweep_dir / "report.html").read_text()
    row = next(r for r in _csv(sweep_dir / "summary.csv") if r["delta_target"] == "1e-10")
    eps, delta = _cited(page, "ε"), _cited(page, "δ")
    upper_eps, upper_delta = Fraction(row["eps_overall_upper"]), Fraction(row["delta_overall_upper"])
    assert eps and upper_eps <= eps[0] <= upper_eps * (1 + Fraction(1, 10**5))
    assert delta and upper_delta <= delta[0] <= upper_delta * (1 + Fraction(1, 10**5))
    # two of the 946 pairs: the page must not let it pass for the release's guarantee
    assert "covers 2 of the 946 neighbour pairs" in page and "lower bound on the release" in page


def test_sweep_report_says_what_the_guarantee_means(sweep_dir):
    page = (sweep_dir / "report.html").read_text()
    assert "What this guarantee means" in page and "likelihood ratio" in page
    # the best attacker with prior 1/2, from the pairs' certified trade-off curves: far below
    # certainty (the μ-GDP curve of the same ρ gives Φ(μ/2) ≈ 94 %) though e^ε is ~4e10
    row = re.search(r"<tr><td>1/2</td><td>50.00 %</td><td>([0-9.]+) %</td><td>([0-9.]+) %</td>", page)
    assert row, page[page.find("What this guarantee means"):][:3000]
    exact_curve, from_eps_delta = (Fraction(g) for g in row.groups())
    assert 90 < exact_curve < 97 and exact_curve < from_eps_delta <= 100


def test_release_and_calibration_headlines(release_dir, calibration_dir):
    for folder in (release_dir, calibration_dir):
        assert 'id="meaning"' in (folder / "report.html").read_text()
    rel = _csv(release_dir / "release_brackets.csv")[0]
    page = (release_dir / "report.html").read_text()
    cited = _cited(page, "ε")
    assert cited and Fraction(rel["eps_exact_upper"]) <= cited[0] < Fraction(rel["eps_bureau"])
    cal = _csv(calibration_dir / "calibration.csv")[0]
    page = (calibration_dir / "report.html").read_text()
    pct = Fraction(re.search(r"<td>([0-9.]+) %</td>", page).group(1))
    assert 0 < pct <= 100 * Fraction(cal["variance_reduction_lower"])  # achievable, rounded down


def test_product_and_portfolio_headlines_are_the_csv_rounded_up(product_dir, portfolio_dir, capsys):
    for folder, n_rows in ((product_dir, 2), (portfolio_dir, 1)):
        rows = _csv(folder / "family.csv")
        assert len(rows) == n_rows
        row = next(r for r in rows if r["delta_target"] == "1e-10")
        page = (folder / "report.html").read_text()
        assert _cited(page, "ε")[0] == Fraction(round_up(row["eps_exact_upper"]))
        assert _cited(page, "δ")[0] == Fraction(round_up(row["delta_at_eps_bureau_upper"]))
        assert Fraction(row["eps_exact_lower"]) <= Fraction(row["eps_exact_upper"]) < Fraction(row["eps_bureau"])
        assert "What this guarantee means" in page
        assert f"ε = {round_up(row['eps_exact_upper'])} at δ = 1e-10" in page  # the citation sentence
    trade = _csv(product_dir / "tradeoff.csv")
    page = (product_dir / "report.html").read_text()
    assert trade and f"β ≥ {round_down(trade[0]['beta_lower'])}" in page
    assert len(_csv(product_dir / "cases.csv")) == 2 and len(_csv(portfolio_dir / "cases.csv")) == 1
    assert "safetab-h-2020-us" in (portfolio_dir / "report.html").read_text()  # the members' provenance


def test_product_progress_is_a_bar_not_a_line_per_case(tmp_path, capsys):
    from exactdp.cli import main

    assert main(["product", "safetab-p-2020-pr", "--cases", "1,2,3,4,5,6,7,8,9,10,11,12", "--out",
                 str(tmp_path / "p")]) == 0
    err = capsys.readouterr().err.splitlines()
    # not a terminal: one line per tenth of the cases (as the sweep), never one per case with its label
    assert 1 <= len(err) <= 12 and all(line.startswith("exactdp product: ") for line in err), err
    assert err[-1].startswith("exactdp product: 12/12 done")


def test_calibration_axis_names_the_target_epsilon():
    from types import SimpleNamespace

    from exactdp.report.jobs import _epsilon_label

    given = [SimpleNamespace(target_epsilon=Fraction(1), target_delta=Fraction(d)) for d in ("1e-10", "1e-3")]
    label, caption = _epsilon_label(given)
    assert "Bun–Steinke" not in label and "target ε = 1" in label and "given" in caption
    default = [SimpleNamespace(target_epsilon=Fraction(e), target_delta=Fraction(d))
               for e, d in (("26.34", "1e-10"), ("14.2", "1e-3"))]
    assert "Bun–Steinke" in _epsilon_label(default)[0]
    one = [given[0]]  # one δ does not tell: the label states the ε, never a wrong origin
    assert "Bun–Steinke" not in _epsilon_label(one)[0] and "Bun–Steinke" not in _epsilon_label(one, True)[0]
    assert "Bun–Steinke" in _epsilon_label(one, False)[0]


def test_every_csv_column_is_documented(sweep_dir, release_dir, calibration_dir, product_dir, portfolio_dir, tune_dir,
                                       calibration_one_dir):
    for folder in (sweep_dir, release_dir, calibration_dir, product_dir, portfolio_dir, tune_dir, calibration_one_dir):
        entries = column_dictionary(folder)
        names = {e.name for e in entries}
        assert all(e.about != UNDOCUMENTED for e in entries), names
        bad = [(e.name, c) for e in entries for c, d in e.columns if d == UNDOCUMENTED]
        assert bad == [], bad
        page = (folder / "report.html").read_text()
        for e in entries:
            assert f"<code>{e.name}</code>" in page
    names = {e.name for e in column_dictionary(sweep_dir)}
    assert {"summary.csv", "envelope.csv", "spread_matrix.csv", "pairs/pair_I_J.csv", "pairs/pair_I_J_grid.csv",
            "pairs/pair_I_J_tradeoff.csv"} <= names


def test_pages_are_self_contained(sweep_dir, release_dir, calibration_dir, product_dir, portfolio_dir, tune_dir):
    for folder in (sweep_dir, release_dir, calibration_dir, product_dir, portfolio_dir, tune_dir):
        page = (folder / "report.html").read_text()
        assert "<script" not in page and "<link" not in page and "@import" not in page
        assert not re.findall(r'(?:src|href)="(?!data:|#)', page)
        assert "Content-Security-Policy" in page


# ----------------------------------------------------------------------------- the browser
@pytest.fixture(scope="module")
def browser():
    driver, profile = open_browser()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _ink(png: bytes) -> float:
    """The share of a figure's pixels that are not (near) white."""
    import io

    from matplotlib.image import imread

    img = imread(io.BytesIO(png), format="png")[..., :3]
    return float((img.min(axis=2) < 0.9).mean())


#: (kind, figures); the census-2020 page has its own browser test (tests/test_census2020.py)
_KINDS = [("sweep", 3), ("release", 1), ("calibration", 2), ("calibration_one", 1), ("product", 1), ("portfolio", 1),
          ("tune", 3)]


@pytest.mark.parametrize("kind, n_figures", _KINDS)
def test_report_in_a_real_browser(kind, n_figures, browser, request, tmp_path):
    import base64

    folder = request.getfixturevalue(f"{kind}_dir")
    browser.get_log("browser")  # drop what an earlier page logged
    browser.get((folder / "report.html").as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => [i.complete, i.naturalWidth, "
        "i.naturalHeight, i.getBoundingClientRect().width])")
    assert len(images) == n_figures, images
    assert all(done and w > 300 and h > 200 and shown > 300 for done, w, h, shown in images), images
    captions = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure figcaption')).map(c => c.innerText)")
    assert len(captions) == n_figures and all(len(c) > 80 for c in captions)
    # every figure draws something (a curve of one point would be a lone marker on a white page)
    sources = browser.execute_script("return Array.from(document.querySelectorAll('figure img')).map(i => i.src)")
    for src in sources:
        assert _ink(base64.b64decode(src.split(",", 1)[1])) > 0.025, (kind, src[:60])  # a lone marker: ~0.018
    # nothing was fetched: every byte of the page is in the file
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    headline = browser.execute_script("return document.querySelector('#headline table').innerText")
    assert "number to cite" in headline and ("≤" in headline or "%" in headline)
    dictionary = browser.execute_script("return document.querySelectorAll('#columns h3').length")
    assert dictionary >= 1
    meaning = browser.execute_script("return document.querySelector('#meaning').innerText")
    assert "What this guarantee means" in meaning and "best attacker" in meaning and "likelihood ratio" in meaning
    if kind.startswith("calibration"):
        deploy = browser.execute_script("return document.querySelector('#deploy').innerText")
        assert "σ² to deploy" in deploy and "certified to miss" in deploy
    if kind == "tune":
        for anchor, words in (("allocation", "Σσ² tuned"), ("cells", "σ'²/σ²"), ("constraint", "Arb enclosure")):
            assert words in browser.execute_script(f"return document.querySelector('#{anchor}').innerText"), anchor
    # tables wrap: the page never scrolls sideways at 1200 px
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    assert console_problems(browser) == []
    shot = tmp_path / f"{kind}.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # ... nor at the width of an A4 page (800 px): no table runs off it or scrolls in its box
    try:
        browser.set_window_size(800, 1000)
        browser.refresh()
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        boxes = browser.execute_script("return Array.from(document.querySelectorAll('.scroll')).filter(e => "
                                       "e.scrollWidth > e.clientWidth + 1).map(e => e.parentElement.id)")
        assert boxes == [], boxes
    finally:
        browser.set_window_size(1200, 1000)


def test_tune_headline_is_the_result_rounded_up(tune_dir):
    import json

    result = json.loads((tune_dir / "result.json").read_text())
    page = (tune_dir / "report.html").read_text()
    up = Fraction(result["max_delta_after"]["upper_exact"])
    cited = _cited(page, "δ")
    assert cited and up <= cited[0] <= Fraction(result["target"]["delta"])
    assert f"δ ≤ {round_up(str(cited[0]))}" in page and "What this guarantee means" in page
    assert "(ε, δ)-differential privacy with ε = " in page  # the sentence to cite


def test_path_labels_name_the_levels_each_path_spends_at():
    from exactdp.census.allocations import builtin_allocations, load_allocation
    from exactdp.sweep.pathkey import level_letters, path_key

    for name in builtin_allocations():
        alloc = load_allocation(name)
        letters = level_letters(alloc.levels)
        assert len(set(letters)) == len(letters) == len(alloc.levels), (name, letters)
        labels, key = path_key(alloc)
        assert len(labels) == alloc.n_paths
        for k, (label, mult) in enumerate(zip(labels, alloc.paths), start=1):
            number, code = label.split()
            assert int(number) == k and len(code) == len(alloc.levels)
            assert [c != "·" for c in code] == [m != 0 for m in mult], (name, k, label)
        assert all(f"{c} = {lev}" in key for c, lev in zip(letters, alloc.levels))
    labels, _ = path_key(load_allocation("dhc-persons-2020"))
    assert labels[12] == "13 USCPTRBL" and labels[5] == " 6 US······"  # the full chain; US and State only


def test_a_complete_sweep_is_cited_as_the_release_guarantee(sweep_dir, tmp_path):
    import json

    from exactdp.report import sweep_report

    full = tmp_path / "full"
    shutil.copytree(sweep_dir, full)
    manifest = json.loads((full / "manifest.json").read_text())
    manifest["pairs"] = [f"{i}-{j}" for i in range(1, 44) for j in range(i, 44)]
    (full / "manifest.json").write_text(json.dumps(manifest))
    report = sweep_report(full)
    assert report.notes == () and "the release satisfies (ε, δ)-differential privacy" in report.citation
    assert "max over all 946 neighbour pairs" in report.headline[0].quantity


def test_release_and_calibrate_write_their_folder_from_the_cli(tmp_path, capsys):
    from exactdp.cli import main

    assert main(["calibrate", "--sigma2", "10000/11x20", "--delta", "1e-10", "--out", str(tmp_path / "cal")]) == 0
    assert main(["release", "--pairs", "13-13", "--delta", "1e-10", "--out", str(tmp_path / "rel")]) == 0
    capsys.readouterr()
    for folder, csv in (("cal", "calibration.csv"), ("rel", "release_brackets.csv")):
        assert (tmp_path / folder / "report.html").is_file() and (tmp_path / folder / csv).is_file()
        assert (tmp_path / folder / "plots").is_dir()


def test_tune_page_without_profiles_or_figures(tmp_path, capsys):
    """A uniform-objective tune with --no-profile --no-plots still writes its page: the reduction
    rounded down, the certified constraint and the meaning section from the (ε, δ) alone."""
    import json

    from tune_toys import TWO_LEVELS

    from exactdp.cli import main

    (tmp_path / "toy.toml").write_text(TWO_LEVELS)
    out = tmp_path / "out"
    assert main(["tune", "--allocation", str(tmp_path / "toy.toml"), "--out", str(out), "--jobs", "1", "--delta",
                 "1e-6", "--objective", "uniform", "--no-profile", "--no-plots", "--quiet"]) == 0
    capsys.readouterr()
    result = json.loads((out / "result.json").read_text())
    page = (out / "report.html").read_text()
    pct = Fraction(re.search(r"on every pair</td><td>([0-9.]+) %</td>", page).group(1))
    assert 0 < pct <= 100 * (1 - Fraction(result["objective"]["after_exact"]))  # rounded down
    assert "No figures were drawn" in page and 'id="constraint"' in page and 'id="meaning"' in page
    assert "best attacker, exact curve" not in page  # no profile: the (ε, δ) columns only
