"""Package hygiene: ``pip install .`` builds a wheel that passes ``twine check --strict``,
ships its data (allocations, kernels, py.typed), and carries the one version."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

import exactdp

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, text=True, timeout=600)
    (whl,) = out.glob("exactdp-*.whl")
    return whl


def test_wheel_passes_twine_check(wheel):
    pytest.importorskip("twine")
    run = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout + run.stderr


def test_wheel_contents_and_version(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for need in ("exactdp/py.typed", "exactdp/interop/dp_accounting.py", "exactdp/interop/opendp.py",
                 "exactdp/allocation_data/dhc-persons-2020.toml", "exactdp/allocation_data/README.md",
                 "exactdp/kernels/jit.py", "exactdp/runs/backends.py", "exactdp/runs/files.py"):
        assert need in names, need
    assert not any(n.startswith(("tests/", "docs/", "bench/")) for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert f"\nVersion: {exactdp.__version__}\n" in text
    assert exactdp.__version__ == version("exactdp")
    assert "Provides-Extra: dp-accounting" in text and "Provides-Extra: docs" in text


def test_the_version_is_written_once():
    """Only pyproject.toml states the version; the package reads it from the metadata."""
    assert len(re.findall(r'(?m)^version\s*=\s*"', (REPO / "pyproject.toml").read_text())) == 1
    writes = [p for p in (REPO / "exactdp").rglob("*.py")
              if re.search(r'(?m)^\s*__version__\s*=\s*["\']\d+\.\d', p.read_text(encoding="utf-8"))]
    assert writes == []


def test_every_package_directory_is_in_the_wheel(wheel):
    """pyproject lists packages explicitly: a new package folder left out of the list would be
    missing from a non-editable install (every module of every folder must ship)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for root, prefix in ((REPO / "exactdp", "exactdp"), (REPO / "kernels", "exactdp/kernels")):
        for module in root.rglob("*.py"):
            if "__pycache__" in module.parts:
                continue
            shipped = f"{prefix}/{module.relative_to(root).as_posix()}"
            if shipped not in names:
                missing.append(shipped)
    assert not missing, f"not in the wheel (add the package to pyproject's packages): {missing}"
