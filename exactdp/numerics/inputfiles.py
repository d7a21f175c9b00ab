"""The user's input files (mechanism files, allocation files): read strictly, refused in
one line naming the file.

* :func:`read_text` — UTF-8 text (a UTF-8 byte-order mark is allowed) of at most
  :data:`MAX_FILE_BYTES`, read by :func:`read_bytes` with that limit applied while reading
  (never by ``stat``), refusing FIFOs, devices and sockets by type without blocking;
  UTF-16, binary data (NUL bytes) and other encodings are refused
  naming the file, never read as garbage;
* :func:`parse_toml` — TOML (``tomllib``), nesting too deep for the parser refused
  instead of raising ``RecursionError``; a float literal is read as a :class:`TomlFloat`
  (its text), so that it can be refused quoting what was written;
* :func:`parse_csv` — CSV with a header: unterminated quotes, duplicated or empty column
  names and rows whose field count differs from the header's are refused.
"""

from __future__ import annotations

import codecs
import csv
import io

from exactdp.numerics.errors import InputError

__all__ = ["MAX_FILE_BYTES", "read_bytes", "read_text", "parse_toml", "parse_csv", "TomlFloat"]

#: largest input file read (bytes): far beyond any design exactdp can account in a budget
MAX_FILE_BYTES = 16 * 2**20

_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))


def read_bytes(path, field: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular input file, read with a hard limit of ``limit`` bytes.

    The file is opened without blocking (``O_NONBLOCK``: a FIFO is never waited on) and
    its type checked on the opened descriptor (``fstat``, so a path swapped after a check
    cannot slip through): only a regular file is read, and never more than ``limit + 1``
    bytes (a file that grows while it is read is refused too), so a symlink to
    ``/dev/zero``, a FIFO or a socket is refused by its type and a huge file by the limit.

    Raises
    ------
    InputError
        ``field`` and the path, with one reason: no such file, a folder, not a regular
        file (a FIFO, a device, a socket), larger than the limit, cannot be read.
    """
    import os
    import stat

    text = str(path)
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(field, text, "no such file") from None
    except IsADirectoryError:
        raise InputError(field, text, "is a folder, not a file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(field, text, f"cannot be read ({reason})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(field, text, "is a folder, not a file")
        if not stat.S_ISREG(mode):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                    else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a special file")
            raise InputError(field, text, f"is {kind}, not a regular file; give a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(field, text, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(field, text, f"is larger than {_size_text(limit)}; input files larger than "
                                      f"{_size_text(limit)} are refused")
    return b"".join(chunks)


def _size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"


def read_text(path, field: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a UTF-8 input file (read by :func:`read_bytes`, at most ``limit`` bytes).

    Raises
    ------
    InputError
        ``field`` = the path: no such file, a folder, a special file or FIFO, too large,
        not UTF-8 text.
    """
    raw = read_bytes(path, field, limit)
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raise InputError(field, str(path), f"is {name} text; save it as UTF-8")
    if b"\x00" in raw:
        raise InputError(field, str(path), "is binary data (it contains NUL bytes), not a text file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(field, str(path), f"is not UTF-8 text (byte {exc.start} cannot be decoded); "
                                           "save it as UTF-8") from None
    return text


class TomlFloat:
    """A TOML float literal, kept as written: TOML parsers read ``0.0011`` as a binary
    float; exactdp refuses it, quoting the literal and how to write it."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def reason(self) -> str:
        """Why it is refused and what to write instead."""
        return (f'is a TOML float, which TOML parsers read as an inexact binary float; write it as a quoted '
                f'string, e.g. "{self.text}" (or a fraction such as "11/10000")')


def parse_toml(text: str, field: str, src: str) -> dict:
    """``tomllib.loads(text)`` (float literals as :class:`TomlFloat`) with its errors as
    one :class:`InputError`."""
    import tomllib

    try:
        return tomllib.loads(text, parse_float=TomlFloat)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(field, src, f"is not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(field, src, "is not valid input: its arrays or tables are nested too deeply") from None


def parse_csv(text: str, field: str, src: str) -> tuple[list[str], list[dict]]:
    """``(header, rows)`` of a CSV text: each row a dict header → text (empty cells
    omitted), with its line number under the key ``None``."""
    try:
        lines = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise InputError(field, src, f"is not valid CSV ({exc})") from None
    numbered = [(k, ln) for k, ln in enumerate(lines, start=1) if any(cell.strip() for cell in ln)]
    if not numbered:
        raise InputError(field, src, "is empty; expected a header line and one row per line")
    _, header = numbered[0]
    header = [h.strip() for h in header]
    for k, name in enumerate(header):
        if not name:
            raise InputError(field, src, f"column {k + 1} of the header has no name")
        if header.index(name) != k:
            raise InputError(field, src, f"the header names column {name!r} twice")
    rows = []
    for line_no, cells in numbered[1:]:
        if len(cells) != len(header):
            raise InputError(f"{src}: line {line_no}", ",".join(cells),
                             f"has {len(cells)} fields but the header has {len(header)}")
        row: dict[str | None, str | int] = {h: c.strip() for h, c in zip(header, cells) if c.strip()}
        row[None] = line_no
        rows.append(row)
    return header, rows
