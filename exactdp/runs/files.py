"""The files of a run (sweep, tune, calibrate, release, report): atomic writes, sealed json, the folder lock.

Every file is written to a temporary name in the same folder (:data:`TMP_MARK`), made
durable (fsync'ed) and renamed over the final name with :func:`os.replace` (atomic on
POSIX), then the folder is fsync'ed (:func:`atomic_write_text`); a crash leaves at most
stray temporary files, which :func:`remove_temp_files` deletes.  A json file that a later
run trusts is *sealed* (:func:`seal_json`: the run's identity and the SHA-256 of its own
content) and read back only when intact and the same run's (:func:`read_sealed`), never
through a symbolic link and never beyond :data:`READ_LIMIT` bytes (:func:`read_run_file`).

:func:`locked_out_dir` holds an OS file lock (:mod:`filelock`) on the folder's
``.exactdp-sweep.lock`` for a whole run, so two runs can never write one folder at
once; the lock dies with its process, so a killed run leaves no stale lock.
:func:`check_folder_free` refuses a folder another kind of command wrote.

The sweep's own task files (pairs, checksummed group commits) are in :mod:`exactdp.sweep.io`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path

__all__ = [
    "atomic_write_text",
    "fsync_dir",
    "TMP_MARK",
    "sha256_text",
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

MANIFEST = "manifest.json"
LOCK_FILE = ".exactdp-sweep.lock"
#: the mark in a temporary file's name (``.NAME.tmp-PID-THREAD``)
TMP_MARK = ".tmp-"


class SweepDirError(ValueError):
    """The output folder does not fit the requested run (e.g. resume with other settings)."""


@contextlib.contextmanager
def locked_out_dir(out):
    """Create ``out`` and hold its lock for the ``with`` block; fail at once if it is held.

    Raises
    ------
    SweepDirError
        Another run (in this or another process) holds the lock.
    """
    from filelock import FileLock, Timeout

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(out / LOCK_FILE, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise _in_use(out) from None
    try:
        yield out
    finally:
        lock.release()


def _in_use(out: Path) -> SweepDirError:
    kind = folder_kind(out)
    return SweepDirError(f"{out} is in use by another running {kind or 'sweep or tune'} (it holds {out / LOCK_FILE}); "
                         "wait for that run to finish or choose another --out")


#: the files that mark a folder written by a command without a manifest
_KIND_MARKS = (("trace", "tune"), ("pairs", "sweep"), ("calibration.csv", "calibrate"),
               ("release_brackets.csv", "release"), ("census_2020.csv", "census-2020"), ("family.csv", "product"))


def folder_kind(out) -> str | None:
    """Which command wrote the folder ``out``: the command named by its manifest's
    ``format`` (``"exactdp-sweep/2"``: ``"sweep"``; ``"exactdp-tune/2"``: ``"tune"``), else
    by the files only one command writes (``trace/``: tune, ``pairs/``: sweep,
    ``calibration.csv``, ``release_brackets.csv``, ``census_2020.csv``, ``family.csv``: a
    product or a portfolio), else None (no folder, an empty one)."""
    out = Path(out)
    mpath = out / MANIFEST
    if mpath.is_file() and not mpath.is_symlink():
        with contextlib.suppress(ValueError, AttributeError):
            fmt = json.loads(read_run_file(mpath).decode("utf-8")).get("format")
            if isinstance(fmt, str) and fmt.startswith("exactdp-") and "/" in fmt:
                return fmt[len("exactdp-"):fmt.index("/")]
    for name, kind in _KIND_MARKS:
        if (out / name).exists():
            return kind
    return None


def check_folder_free(out, kind: str, held: bool = False) -> None:
    """Refuse (:class:`SweepDirError`, one line) an output folder that another running
    command holds (its lock; not checked when this run ``held`` it), or that another kind
    of command wrote: ``exactdp sweep --resume`` on a tune's folder must never replace the
    tune's manifest."""
    from filelock import FileLock, Timeout

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SweepDirError(f"{out} is a file, not a folder; choose a folder for --out")
    if not held and (out / LOCK_FILE).is_file():  # only an existing lock file: nothing is created here
        lock = FileLock(out / LOCK_FILE, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise _in_use(out) from None
        lock.release()
    other = folder_kind(out)
    if other is not None and other != kind:
        raise SweepDirError(f"{out} holds the output of exactdp {other}, not of exactdp {kind}; exactdp {kind} "
                            "does not write into another command's folder: choose a new --out")


#: bytes read at most of a file the run wrote and reads back (a larger one is damaged)
READ_LIMIT = 64 * 2**20


def seal_json(body: dict, identity: str) -> str:
    """The text of a json file that carries the ``run_identity`` of its run and, last, the
    SHA-256 of its own content (``self_sha256``: of this text without that key), sorted keys."""
    body = {**body, "run_identity": identity}
    body.pop("self_sha256", None)
    inner = json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return json.dumps({**body, "self_sha256": sha256_text(inner)}, indent=1, sort_keys=True,
                      ensure_ascii=False) + "\n"


def read_run_file(path, limit: int = READ_LIMIT) -> bytes:
    """The bytes of a file a run wrote and now reads back (a manifest, a trace batch): never
    through a symbolic link, only a regular file, at most ``limit`` bytes — read by
    :func:`exactdp.numerics.inputfiles.read_bytes` (non-blocking open, the type checked on
    the descriptor, the limit counted while reading).

    Raises
    ------
    ValueError
        Why the file cannot be trusted (a symbolic link, no such file, not a regular file,
        too long, unreadable).
    """
    from exactdp.numerics.errors import InputError
    from exactdp.numerics.inputfiles import read_bytes

    path = Path(path)
    if path.is_symlink():
        raise ValueError("a symbolic link")
    try:
        return read_bytes(path, "file", limit)
    except InputError as exc:
        raise ValueError(exc.reason) from None


def read_sealed(path, identity: str) -> tuple[dict | None, str]:
    """``(body, "")`` of a file written with :func:`seal_json` for ``identity`` and intact,
    else ``(None, why not)``: a symbolic link or a special file (never followed), unreadable,
    longer than :data:`READ_LIMIT`, not json, a checksum that does not match, another run's."""
    try:
        raw = read_run_file(path)
    except ValueError as exc:
        return None, str(exc)
    try:
        text = raw.decode("utf-8")
        body = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"unreadable ({type(exc).__name__})"
    if not isinstance(body, dict) or not isinstance(body.get("self_sha256"), str):
        return None, "carries no checksum"
    if seal_json(body, body.get("run_identity", "")) != text:
        return None, "changed since written (checksum mismatch)"
    if body.get("run_identity") != identity:
        return None, "written by another run (other settings or allocation)"
    body.pop("self_sha256")
    body.pop("run_identity")
    return body, ""


def fsync_dir(folder: Path) -> None:
    """fsync a folder (makes the renames within it durable; a no-op where folders have no fd)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path, text: str, *, sync_dir: bool = True) -> None:
    """Write ``text`` to ``path`` atomically and durably (temp file, fsync, os.replace).

    ``sync_dir=False`` leaves the folder's fsync (which makes the rename durable) to the
    caller, who writes several files of one folder and fsyncs it once."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}{TMP_MARK}{os.getpid()}-{threading.get_ident()}")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    if sync_dir:
        fsync_dir(path.parent)


def remove_temp_files(out) -> int:
    """Delete temporary files left by an interrupted run; returns how many."""
    n = 0
    for p in Path(out).rglob(f".*{TMP_MARK}*"):
        p.unlink(missing_ok=True)
        n += 1
    return n


def sha256_text(text: str) -> str:
    """``"sha256:<hex>"`` of a text's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_csv(path) -> list[dict]:
    """Rows of a CSV written by a run (plain text fields; no quoting is ever needed)."""
    return csv_rows(Path(path).read_text(encoding="utf-8"))


def read_columns(path) -> dict:
    """A CSV written by a run as columns (:func:`csv_columns` of the file's text)."""
    return csv_columns(Path(path).read_text(encoding="utf-8"))


def as_read(text: str) -> str:
    """``text`` as :meth:`Path.read_text` returns it after :func:`atomic_write_text` wrote
    it (universal newlines: ``\\r\\n`` and ``\\r`` read as ``\\n``), so that a text parsed
    in memory gives what its file gives."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def csv_rows(text: str) -> list[dict]:
    """The rows of a sweep CSV's text (as read from its file, :func:`as_read`): dicts
    header name → text."""
    lines = text.splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:] if ln]


def csv_columns(text: str) -> dict:
    """A sweep CSV's text (as read from its file) as columns: header name → list of texts
    (row order).

    A plain text (ASCII, ``\\n`` line ends only, no empty line, every line with as many
    fields as the header: the sweep's files) is split in one pass and sliced into columns;
    any other text line by line (``splitlines``, empty lines skipped).  Both give the same
    columns for a plain text."""
    end = text.find("\n")
    if end > 0 and text.endswith("\n") and text.isascii() and "\n\n" not in text \
            and not any(c in text for c in "\r\x0b\x0c\x1c\x1d\x1e"):
        head = text[:end].split(",")
        n = len(head)
        body = text[end + 1:-1]
        if not body:
            return {h: [] for h in head}
        if all(ln.count(",") == n - 1 for ln in body.split("\n")):
            flat = body.replace("\n", ",").split(",")
            return {h: flat[k::n] for k, h in enumerate(head)}
    lines = text.splitlines()
    head = lines[0].split(",")
    cols = list(zip(*(ln.split(",") for ln in lines[1:] if ln))) or [()] * len(head)
    return {h: list(c) for h, c in zip(head, cols)}


def read_json(path) -> dict:
    """A json file a run wrote (no checks: :func:`read_sealed` for a sealed one)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
