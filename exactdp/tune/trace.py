"""The tune folder: its identity and lock, and the trace of every evaluation (resumable).

Every exact evaluation the tuner asks for is a *batch* (one design, some neighbour pairs,
a purpose).  Batch n is written to ``trace/batch-NNNNNN.json`` atomically once computed
(:func:`exactdp.runs.files.atomic_write_text`), and every design to
``trace/designs/<id>.json``.  The tuner is deterministic — each decision depends only on
certified numbers, which are pure functions of the design — so a killed run is resumed
by running it again from the start: batch n is then read back instead of computed, and
the run continues exactly where it stopped (no result lost or counted twice; a batch cut
by the kill is computed again).  The folder is locked for the whole run
(:func:`exactdp.runs.files.locked_out_dir`), so two runs cannot write it at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from fractions import Fraction
from pathlib import Path

from exactdp.numerics.exact import fraction_str
from exactdp.runs.files import (
    LOCK_FILE,
    SweepDirError,
    atomic_write_text,
    check_folder_free,
    locked_out_dir,
    read_run_file,
    read_sealed,
    remove_temp_files,
    seal_json,
    sha256_text,
)
from exactdp.tune.evaluate import DeltaBound, composition_key

__all__ = ["FORMAT", "MANIFEST", "Trace", "design_id", "open_tune_dir", "dump_json", "SweepDirError", "run_identity",
           "write_manifest"]

FORMAT = "exactdp-tune/2"  # 2: every trace file and the manifest carry a checksum and the run identity
MANIFEST = "manifest.json"


def dump_json(obj) -> str:
    """Deterministic JSON text (sorted keys, one space indent, trailing newline)."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


_DESIGN_IDS: dict = {}  # exact key of a design (numerators, denominators) → its id


def design_id(design, levels) -> str:
    """Short content hash of a design (its base table, level order).

    Kept per exact design (the ``(numerator, denominator)`` of every σ², which identify
    a Fraction): the search asks for the id of the same design several times, and the
    decimal texts of its exact σ² (hundreds of digits after a few steps) are its cost."""
    try:
        key = tuple((lev, tuple((v.numerator, v.denominator) for v in design[lev] if type(v) is Fraction))
                    for lev in levels)
        exact = sum(len(k[1]) for k in key) == sum(len(design[lev]) for lev in levels)
    except TypeError:
        exact = False
    if exact:
        hit = _DESIGN_IDS.get(key)
        if hit is not None:
            return hit
    text = json.dumps([[fraction_str(v) for v in design[lev]] for lev in levels], separators=(",", ":"))
    did = hashlib.sha256(text.encode("ascii")).hexdigest()[:16]
    if exact:
        if len(_DESIGN_IDS) >= 4096:
            _DESIGN_IDS.clear()
        _DESIGN_IDS[key] = did
    return did


def run_identity(identity: dict) -> str:
    """What every trace file records of its run: the SHA-256 of the run's identity less
    ``profile`` (which changes no trace file), so a file is trusted only by the run that
    wrote it (allocation, target, problem, grid, tolerance)."""
    core = {k: v for k, v in identity.items() if k != "profile"}
    return sha256_text(json.dumps(core, sort_keys=True, separators=(",", ":")))


def write_manifest(out: Path, manifest: dict) -> None:
    """The tune manifest, sealed (:func:`~exactdp.runs.files.seal_json`: its checksum and the
    run's identity)."""
    atomic_write_text(out / MANIFEST, seal_json(manifest, run_identity(manifest)))


def _check_dir(out: Path, identity: dict, resume: bool, say, held: bool = False) -> None:
    check_folder_free(out, "tune", held)
    mpath = out / MANIFEST
    if mpath.exists() or mpath.is_symlink():
        old, why = read_sealed(mpath, run_identity(identity))
        if old is None and why.startswith("written by another run"):
            old, _ = read_sealed(mpath, read_json_quiet(mpath).get("run_identity", ""))
        if old is None:
            if not resume:
                raise SweepDirError(f"{mpath} is damaged ({why}); pass --resume to rebuild it from the verified "
                                    "trace, or choose a new --out")
            say(f"--resume: {mpath} is damaged ({why}); rebuilding it (every trace file is verified)")
            return
        if not resume:
            raise SweepDirError(f"{out} already holds a tune run; pass --resume to finish it or choose a new --out")
        diffs = [k for k in identity if old.get(k) != identity[k]]
        if diffs:
            raise SweepDirError(f"--resume: {out} holds a tune run with different {', '.join(diffs)}; "
                                "rerun with the original settings or choose a new --out")
        return
    if out.exists() and any(p.name != LOCK_FILE for p in out.iterdir()) and not resume:
        raise SweepDirError(f"{out} exists and is not empty (and holds no tune manifest); choose a new --out")


def read_json_quiet(path) -> dict:
    """A json object from ``path``, or ``{}`` (unreadable, not an object)."""
    try:
        obj = json.loads(read_run_file(path).decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and json's errors are ValueErrors
        return {}
    return obj if isinstance(obj, dict) else {}


@contextlib.contextmanager
def open_tune_dir(out, identity: dict, resume: bool, say=None):
    """Check, lock and prepare the output folder for the ``with`` block.

    Raises
    ------
    SweepDirError
        The folder holds another run (or other settings), or another command's output,
        or another run holds its lock.
    """
    out = Path(out)
    say = say or (lambda msg: None)
    _check_dir(out, identity, resume, lambda msg: None)  # before creating a lock file in a folder that is not ours
    with locked_out_dir(out):
        _check_dir(out, identity, resume, say, held=True)
        remove_temp_files(out)
        if read_sealed(out / MANIFEST, run_identity(identity))[0] is None:
            write_manifest(out, {**identity, "status": "running"})
        yield out


class Trace:
    """The batches of one run: computed once, written atomically and sealed, read back on
    resume only when they verify.

    Parameters
    ----------
    out : Path
        The run folder (``trace/`` is created in it).
    evaluator : callable
        ``evaluator(compositions, target) -> list of DeltaBound`` (a
        :class:`~exactdp.tune.evaluate.BatchEvaluator`).
    target : Target
    levels : tuple of str
        Level order of the design tables.
    identity : str
        The run's identity (:func:`run_identity`), sealed into every file.
    say : callable, optional
        ``say(message)``: one line for each stored file that fails verification.
    trust_stored : bool
        Reuse stored batches that verify (False: compute and rewrite every batch).

    Notes
    -----
    A stored batch is reused only if it verifies (:func:`~exactdp.runs.files.read_sealed`:
    a regular file, its checksum, this run's identity) and is the batch this run asks for
    (same design, pairs and purpose); otherwise it is computed again and rewritten, and
    every later stored batch is ignored (the run has left the stored path).  Nothing
    read here reaches a certified claim: the result is verified afresh on every pair
    (:func:`exactdp.tune.run.tune`).
    """

    def __init__(self, out, evaluator, target, levels, identity: str = "", say=None, trust_stored: bool = True):
        self.dir = Path(out) / "trace"
        (self.dir / "designs").mkdir(parents=True, exist_ok=True)
        self.evaluator, self.target, self.levels = evaluator, target, tuple(levels)
        self.identity, self.say = identity, say or (lambda msg: None)
        self.records: list[dict] = []
        self.cache: dict = {}
        self.screened: dict = {}  # screen tolerance → {composition key: DeltaBound}
        self.computed = self.reused = self.damaged = 0
        self.designs: dict = {}
        self._diverged = not trust_stored

    def _path(self, n: int) -> Path:
        return self.dir / f"batch-{n:06d}.json"

    def _stored(self, n: int, did: str, pairs, labels, purpose: str):
        """The stored results of batch ``n`` if it verifies and is this batch, else None."""
        path = self._path(n)
        if self._diverged or not (path.exists() or path.is_symlink()):
            return None
        body, why = read_sealed(path, self.identity)
        if body is not None:
            try:
                if body.get("design") != did or body.get("purpose") != purpose or body.get("batch") != n \
                        or sorted(body.get("results", {})) != sorted(labels):
                    why = "not this run's batch (the run has changed its path)"
                    self._diverged = True
                else:
                    return {p: DeltaBound.from_list(body["results"][lab]) for p, lab in zip(pairs, labels)}
            except (ValueError, TypeError, ZeroDivisionError, KeyError, AttributeError) as exc:
                why = f"unreadable numbers ({type(exc).__name__})"
        self.damaged += 1
        self.say(f"--resume: {path} failed verification ({why}); computing it again")
        return None

    def evaluate(self, design, pairs, rhos_of, purpose: str, note: dict | None = None,
                 screen: float | None = None) -> dict:
        """Certified δ of ``design`` on ``pairs``: ``{(i, j): DeltaBound}``.

        ``rhos_of(i, j)`` gives a pair's ρ (and ``rhos_of.key(i, j)``, if there, their
        :func:`~exactdp.tune.evaluate.composition_key`); ``note`` (JSON-ready) is stored
        with the batch.  ``screen``: at that tail tolerance instead of the evaluator's
        (``evaluator(compositions, target, rel_tol=screen)``; kept apart from the run's
        numbers, so a precise evaluation never reads a screened one)."""
        did = design_id(design, self.levels)
        n = len(self.records) + 1
        labels = [f"{i}-{j}" for i, j in pairs]
        key_of = getattr(rhos_of, "key", None)  # the tuner's per-path counts (the same keys)
        keys = {p: key_of(*p) if key_of is not None else composition_key(rhos_of(*p)) for p in pairs}
        results = self._stored(n, did, pairs, labels, purpose)
        cache = self.cache if screen is None else self.screened.setdefault(screen, {})
        if results is not None:
            self.reused += 1
        else:
            results = self._compute(pairs, keys, cache, screen)
            self.computed += 1
        for p in pairs:
            cache.setdefault(keys[p], results[p])
        if did not in self.designs:
            self._write_design(did, design)
            self.designs[did] = design
        record = {"batch": n, "purpose": purpose, "design": did, "note": note or {},
                  "results": {lab: results[p].as_list() for p, lab in zip(pairs, labels)}}
        text = seal_json(record, self.identity)
        if not self._same_bytes(self._path(n), text):
            atomic_write_text(self._path(n), text)
        self.records.append(record)
        return results

    def prune(self) -> int:
        """Delete stored batches beyond this run's last and design files of no batch of it
        (left by a run that took another path); returns how many."""
        n = 0
        for path in list(self.dir.glob("batch-*.json")) + list((self.dir / "designs").glob("*.json")):
            stem = path.stem
            keep = (int(stem[6:]) <= len(self.records) if stem[6:].isdigit() else False) \
                if stem.startswith("batch-") else stem in self.designs
            if not keep:
                path.unlink(missing_ok=True)
                n += 1
        return n

    @staticmethod
    def _same_bytes(path: Path, text: str) -> bool:
        """Whether ``path`` is a regular file (not a link) holding exactly ``text``."""
        try:
            return read_run_file(path) == text.encode("utf-8")
        except ValueError:
            return False

    def _write_design(self, did: str, design) -> None:
        """``trace/designs/<id>.json``, sealed; a stored one that is not exactly it is rewritten."""
        path = self.dir / "designs" / f"{did}.json"
        text = seal_json({lev: [fraction_str(v) for v in design[lev]] for lev in self.levels}, self.identity)
        if not self._same_bytes(path, text):
            if path.exists() or path.is_symlink():
                self.damaged += 1
                self.say(f"--resume: {path} failed verification; writing it again")
            atomic_write_text(path, text)

    def _compute(self, pairs, keys: dict, cache: dict, screen: float | None = None) -> dict:
        todo = list(dict.fromkeys(k for k in keys.values() if k not in cache))
        comps = [tuple(r for r, m in key for _ in range(m)) for key in todo]
        got = self.evaluator(comps, self.target) if screen is None else \
            self.evaluator(comps, self.target, rel_tol=screen)
        for key, res in zip(todo, got):
            cache[key] = res
        return {p: cache[keys[p]] for p in pairs}
