"""Debian's headless Chromium for tests, offline (shared by the report and docs tests).

:func:`open_browser` starts Chromium through chromedriver with the machine's flags for a
headless root session and a proxy that refuses every connection, so a page passes only
if it needs no network.  Without ``/usr/bin/chromium`` and ``/usr/bin/chromedriver``
(``.ci/run`` installs them) the test fails under CI and is skipped elsewhere, saying so.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def open_browser():
    """``(driver, profile folder)``; the caller quits the driver and removes the folder."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        msg = f"{CHROMIUM} and {CHROMEDRIVER} are needed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="exactdp-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9", "--window-size=1200,1000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts), profile


def console_problems(driver) -> list:
    """The console's errors and warnings since the last call."""
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
