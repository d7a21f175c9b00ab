"""The house rules of the package layout (README, "Layout"), checked on the source tree.

* every import (module level and inside functions) goes to the same layer or a lower one,
  and there is no import cycle among exactdp's modules;
* no module imports a private name (``_x``) from another package;
* at most 8 ``.py`` files directly in ``exactdp/``, no module over 600 lines;
* theta functions are defined in two files only: the kernel (``kernels/dgauss.py``) and
  its multiprecision twin (``exactdp/dgauss/mp.py``);
* file names under ``tests/`` and ``bench/`` name a subject, never a development branch,
  session, issue or A/B comparison (``test_acct7_…``, ``…_issue10_…``, ``…_ab.py``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: layer rank of each top-level part of exactdp (an import may only go to a rank ≤ its own)
RANK = {
    "numerics": 0, "kernels": 0, "figures": 0, "_version": 0,
    "dgauss": 1,
    "mechanisms": 2, "kinds": 2,
    "engine": 3,
    "accounting": 4,
    "conversions": 5, "certify": 5,
    "risk": 6, "countdep": 6, "census": 6,
    "calibration": 7,
    "runs": 8,
    "sweep": 9, "interop": 9,
    "report": 10,
    "tune": 11, "studies": 11,
    "cli": 12, "__main__": 12,
    "__init__": 13,
}


def _modules():
    out = {}
    for base, prefix in ((ROOT / "exactdp", "exactdp"), (ROOT / "kernels", "exactdp.kernels")):
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts]) if parts else prefix
            out[name] = path
    return out


def _imports(path: Path, name: str, is_pkg: bool):
    """(target module, imported names) for every import statement in the file."""
    tree = ast.parse(path.read_text())
    pkg = name if is_pkg else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([mod] if mod else []))
            yield mod, tuple(a.name for a in node.names)


def _graph():
    mods = _modules()
    edges = {}
    private = []
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        targets = set()
        for mod, names in _imports(path, name, is_pkg):
            if not mod.startswith("exactdp"):
                continue
            for n in names:
                sub = f"{mod}.{n}"
                if sub in mods:
                    targets.add(sub)
                elif mod in mods:
                    targets.add(mod)
                    if n.startswith("_") and not n.startswith("__") and _package(mod) != _package(name):
                        private.append(f"{name} imports {mod}.{n}")
            if not names and mod in mods:
                targets.add(mod)
        edges[name] = targets - {name}
    return mods, edges, private


def _package(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else name


def _layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_imports_go_down_the_layers_only():
    _, edges, _ = _graph()
    bad = [f"{a} → {b}" for a, bs in edges.items() for b in bs if RANK[_layer(b)] > RANK[_layer(a)]]
    assert not bad, "imports up the layers:\n" + "\n".join(sorted(bad))


def test_no_import_cycle():
    _, edges, _ = _graph()
    state: dict = {}
    cycles = []

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                cycles.append(" → ".join(stack[stack.index(m):] + [m]))
            elif m not in state:
                visit(m, stack)
        stack.pop()
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_name_imported_across_packages():
    _, _, private = _graph()
    assert not private, "\n".join(private)


def test_top_level_is_small_and_modules_are_short():
    top = sorted(p.name for p in (ROOT / "exactdp").glob("*.py"))
    assert len(top) <= 8, top
    long = [f"{p} ({n} lines)" for p in list((ROOT / "exactdp").rglob("*.py")) + list((ROOT / "kernels").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 600]
    assert not long, long


#: the only files that may define a theta function: the kernel, its mp twin, and the Arb
#: ball version of the certificate (independent of the other two by design: issue 12)
THETA_FILES = {"kernels/dgauss.py", "exactdp/dgauss/mp.py", "exactdp/certify/dgball.py"}


def test_theta_functions_live_in_the_kernel_and_its_twin_only():
    found = {}
    for path in list((ROOT / "exactdp").rglob("*.py")) + list((ROOT / "kernels").rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [n.name for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "theta" in n.name.lower()]
        if names:
            found[path.relative_to(ROOT).as_posix()] = names
    stray = {f: n for f, n in found.items() if f not in THETA_FILES}
    assert not stray, f"theta functions outside {sorted(THETA_FILES)}: {stray}"
    assert set(found) == THETA_FILES, found  # the check itself still sees every file


#: a file-name word that names history, not a subject: an issue or session number, a
#: branch-like word with a one-digit suffix (acct7, kern8, txt7), an A/B comparison
_HISTORY_WORD = re.compile(r"^(issue|session|sess|round)\d*$|^[a-z]+\d$|^ab$")


def test_test_and_bench_files_are_named_by_subject():
    names = [p for d in ("tests", "bench") for p in (ROOT / d).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    bad = [p.relative_to(ROOT).as_posix() for p in names
           if any(_HISTORY_WORD.match(w) for w in re.split(r"[_\-.]", p.stem.lower()))]
    assert not bad, bad
    assert len(names) > 40  # the check sees the files


#: the float64 unit written out: 2⁻⁵² / 2⁻⁵³ as powers or decimals, numpy's eps, or a
#: module-level name bound to a number that calls itself the unit
_FLOAT_UNIT = re.compile(r"2(\.0)?\s*\*\*\s*\(?-5[23]\b|2\.220446049250313e-16|1\.1102230246251565e-16"
                         r"|finfo\([^)]*\)\.eps|float_info\.epsilon")
_UNIT_NAME = re.compile(r"^\s*_?(EPS64|EPS_64|UNIT_ROUNDOFF|U64)\s*(:[^=]*)?=\s*[-+0-9.(]", re.M)


def test_float64_unit_is_defined_once():
    """EPS64 = 2⁻⁵² and UNIT_ROUNDOFF = 2⁻⁵³ live in ``kernels/units.py``; every kernel and
    Python module imports them from there (issue 33: the unit was 2⁻⁵² in one kernel and
    2⁻⁵³ in another under one name)."""
    units = ROOT / "kernels" / "units.py"
    bad = []
    for path in list((ROOT / "exactdp").rglob("*.py")) + list((ROOT / "kernels").rglob("*.py")):
        if path == units:
            continue
        text = path.read_text()
        bad += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}" for pat in (_FLOAT_UNIT, _UNIT_NAME)
                for m in pat.finditer(text)]
    assert not bad, "the float64 unit defined outside kernels/units.py:\n" + "\n".join(bad)
    assert _FLOAT_UNIT.search(units.read_text()) and _UNIT_NAME.search(units.read_text())


def test_sweep_does_not_import_report():
    """The sweep computes and writes its files; the page is rendered a layer above
    (``exactdp sweep`` passes ``finish=write_sweep_report``): no module of
    ``exactdp.sweep`` imports ``exactdp.report``, at module level or inside a function."""
    _, edges, _ = _graph()
    bad = [f"{a} → {b}" for a, bs in edges.items() for b in bs
           if _layer(a) in ("sweep", "runs") and _layer(b) == "report"]
    assert not bad, bad
    assert any(_layer(a) == "sweep" for a in edges) and any(_layer(b) == "report" for bs in edges.values() for b in bs)
