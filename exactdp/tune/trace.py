"""The tune folder: its identity and lock, and the trace of every evaluation (resumable).

Every exact evaluation the tuner asks for is a *batch* (one design, some neighbour pairs,
a purpose).  Batch n is written to ``trace/batch-NNNNNN.json`` atomically once computed
(:func:`exactdp.sweep.io.atomic_write_text`), and every design to
``trace/designs/<id>.json``.  The tuner is deterministic — each decision depends only on
certified numbers, which are pure functions of the design — so a killed run is resumed
by running it again from the start: batch n is then read back instead of computed, and
the run continues exactly where it stopped (no result lost or counted twice; a batch cut
by the kill is computed again).  The folder is locked for the whole run
(:func:`exactdp.sweep.io.locked_out_dir`), so two runs cannot write it at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from exactdp.numerics.exact import fraction_str
from exactdp.sweep.io import LOCK_FILE, SweepDirError, atomic_write_text, locked_out_dir, read_json, remove_temp_files
from exactdp.tune.evaluate import DeltaBound, composition_key

__all__ = ["FORMAT", "MANIFEST", "Trace", "design_id", "open_tune_dir", "dump_json", "SweepDirError"]

FORMAT = "exactdp-tune/1"
MANIFEST = "manifest.json"


def dump_json(obj) -> str:
    """Deterministic JSON text (sorted keys, one space indent, trailing newline)."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def design_id(design, levels) -> str:
    """Short content hash of a design (its base table, level order)."""
    text = json.dumps([[fraction_str(v) for v in design[lev]] for lev in levels], separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _check_dir(out: Path, identity: dict, resume: bool) -> None:
    mpath = out / MANIFEST
    if mpath.is_file():
        try:
            old = read_json(mpath)
        except ValueError as exc:
            raise SweepDirError(f"{mpath} is not a valid manifest ({exc}); use a new --out folder") from None
        if not resume:
            raise SweepDirError(f"{out} already holds a tune run; pass --resume to finish it or choose a new --out")
        diffs = [k for k in identity if old.get(k) != identity[k]]
        if diffs:
            raise SweepDirError(f"--resume: {out} holds a tune run with different {', '.join(diffs)}; "
                                "rerun with the original settings or choose a new --out")
        return
    if out.exists() and any(p.name != LOCK_FILE for p in out.iterdir()) and not resume:
        raise SweepDirError(f"{out} exists and is not empty (and holds no tune manifest); choose a new --out")


@contextlib.contextmanager
def open_tune_dir(out, identity: dict, resume: bool):
    """Check, lock and prepare the output folder for the ``with`` block.

    Raises
    ------
    SweepDirError
        The folder holds another run (or other settings), or another run holds its lock.
    """
    out = Path(out)
    _check_dir(out, identity, resume)  # before creating a lock file in a folder that is not ours
    with locked_out_dir(out):
        _check_dir(out, identity, resume)
        remove_temp_files(out)
        if not (out / MANIFEST).is_file():
            atomic_write_text(out / MANIFEST, dump_json({**identity, "status": "running"}))
        yield out


class Trace:
    """The batches of one run: computed once, written atomically, read back on resume.

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
    """

    def __init__(self, out, evaluator, target, levels):
        self.dir = Path(out) / "trace"
        (self.dir / "designs").mkdir(parents=True, exist_ok=True)
        self.evaluator, self.target, self.levels = evaluator, target, tuple(levels)
        self.records: list[dict] = []
        self.cache: dict = {}
        self.computed = self.reused = 0
        self.designs: dict = {}

    def _path(self, n: int) -> Path:
        return self.dir / f"batch-{n:06d}.json"

    def evaluate(self, design, pairs, rhos_of, purpose: str, note: dict | None = None) -> dict:
        """Certified δ of ``design`` on ``pairs``: ``{(i, j): DeltaBound}``.

        ``rhos_of(i, j)`` gives a pair's ρ; ``note`` (JSON-ready) is stored with the batch."""
        did = design_id(design, self.levels)
        n = len(self.records) + 1
        labels = [f"{i}-{j}" for i, j in pairs]
        stored = None
        if self._path(n).is_file():
            stored = read_json(self._path(n))
            if stored.get("design") != did or sorted(stored.get("results", {})) != sorted(labels) \
                    or stored.get("purpose") != purpose:
                raise SweepDirError(f"--resume: {self._path(n)} does not match this run's batch {n} "
                                    "(the folder holds another run); choose a new --out")
            results = {p: DeltaBound.from_list(stored["results"][lab]) for p, lab in zip(pairs, labels)}
            self.reused += 1
        else:
            results = self._compute(pairs, rhos_of)
            self.computed += 1
        for p in pairs:
            self.cache.setdefault(composition_key(rhos_of(*p)), results[p])
        if did not in self.designs:
            dpath = self.dir / "designs" / f"{did}.json"
            if not dpath.is_file():
                atomic_write_text(dpath, dump_json({lev: [fraction_str(v) for v in design[lev]]
                                                    for lev in self.levels}))
            self.designs[did] = design
        record = {"batch": n, "purpose": purpose, "design": did, "note": note or {},
                  "results": {lab: results[p].as_list() for p, lab in zip(pairs, labels)}}
        if stored is None:
            atomic_write_text(self._path(n), dump_json(record))
        self.records.append(record)
        return results

    def _compute(self, pairs, rhos_of) -> dict:
        keys = {p: composition_key(rhos_of(*p)) for p in pairs}
        todo = list(dict.fromkeys(k for k in keys.values() if k not in self.cache))
        comps = [tuple(r for r, m in key for _ in range(m)) for key in todo]
        for key, res in zip(todo, self.evaluator(comps, self.target)):
            self.cache[key] = res
        return {p: self.cache[keys[p]] for p in pairs}
