"""Hostile input files (issue 34): every file argument is read with a hard byte limit while
reading, never by ``stat``; FIFOs, devices and sockets are refused by their type without
blocking; and every argument kind says so in the same one-line shape
``FIELD='PATH': REASON`` (exit 2).

The FIFO and device cases run the real program in a subprocess with a timeout, so a
regression that blocks or reads without end fails the test instead of hanging CI.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from exactdp.cli import main
from exactdp.numerics.errors import InputError
from exactdp.numerics.inputfiles import read_bytes, read_text

#: (argv before the file, argv after the file, field shown in the message)
KINDS = [
    (["delta", "--mechanisms"], ["--eps", "1"], "--mechanisms"),
    (["delta", "--allocation"], ["--pair", "1", "1", "--eps", "1"], "--allocation"),
    (["sweep", "--allocation"], ["--out", "{tmp}/o"], "--allocation"),
    (["product"], [], "product"),
    (["portfolio", "--member"], [], "--member"),
    (["calibrate", "--mechanisms"], ["--delta", "1e-3"], "--mechanisms"),
    (["crosscheck", "--allocation"], ["--pair", "1", "1"], "--allocation"),
    (["release", "--allocation"], ["--pairs", "1-1", "--delta", "1e-10"], "--allocation"),
]


def _special_files(tmp: Path) -> dict:
    fifo = tmp / "fifo.toml"
    os.mkfifo(fifo)
    (tmp / "zero.toml").symlink_to("/dev/zero")
    (tmp / "urandom.csv").symlink_to("/dev/urandom")
    (tmp / "fifo-link.csv").symlink_to(fifo)
    return {"fifo.toml": "FIFO", "zero.toml": "character device", "urandom.csv": "character device",
            "fifo-link.csv": "FIFO"}


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")
def test_special_files_refused_by_type_for_every_argument_kind(tmp_path):
    """Each argument kind, given a FIFO, a symlink to /dev/zero or /dev/urandom: exit 2 at
    once with ``FIELD='PATH': is a ..., not a regular file`` (one subprocess runs them all,
    under a timeout and a 1 GB address-space limit)."""
    files = _special_files(tmp_path)
    cases = []
    for pre, post, field in KINDS:
        for name, kind in files.items():
            path = str(tmp_path / name)
            argv = pre + [path] + [a.replace("{tmp}", str(tmp_path)) for a in post]
            cases.append((argv, f"{field}={path!r}: is a {kind}"))
    script = (
        "import contextlib, io, json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**30 * 3, 2**30 * 3))\n"
        "from exactdp.cli import main\n"
        "out = []\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            code = main(argv)\n"
        "        except SystemExit as exc:\n"
        "            code = exc.code\n"
        "    out.append([code, err.getvalue()])\n"
        "print(json.dumps(out))\n")
    import json

    proc = subprocess.run([sys.executable, "-c", script, json.dumps([a for a, _ in cases])], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for (argv, expected), (code, err) in zip(cases, json.loads(proc.stdout)):
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1, (argv, code, err)
        assert expected in lines[0] and "not a regular file" in lines[0], (argv, lines[0])


def test_missing_file_same_shape_for_every_kind(tmp_path, capsys):
    for pre, post, field in KINDS:
        path = str(tmp_path / "absent.toml")
        code = main(pre + [path] + [a.replace("{tmp}", str(tmp_path)) for a in post])
        err = capsys.readouterr().err
        assert code == 2 and f"{field}={path!r}: no such file" in err, (pre, err)


def test_limit_applies_while_reading(tmp_path, monkeypatch):
    """A file beyond the limit is refused without reading more than limit + 1 bytes, also
    when ``stat`` reports a small size (here: a file that grows after it is opened is
    modelled by a read that never ends, ``/dev/zero`` read as if regular)."""
    big = tmp_path / "big.csv"
    big.write_bytes(b"sigma2\n" + b"2\n" * 600)
    with pytest.raises(InputError, match="larger than 1000 bytes"):
        read_bytes(big, "--mechanisms", limit=1000)
    assert read_bytes(big, "--mechanisms", limit=2000).startswith(b"sigma2")
    # an endless "regular" file: fstat says regular, reads never end
    import exactdp.numerics.inputfiles as inputfiles

    reads = []
    real_fstat = os.fstat

    def regular_fstat(fd):
        st = real_fstat(fd)
        return os.stat_result((0o100644,) + tuple(st)[1:])

    monkeypatch.setattr(os, "fstat", regular_fstat)
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with pytest.raises(InputError, match="larger than 1 MiB"):
        inputfiles.read_text("/dev/zero", "--weights", limit=2**20)
    assert sum(reads) <= 2**20 + 1


def test_default_limit_and_the_16_mib_message(tmp_path):
    f = tmp_path / "huge.toml"
    with open(f, "wb") as fh:
        fh.truncate(16 * 2**20 + 1)  # sparse: no disk used
    with pytest.raises(InputError, match=r"larger than 16 MiB"):
        read_text(f, "--mechanisms")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")
def test_socket_refused(tmp_path):
    path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
        with pytest.raises(InputError):
            read_text(path, "--mechanisms")
    finally:
        s.close()


def test_folder_and_nul_path(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        read_text(tmp_path, "--mechanisms")
    with pytest.raises(InputError, match="cannot be read"):
        read_text(str(tmp_path) + "/a\x00b", "--mechanisms")


# ----------------------------------------------------------------------------- no exit 1 (issue 34's list)
def test_thousands_of_digits_in_rho_are_printed_not_refused():
    """More than 1,000 distinct decimal variances: the exact ρ has > 4300 digits, which
    Python's ``str(int)`` refuses (was exit 1); it is written in full in JSON and shortened
    on a line of text."""
    from exactdp.mechanisms import Composition
    from exactdp.numerics.exact import fraction_str, rational_display

    comp = Composition.from_sigma2([f"{k}.{k % 997 + 1:03d}1" for k in range(1, 1201)])
    text = fraction_str(comp.rho)
    import gmpy2

    assert len(text) > 4300 and gmpy2.mpq(text) == gmpy2.mpq(comp.rho.numerator, comp.rho.denominator)
    short = rational_display(comp.rho)
    assert len(short) < 80 and "digits" in short and short.startswith("≈ 3.829207719")


@pytest.mark.parametrize("rows, argv, code", [
    ("1e300,1000000000", ["delta", "--eps", "1"], 3),      # was OverflowError (float inf → int)
    ("1e-300,1\n174.9,1", ["tradeoff", "--alpha", "0.1"], 3),  # was OverflowError in the dual search
    ("1e-300,1\n174.9,1", ["delta", "--eps", "1"], 0),
    ("1e-300,1\n174.9,1", ["epsilon", "--delta", "1e-10"], 3),  # was OverflowError after ~50 s; now at once
])
def test_extreme_designs_end_with_an_answer_or_exit_3(rows, argv, code, tmp_path, capsys):
    f = tmp_path / "design.csv"
    f.write_text("sigma2,count\n" + rows + "\n")
    got = main(argv[:1] + ["--mechanisms", str(f)] + argv[1:])
    err = capsys.readouterr().err
    assert got == code, err
    assert code == 0 or len(err.splitlines()) == 1


def test_envelope_refused_in_the_api():
    from exactdp.mechanisms import Composition, DiscreteGaussian

    with pytest.raises(InputError, match=r"shift.*1e12"):
        DiscreteGaussian("2", shift=10**13)
    DiscreteGaussian("2", shift=-10**12)
    with pytest.raises(InputError, match=r"1e9"):
        Composition(((DiscreteGaussian("2"), 10**9), (DiscreteGaussian("2"), 1)))
