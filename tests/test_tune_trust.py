"""A tune folder on resume (issue 34): no stored file can change a certified result.

A killed run is simulated from an uninterrupted reference (its trace cut after a batch
the search found infeasible, its results deleted); one trace file is then forged or
damaged and the run resumed.  The resumed run must end with exit 0 and the reference's
bytes, and the tuned allocation must meet the target on every pair by the harness's
brute-force enumeration (``tests/harness.py``, nothing of the engine).  The checksums are
written here with ``hashlib`` and ``json`` (a forger's tools), not with exactdp's code.
Also: a folder of one command is refused by another, and a locked one is "in use".
"""

from __future__ import annotations

import hashlib
import json
import shutil
from fractions import Fraction as F
from pathlib import Path

import mpmath
import pytest
from filelock import FileLock
from tune_toys import ONE_QUERY

from exactdp.census.allocations import load_allocation
from exactdp.cli import main
from exactdp.runs.files import LOCK_FILE

from harness import BruteDesign

DELTA = F(1, 10**6)
ARGS = ["--jobs", "1", "--delta", "1e-6", "--vary", "level", "--bounds", "1/3:3", "--quiet", "--no-profile",
        "--no-plots"]
DATA = ("tuned.toml", "result.json", "trace.csv", "sigma2.csv", "groups.csv")


class _Brute(BruteDesign):
    MAX_COST = 2_000_000  # the toy's pairs: two variances, under a second each


def _bureau_eps(rho: F, delta: F):
    with mpmath.workdps(110):
        r = mpmath.mpf(rho.numerator) / rho.denominator
        return r + 2 * mpmath.sqrt(r * mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator))


def _meets_target_by_brute_force(tuned_file: Path, input_rho: F) -> None:
    alloc = load_allocation(tuned_file)
    eps = _bureau_eps(input_rho, DELTA)
    for i, j in alloc.pairs():
        mechs: dict = {}
        for r in alloc.pair_rhos(i, j):
            mechs[1 / F(r)] = mechs.get(1 / F(r), 0) + 1
        value, err = _Brute([(s2, 1, m) for s2, m in mechs.items()]).delta(eps)
        with mpmath.workdps(110):
            assert value + err <= mpmath.mpf(DELTA.numerator) / DELTA.denominator, (i, j, value)


def _files(out: Path) -> dict:
    """The data files and the trace (the manifest holds timings)."""
    files = {name: (out / name).read_bytes() for name in DATA}
    files.update({p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "trace").rglob("*.json"))})
    return files


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("one") / "one.toml"
    path.write_text(ONE_QUERY)
    return path


@pytest.fixture(scope="module")
def reference(toy, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    assert main(["tune", "--allocation", str(toy), "--out", str(out)] + ARGS) == 0
    return out


def _killed_copy(reference: Path, dest: Path) -> int:
    """A copy of the reference as a run killed after its last infeasible batch of the
    fine search (the batch that, forged feasible, would move the boundary); returns it."""
    shutil.copytree(reference, dest)
    rows = [r.split(",") for r in (reference / "trace.csv").read_text().splitlines()[1:]]
    k = max(int(r[0]) for r in rows if r[1] == "proxy-scale" and r[7] == "infeasible")
    for p in (dest / "trace").glob("batch-*.json"):
        if int(p.stem[6:]) > k:
            p.unlink()
    for name in DATA:
        (dest / name).unlink()
    return k


def _reseal(obj: dict) -> str:
    """A forger's checksum: the file's text without ``self_sha256``, hashed."""
    obj = {k: v for k, v in obj.items() if k != "self_sha256"}
    inner = json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    obj["self_sha256"] = "sha256:" + hashlib.sha256(inner.encode("utf-8")).hexdigest()
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("reseal", [False, True], ids=["forged", "forged-and-resealed"])
def test_a_forged_delta_never_reaches_the_certified_result(toy, reference, tmp_path, reseal, capsys):
    out = tmp_path / "run"
    k = _killed_copy(reference, out)
    batch = out / "trace" / f"batch-{k:06d}.json"
    obj = json.loads(batch.read_text())
    for lab in obj["results"]:  # every pair "certified" just below the target
        obj["results"][lab] = ["999999/1000000000000"] * 3
    batch.write_text(_reseal(obj) if reseal else json.dumps(obj, indent=1, sort_keys=True) + "\n")
    capsys.readouterr()
    assert main(["tune", "--allocation", str(toy), "--out", str(out), "--resume"] + ARGS) == 0
    assert _files(out) == _files(reference)
    _meets_target_by_brute_force(out / "tuned.toml", load_allocation(toy).total_rho)
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "complete"
    if not reseal:
        assert man["run"]["recomputed_damaged"] == 1 and man["run"]["reused"] == k - 1


def _flip(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))


def _damage(kind: str, path: Path, other: Path) -> None:
    if kind == "flip":
        _flip(path)
    elif kind == "truncate":
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "symlink":  # a link to another intact file of the run: never followed
        path.unlink()
        path.symlink_to(other)
    elif kind == "identity":  # an intact file of another run's identity
        obj = json.loads(path.read_text())
        obj["run_identity"] = "sha256:" + "0" * 64
        path.write_text(_reseal(obj))


# (a manifest of another identity is another run's: refused, test_other_settings_are_refused_on_resume)
@pytest.mark.parametrize("target, kind", [(t, k) for t in ("batch", "design", "manifest")
                                          for k in ("flip", "truncate", "empty", "symlink", "identity")
                                          if (t, k) != ("manifest", "identity")])
def test_a_damaged_file_is_recomputed_never_an_internal_error(toy, reference, tmp_path, target, kind, capsys):
    out = tmp_path / "run"
    k = _killed_copy(reference, out)
    if target == "batch":
        path, other = out / "trace" / "batch-000002.json", out / "trace" / "batch-000001.json"
    elif target == "design":
        designs = sorted((out / "trace" / "designs").glob("*.json"))
        path, other = designs[0], designs[1]
    else:
        path, other = out / "manifest.json", out / "trace" / "batch-000001.json"
    _damage(kind, path, other)
    capsys.readouterr()
    assert main(["tune", "--allocation", str(toy), "--out", str(out), "--resume"] + ARGS) == 0
    err = capsys.readouterr().err
    assert _files(out) == _files(reference)
    assert not path.is_symlink() and other.read_bytes() == (reference / other.relative_to(out)).read_bytes()
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "complete"
    if target != "manifest":
        assert man["run"]["recomputed_damaged"] == 1 and man["run"]["reused"] == k - (target == "batch")
    # the same damage without --resume: one line, exit 2, naming the folder
    if target == "manifest":
        again = tmp_path / "again"
        _killed_copy(reference, again)
        _damage(kind, again / "manifest.json", again / "trace" / "batch-000001.json")
        assert main(["tune", "--allocation", str(toy), "--out", str(again)] + ARGS) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "--resume" in err and "damaged" in err


def test_other_settings_are_refused_on_resume(toy, reference, tmp_path, capsys):
    out = tmp_path / "run"
    _killed_copy(reference, out)
    capsys.readouterr()
    assert main(["tune", "--allocation", str(toy), "--out", str(out), "--resume", "--delta", "1e-7"] + ARGS[:2]
                + ARGS[4:]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "different target" in err


def test_a_folder_of_another_command_is_refused_and_kept(toy, reference, tmp_path, capsys):
    tune_dir = tmp_path / "tune"
    shutil.copytree(reference, tune_dir)
    before = {p: p.read_bytes() for p in tune_dir.rglob("*") if p.is_file()}
    capsys.readouterr()
    for resume in ([], ["--resume"]):
        assert main(["sweep", "--pairs", "13-13", "--out", str(tune_dir), "--quiet", "--no-plots", "--only-deltas",
                     "--deltas", "1e-10", "--tradeoff-half", "20"] + resume) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "exactdp tune" in err, err
    (tune_dir / "manifest.json").write_text("{")  # even a damaged tune manifest: the folder is the tune's
    before[tune_dir / "manifest.json"] = b"{"
    assert main(["sweep", "--pairs", "13-13", "--out", str(tune_dir), "--quiet", "--resume"]) == 2
    assert "exactdp tune" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in tune_dir.rglob("*") if p.is_file()} == before
    # a sweep's folder (its manifest, or only its pairs) is refused by tune
    sweep_dir = tmp_path / "sweep"
    (sweep_dir / "pairs").mkdir(parents=True)
    assert main(["tune", "--allocation", str(toy), "--out", str(sweep_dir), "--resume"] + ARGS) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "exactdp sweep" in err
    calib = tmp_path / "calib"
    calib.mkdir()
    (calib / "calibration.csv").write_text("x\n")
    assert main(["tune", "--allocation", str(toy), "--out", str(calib), "--resume"] + ARGS) == 2
    assert "exactdp calibrate" in capsys.readouterr().err


def test_a_running_folder_is_in_use_not_damaged(toy, reference, tmp_path, capsys):
    out = tmp_path / "run"
    _killed_copy(reference, out)
    with FileLock(out / LOCK_FILE, timeout=0):  # a tune still running
        capsys.readouterr()
        for cmd in (["sweep", "--pairs", "13-13", "--quiet", "--resume"],
                    ["tune", "--allocation", str(toy), "--resume"] + ARGS):
            assert main(cmd + ["--out", str(out)]) == 2
            err = capsys.readouterr().err
            assert len(err.strip().splitlines()) == 1 and "in use by another running tune" in err, err
