"""The built documentation renders its formulas offline, in a real browser.

Runs on a built HTML tree named by ``EXACTDP_DOCS_HTML`` (``.ci/run`` builds the docs
after the test suite, then runs this file on them); without it the test is skipped,
saying so.  Checks, with the network refused (``tests/browser.py``): MathJax loads from
the site itself and typesets every formula of the method page, nothing is fetched from
another host, and the console shows no error.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from browser import console_problems, open_browser

HTML = os.environ.get("EXACTDP_DOCS_HTML")


@pytest.fixture(scope="module")
def site() -> Path:
    if not HTML:
        pytest.skip("EXACTDP_DOCS_HTML is not set: .ci/run sets it after building the documentation")
    path = Path(HTML)
    assert (path / "index.html").is_file(), f"no built documentation in {path}"
    return path


@pytest.mark.parametrize("page, min_formulas", [("method.html", 40), ("certificates.html", 40)])
def test_formulas_render_offline(site, page, min_formulas):
    driver, profile = open_browser()
    try:
        driver.get((site / page).as_uri())
        driver.set_script_timeout(60)
        # wait for MathJax 3 to finish typesetting (its startup promise)
        done = driver.execute_async_script(
            "const cb = arguments[arguments.length - 1];"
            "const wait = () => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
            "  ? MathJax.startup.promise.then(() => cb(true), () => cb(false)) : setTimeout(wait, 100);"
            "wait();")
        assert done, "MathJax did not load or failed"
        rendered = driver.execute_script("return document.querySelectorAll('mjx-container').length")
        raw = driver.execute_script("return document.querySelectorAll('.math:not(:has(mjx-container))').length")
        assert rendered >= min_formulas and raw == 0, (rendered, raw)
        hosts = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('file:'))")
        assert hosts == []
        assert console_problems(driver) == []
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
