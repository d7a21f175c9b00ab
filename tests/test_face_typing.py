"""The package face as type checkers and users see it.

* the names a type checker sees (``if TYPE_CHECKING:`` in ``exactdp/__init__.py``) are
  exactly the lazy face's, imported from the same modules;
* ``mypy --strict`` passes on a user's script (``docs/examples/typed_script.py``), and
  mypy infers a real type — never ``Any`` — for every name of the face;
* results' reprs lead with ``value``, the number to cite; the deprecated aliases are gone.

mypy reads exactdp from the source tree (``MYPYPATH``) with ``--follow-imports=silent``:
as for an installed package with ``py.typed``, only the user's file is checked, exactdp's
own modules supply the types.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import exactdp

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "docs" / "examples" / "typed_script.py"


def _type_checking_imports() -> dict:
    tree = ast.parse((REPO / "exactdp" / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                assert a.asname == a.name, f"{a.name}: re-export as itself (PEP 484: 'import X as X')"
                seen[a.name] = node.module
        elif isinstance(node, ast.AnnAssign):
            seen[node.target.id] = "annotation"
    return seen


def test_type_checkers_see_exactly_the_lazy_face():
    seen = _type_checking_imports()
    assert seen.pop("__version__") == "annotation"
    assert seen == exactdp._FACE


def test_deprecated_and_internal_names_are_off_the_face():
    for name in ("CoarsenedAccountant", "DeltaBracket", "LatticeTooLarge"):
        assert name not in exactdp.__all__ and name not in dir(exactdp)
        with pytest.raises(AttributeError):
            getattr(exactdp, name)


def _mypy(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    env = {**os.environ, "MYPYPATH": str(REPO)}
    # run in an empty folder, so that no project configuration changes the check
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                           "--show-error-codes", *map(str, files)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_mypy_strict_passes_on_a_user_script_and_sees_real_types(tmp_path):
    probe = tmp_path / "probe.py"
    names = [n for n in exactdp.__all__]
    probe.write_text("import exactdp\n" + "".join(f"reveal_type(exactdp.{n})\n" for n in names))
    run = _mypy(tmp_path, SCRIPT, probe)
    errors = [ln for ln in run.stdout.splitlines() if ": error:" in ln]
    assert errors == [], run.stdout + run.stderr
    revealed = dict(re.findall(r"probe\.py:(\d+): note: Revealed type is \"(.*)\"", run.stdout))
    assert len(revealed) == len(names), run.stdout
    untyped = [(names[int(line) - 2], t) for line, t in revealed.items() if t == "Any" or t.startswith("Any")]
    assert untyped == [], untyped
    assert "exactdp.accounting.accountant.ExactAccountant" in run.stdout


def test_mypy_catches_a_wrong_use(tmp_path):
    """The check is not vacuous: a misuse of a face name is an error."""
    bad = tmp_path / "bad.py"
    bad.write_text("from exactdp import Composition\nn: str = Composition.from_sigma2(['1']).size\n")
    run = _mypy(tmp_path, bad)
    assert run.returncode != 0 and "Incompatible types in assignment" in run.stdout, run.stdout


def test_the_user_script_runs():
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "δ(ε = 1)" in run.stdout and "refused, as it should be" in run.stdout


def test_reprs_lead_with_the_number_to_cite():
    acc = exactdp.ExactAccountant(exactdp.Composition.from_sigma2(["10000/11"] * 20))
    for point in (acc.delta(["1"])[0], acc.epsilon(["1e-10"])[0], acc.tradeoff(["0.05"])[0]):
        text = repr(point)
        assert text.startswith(f"{type(point).__name__}(value={point.value!r}, "), text
    d = acc.delta(["1"])[0]
    assert f"estimate={d.estimate!r}" in repr(d) and f"error_bound={d.error_bound!r}" in repr(d)
