"""Crash-safe, verifiable task files of a sweep: checksums, group commits.

The generic run files (atomic writes, sealed json, the folder lock, CSV reading) are
:mod:`exactdp.runs.files`, re-exported here.

Every file is written to a temporary name in the same folder, made durable (fsync'ed)
and renamed over the final name with :func:`os.replace` (atomic on POSIX), then the
folder is fsync'ed.  A task's json file (``pair_I_J.json``) carries the SHA-256 of its
three CSV files, the identity of the sweep that computed it (allocation, settings) and
the SHA-256 of its own content (:func:`info_text`).  A task (one neighbour pair) is
*complete* exactly when its four files exist and pass :func:`check_task` (each checksum,
the identity, the expected header and rows); a crash (even ``kill -9`` or a power loss)
can therefore leave at most stray ``.tmp`` files, which :func:`remove_temp_files`
deletes, and never a half-written or half-counted pair, and a file changed afterwards
(one digit, a truncation, ``nan``) is found and its task recomputed by ``--resume``.

:func:`write_tasks` commits finished tasks in a group: all their temporary files are
written, made durable by one barrier (Linux ``syncfs`` of the folder's file system, which
waits for the data and reports write-back errors since Linux 5.8; elsewhere an fsync of
every file), then renamed, then each folder is fsync'ed once: the same guarantee as one
file at a time (no final name ever points at data that is not on disk), with one barrier
and one folder fsync a group instead of five fsyncs a task.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from exactdp.runs.files import (
    LOCK_FILE,
    MANIFEST,
    READ_LIMIT,
    TMP_MARK,
    SweepDirError,
    as_read,
    atomic_write_text,
    check_folder_free,
    csv_columns,
    csv_rows,
    folder_kind,
    locked_out_dir,
    read_columns,
    read_csv,
    read_json,
    read_run_file,
    read_sealed,
    remove_temp_files,
    seal_json,
    sha256_text,
)
from exactdp.runs.files import fsync_dir as _fsync_dir
from exactdp.sweep.pair import GRID_COLUMNS, PAIR_COLUMNS, TRADEOFF_COLUMNS

__all__ = [
    "atomic_write_text",
    "pair_paths",
    "release_path",
    "task_complete",
    "check_task",
    "info_text",
    "sha256_text",
    "MISSING",
    "write_task",
    "write_tasks",
    "remove_temp_files",
    "read_csv",
    "read_columns",
    "csv_rows",
    "csv_columns",
    "as_read",
    "read_json",
    "MANIFEST",
    "LOCK_FILE",
    "SweepDirError",
    "locked_out_dir",
    "folder_kind",
    "check_folder_free",
    "seal_json",
    "read_sealed",
    "READ_LIMIT",
    "read_run_file",
]

def pair_paths(out, i: int, j: int) -> dict:
    """The files of pair (i, j): ``curve`` (written last), ``tradeoff``, ``grid``, ``info``."""
    d = Path(out) / "pairs"
    return {"tradeoff": d / f"pair_{i}_{j}_tradeoff.csv", "grid": d / f"pair_{i}_{j}_grid.csv",
            "info": d / f"pair_{i}_{j}.json", "curve": d / f"pair_{i}_{j}.csv"}


def release_path(out, i: int, j: int) -> dict:
    """The files of the whole-release composition of pair (i, j) with the PL94 chain."""
    d = Path(out) / "release"
    return {"tradeoff": d / f"release_{i}_{j}_tradeoff.csv", "grid": d / f"release_{i}_{j}_grid.csv",
            "info": d / f"release_{i}_{j}.json", "curve": d / f"release_{i}_{j}.csv"}


#: :func:`check_task`'s reason for a task whose files are not all there (an unfinished
#: task: recomputed silently, unlike a damaged one)
MISSING = "missing"
_CHECKSUMMED = ("curve", "tradeoff", "grid")


def info_text(info: dict, texts: dict, identity: str = "") -> str:
    """The json file of a task: its diagnostics ``info``, the checksums of its CSV
    ``texts`` (``curve``, ``tradeoff``, ``grid``), the sweep ``identity`` and, last, the
    checksum of all of it (``self_sha256``: of this text without that line)."""
    body = {**info, "checksums": {k: sha256_text(texts[k]) for k in _CHECKSUMMED}, "sweep_identity": identity}
    body.pop("self_sha256", None)
    inner = json.dumps(body, indent=1, sort_keys=True) + "\n"
    return json.dumps({**body, "self_sha256": sha256_text(inner)}, indent=1, sort_keys=True) + "\n"


def check_task(files: dict, deltas, grid_points: int, identity: str = "") -> str | None:
    """``None`` when a task's four files are present and intact, else why not:
    :data:`MISSING`, or the damage found (a checksum that does not match, another
    sweep's identity, a wrong header or row count)."""
    if not all(p.is_file() for p in files.values()):
        return MISSING
    links = [p.name for p in files.values() if p.is_symlink()]
    if links:  # never followed: a link can point anywhere (a huge file, another run's)
        return f"{', '.join(links)} {'is a symbolic link' if len(links) == 1 else 'are symbolic links'}"
    if any(p.stat().st_size > READ_LIMIT for p in files.values()):
        return "a file longer than any pair's"
    try:
        texts = {k: files[k].read_bytes().decode("utf-8") for k in _CHECKSUMMED}
        raw_info = files["info"].read_bytes().decode("utf-8")
        info = json.loads(raw_info)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{files['info'].name} unreadable ({type(exc).__name__})"
    name = files["info"].name
    if not isinstance(info, dict) or not isinstance(info.get("checksums"), dict):
        return f"{name} carries no checksums"
    if info_text(info, texts, info.get("sweep_identity", "")) != raw_info:
        bad = [files[k].name for k in _CHECKSUMMED if info["checksums"].get(k) != sha256_text(texts[k])]
        return (f"{', '.join(bad)} changed since written (checksum mismatch)" if bad
                else f"{name} changed since written (checksum mismatch)")
    if info.get("sweep_identity") != identity:
        return f"{name} was computed with other settings or another allocation"
    lines, tlines, glines = (as_read(texts[k]).splitlines() for k in ("curve", "tradeoff", "grid"))
    if not glines or glines[0] != ",".join(GRID_COLUMNS) or len(glines) != grid_points + 1:
        return f"{files['grid'].name} has the wrong header or rows"
    if not lines or lines[0] != ",".join(PAIR_COLUMNS) or len(lines) != len(deltas) + 1:
        return f"{files['curve'].name} has the wrong header or rows"
    if not tlines or tlines[0] != ",".join(TRADEOFF_COLUMNS) or len(tlines) < 3:
        return f"{files['tradeoff'].name} has the wrong header or rows"
    if [ln.split(",")[2] for ln in lines[1:]] != list(deltas):
        return f"{files['curve'].name} holds other target deltas"
    return None


def task_complete(files: dict, deltas, grid_points: int, identity: str = "") -> bool:
    """Whether a task's files are all present and intact (:func:`check_task`)."""
    return check_task(files, deltas, grid_points, identity) is None


def _syncfs_function():
    """libc's ``syncfs`` where it waits for the data and reports write-back errors (Linux
    ≥ 5.8), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        major, minor = (int(x) for x in os.uname().release.split(".")[:2])
        if (major, minor) < (5, 8):
            return None
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError, ValueError):  # pragma: no cover - an unusual libc or kernel name
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_SYNCFS = _syncfs_function()


def _syncfs(fd: int, folder: Path) -> None:
    """Make every file written on ``folder``'s file system durable (one barrier).  ``fd``
    must have been opened on the folder *before* the files were written: syncfs reports
    the write-back errors recorded since that open."""
    import ctypes

    if _SYNCFS(fd) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"syncfs of {folder}: {os.strerror(err)}")


def _task_texts(files: dict, result, info: dict):
    """A task's files in the order they are renamed (the curve, the completion mark, last);
    ``info``'s ``sweep_identity`` (if any) is the identity its json file records."""
    texts = {"curve": result.curve_csv, "tradeoff": result.tradeoff_csv, "grid": result.grid_csv}
    identity = info.get("sweep_identity", "")
    return ((files["tradeoff"], result.tradeoff_csv), (files["grid"], result.grid_csv),
            (files["info"], info_text(info, texts, identity)),
            (files["curve"], result.curve_csv))


def write_tasks(items) -> None:
    """Write finished tasks in one group commit: ``items`` are ``(files, result, info)``.

    Every task's four temporary files are written; one barrier makes them all durable
    (``syncfs``, or an fsync of each file where ``syncfs`` is not reliable); then each
    task's files are renamed (trade-off, grid, info, then the curve) and every folder
    touched is fsync'ed once.  A crash before the barrier leaves only temporary files; one
    after it, final files whose content is on disk: :func:`task_complete` checks all four,
    so a task whose renames were lost (in any order) is incomplete, never wrong."""
    texts = [pt for files, result, info in items for pt in _task_texts(files, result, info)]
    if not texts:
        return
    folders = list(dict.fromkeys(path.parent for path, _ in texts))
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    each = _SYNCFS is None
    barriers = [] if each else [(os.open(f, os.O_RDONLY), f) for f in {os.stat(f).st_dev: f for f in folders}.values()]
    try:
        staged = []
        for path, text in texts:
            tmp = path.with_name(f".{path.name}{TMP_MARK}{os.getpid()}-{threading.get_ident()}")
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                if each:
                    fh.flush()
                    os.fsync(fh.fileno())
            staged.append((tmp, path))
        for fd, folder in barriers:
            _syncfs(fd, folder)
    finally:
        for fd, _ in barriers:
            os.close(fd)
    for tmp, path in staged:
        os.replace(tmp, path)
    for folder in folders:
        _fsync_dir(folder)


def write_task(files: dict, result, info: dict) -> None:
    """Write one finished task: :func:`write_tasks` of it alone."""
    write_tasks([(files, result, info)])
