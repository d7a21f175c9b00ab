"""The README and the documentation's examples run as written, on a fresh clone.

* every ``exactdp ...`` line of the README's code blocks runs (from a folder in which
  ``docs/`` is the clone's, as the README's relative paths expect) and exits 0 — except
  the few listed in :data:`TOO_LONG_FOR_CI` with the reason and the test that covers them,
  so a command added to the README is run unless someone says why not;
* the README's Python blocks run as scripts;
* ``docs/examples/*.py`` run, ``docs/examples/*.toml`` are read by the CLI;
* ``CITATION.cff``, ``LICENSE`` and ``pyproject.toml`` agree.

The ``>>>`` examples of ``docs/*.rst`` run in CI's doctest build (``.ci/run``).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import exactdp

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")

#: README commands not run here: (prefix of the command, why, where it is tested)
TOO_LONG_FOR_CI = {
    "exactdp sweep": "the main job (946 pairs, ~25 s on 2 idle cores, minutes in a loaded CI); "
                     "tests/test_sweep_run.py runs sweeps",
    "exactdp sweep --backend ray": "starts a ray cluster; tests/test_sweep_ray.py runs the ray backend",
    "exactdp tune": "tunes the 946-pair DHC file (minutes); tests/test_tune_run.py runs the command on toy "
                    "allocations",
    "exactdp census-2020": "the 946-pair DHC sweep and every 2020 product (~150 CPU-seconds); "
                           "tests/test_census2020.py runs the command with a partial --dhc-pairs",
}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _commands() -> list[str]:
    out = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.split(" #")[0].strip()
                if part.startswith("exactdp "):
                    out.append(part)
    return out


def _command_of(line: str) -> str | None:
    """The README command a code line runs (as :func:`_commands` lists it), or None."""
    found = None
    for part in line.split("&&"):
        part = part.split(" #")[0].strip()
        if part.startswith("exactdp "):
            found = part
    return found


def _expected() -> dict[str, list[str]]:
    """README command → its ``# → ...`` lines: what the README says it prints."""
    out: dict[str, list[str]] = {}
    for block in _blocks("bash"):
        last = None
        for line in block.splitlines():
            text = line.strip()
            if text.startswith("# →"):
                assert last is not None, f"a '# →' line follows no command: {text}"
                out.setdefault(last, []).append(text[len("# →"):].strip())
            else:
                last = _command_of(text)
    return out


def _significant(text: str) -> int:
    return len(re.sub(r"[eE].*$", "", text).replace(".", "").replace("-", "").lstrip("0"))


def check_printed(said: str, stdout: str) -> None:
    """Every ``"key": "value"`` of a README ``# →`` line against the command's JSON output
    (its first point, else the envelope): ``"1.78319933513128...e-12"`` is a prefix and a
    suffix of the printed number, a number without ``...`` is the printed one rounded to
    the digits shown, ``"<lo>"`` is a placeholder, other text is equal; ``~1e-N wide``
    is the enclosure's width to the nearest power of ten."""
    from decimal import Decimal

    from exactdp.report.numbers import display

    env = json.loads(stdout)
    point = env["points"][0]
    pairs = re.findall(r'"(\w+)": "([^"]*)"', said)
    assert pairs or "wide" in said, said
    for key, value in pairs:
        got = point.get(key, env.get(key))
        assert got is not None, (key, said)
        if value.startswith("<"):
            continue
        if "..." in value:
            head, tail = value.split("...")
            assert got.startswith(head) and got.endswith(tail), (key, value, got)
        elif re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", value):
            assert display(got, _significant(value)) == value, (key, value, got)
        else:
            assert got == value, (key, value, got)
    wide = re.search(r"~1e-([0-9]+) wide", said)
    if wide:
        lo, hi = (Decimal(x) for x in point["enclosure"])
        assert round(-(hi - lo).log10()) == int(wide.group(1)), (said, hi - lo)


def _skipped(cmd: str) -> str | None:
    words = shlex.split(cmd)
    if words == ["exactdp", "sweep"] or words[:3] == ["exactdp", "sweep", "--backend"] and "ray" in words:
        return TOO_LONG_FOR_CI["exactdp sweep" if len(words) == 2 else "exactdp sweep --backend ray"]
    if words[:2] == ["exactdp", "tune"] and "dhc-persons-2020" in words:
        return TOO_LONG_FOR_CI["exactdp tune"]
    if words[:2] == ["exactdp", "census-2020"] and "--dhc-pairs" not in words:
        return TOO_LONG_FOR_CI["exactdp census-2020"]
    return None


@pytest.fixture(scope="module")
def clone_dir(tmp_path_factory) -> Path:
    """A working folder in which the README's relative paths (docs/examples/...) resolve."""
    work = tmp_path_factory.mktemp("readme")
    (work / "docs").symlink_to(REPO / "docs", target_is_directory=True)
    return work


def test_the_readme_states_printed_numbers_only_for_commands_run_here():
    expected = _expected()
    assert len(expected) >= 2 and all(c in _commands() and not _skipped(c) for c in expected), expected
    assert all("--json" in c for c in expected)  # the checks read the JSON envelope


def test_the_readme_has_commands_and_says_why_it_skips_any():
    cmds = _commands()
    run = [c for c in cmds if not _skipped(c)]
    assert len(run) >= 10, cmds
    assert all(_skipped(c) in TOO_LONG_FOR_CI.values() for c in cmds if c not in run)


@pytest.mark.parametrize("cmd", [c for c in _commands() if not _skipped(c)])
def test_readme_command_runs_as_written(cmd, clone_dir):
    argv = [sys.executable, "-m", "exactdp", *shlex.split(cmd)[1:]]
    run = subprocess.run(argv, cwd=clone_dir, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"{cmd}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    for said in _expected().get(cmd, ()):  # what the README says it prints
        check_printed(said, run.stdout)
    if cmd.startswith("exactdp sweep"):
        out = clone_dir / shlex.split(cmd)[shlex.split(cmd).index("--out") + 1]
        assert (out / "report.html").is_file()


def test_readme_python_blocks_run(clone_dir):
    blocks = _blocks("python")
    assert len(blocks) >= 2
    for block in blocks:
        run = subprocess.run([sys.executable, "-c", block], cwd=clone_dir, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{block}\n{run.stderr[-3000:]}"


def test_docs_examples_run(clone_dir):
    scripts = sorted((REPO / "docs" / "examples").glob("*.py"))
    assert scripts
    for script in scripts:
        run = subprocess.run([sys.executable, str(script)], cwd=clone_dir, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{script}\n{run.stderr[-3000:]}"
    for design in sorted((REPO / "docs" / "examples").glob("*.toml")):
        run = subprocess.run([sys.executable, "-m", "exactdp", "delta", "--mechanisms", str(design), "--eps", "1",
                              "--json"], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr


def test_license_citation_and_version_agree():
    assert "license = \"MIT\"" in (REPO / "pyproject.toml").read_text()
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    cff = (REPO / "CITATION.cff").read_text()
    assert re.search(r'(?m)^version: "([^"]+)"', cff).group(1) == exactdp.__version__
    assert re.search(r"(?m)^license: (\S+)", cff).group(1) == "MIT"
    assert f"## {exactdp.__version__}" in (REPO / "CHANGELOG.md").read_text()
