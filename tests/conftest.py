"""Shared test fixtures: where the independent reference data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The ``shared/`` folder beside the checkout (override with EXACTDP_SHARED)."""
    env = os.environ.get("EXACTDP_SHARED")
    if env:
        return Path(env)
    for cand in (REPO.parent / "shared", REPO.parent.parent / "shared"):
        if cand.is_dir():
            return cand
    return REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"reference data folder {path} is missing in CI")
        pytest.skip(f"reference data folder {path} not present")
    return path


@pytest.fixture(scope="session")
def seed002(shared) -> Path:
    return shared / "seed002_data"


@pytest.fixture
def opendp():
    """OpenDP's prelude with the features exactdp's adapters need ("contrib",
    "honest-but-curious") enabled for the test, disabled after it; skipped without OpenDP."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib", "honest-but-curious")
    yield dp
    dp.disable_features("contrib", "honest-but-curious")
