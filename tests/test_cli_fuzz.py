"""A seeded fuzz of every subcommand and every input file kind (issue 34).

``tests/test_hostile_fuzz.py`` fuzzes numbers, the accounting commands, sweep/release flags
and mechanism/allocation files.  This module adds what it does not reach: ``product``,
``portfolio``, ``calibrate``, ``crosscheck``, ``tune``, ``risk``, ``countdep`` and ``warmup``
argument vectors, and *mutated* input files of every kind — mechanism (TOML, CSV),
allocation, product and tune weights files — each cut, byte-flipped, re-encoded or with a
number replaced by a hostile one (a mutation that stays valid is run).  Tune trace files
are the tune module's (``tests/test_tune_*``); here ``tune`` is only called with hostile
flags and weights.

The property of every case (as in ``test_hostile_fuzz``): it ends within :data:`BOUND`
seconds with exit 0, 2 or 3 — never 1 —, on failure exactly one line
``exactdp...: error: ...`` on stderr and no traceback, and under ``--json`` the one
envelope ``{"command", "design", "points" | "error"}``.  Cases run in-process
(``exactdp.cli.main``); the cases needing a process of their own (FIFOs, devices, memory
limits) are in ``tests/test_hostile_inputs.py``.

Seeded (``random.Random(SEED)``) and CI-sized: about 40 CPU-seconds in all.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from exactdp.cli import main

SEED = 34
#: seconds one case may take (issue 34: 60 s; refusals are immediate, valid runs a few seconds)
BOUND = 60.0
ROOT = Path(__file__).resolve().parents[1]

#: hostile values for any option
HOSTILE = ["1e999999999", "-1e999999999", "\u0661", "\U0001d7cf", "\u00a05", "5/2e3", "1e4300", "9" * 5000, "nan",
           "inf", "", " ", "1/0", "0x10", "1e", "-0", "0", "-1", "1e-400", "1e400", "3/2", "2", "1e-10", "x",
           "1,2", "\x00", "1\n2", "-", "--", "all", "1e50", "1e51", "2" * 30]


def _run(argv, capsys):
    t0 = time.perf_counter()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse (after printing its line)
        code = exc.code
    took = time.perf_counter() - t0
    out, err = capsys.readouterr()
    return code, out, err, took


@pytest.fixture(autouse=True)
def memory_guard():
    """Each case may allocate at most :data:`MEMORY` bytes beyond what the process holds
    (``RLIMIT_DATA``, POSIX): a case that tries more fails with "ran out of memory"
    (checked below) instead of taking the machine."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    with open("/proc/self/statm") as fh:  # pages: size resident shared text lib data dt
        data = int(fh.read().split()[5]) * resource.getpagesize()
    limit = data + MEMORY
    resource.setrlimit(resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


#: bytes one case may allocate (issue 34: 2 GB)
MEMORY = 2 * 10**9


def check(argv, capsys):
    """Run one case and check the property; return the exit status."""
    code, out, err, took = _run(argv, capsys)
    assert "ran out of memory" not in err, (argv, err)
    assert took < BOUND, (argv, took)
    assert code in (0, 2, 3), (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if code:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("exactdp") and ": error: " in lines[0], (argv, err)
    if "--json" in argv and code in (0, 2, 3) and out.strip() and not (code == 0 and argv[0] == "tune"):
        obj = json.loads(out)  # (tune's success object is the tune module's: it moves to the envelope there)
        assert list(obj)[:2] == ["command", "design"], (argv, list(obj))
        assert ("error" in obj) == (code != 0), (argv, obj)
        if code == 0 and argv[0] not in ("tune", "warmup"):  # tune's success object is the tune module's
            assert list(obj)[2] == "points", (argv, list(obj))
    return code


# ----------------------------------------------------------------------------- argument vectors
#: per command: a cheap valid argv and the options to make hostile
COMMANDS = {
    "product": (["product", "phsafe-2020-pr", "--cases", "1", "--quiet"],
                ["--cases", "--delta", "--alpha", "--rel-tol", "--budget-rule", "--budget-seconds", "--budget-memory",
                 "product"]),
    "portfolio": (["portfolio", "--member", "phsafe-2020-pr:1", "--quiet"],
                  ["--member", "--run", "--delta", "--alpha", "--rel-tol", "--budget-seconds"]),
    "calibrate": (["calibrate", "--sigma2", "2x3", "--delta", "1e-3"],
                  ["--sigma2", "--delta", "--eps", "--width", "--rel-tol", "--level", "--pair"]),
    "crosscheck": (["crosscheck", "--sigma2", "2x3", "--no-calibration", "--out", "{out}"],
                   ["--sigma2", "--delta", "--pair", "--rel-tol"]),
    "tune": (["tune", "--allocation", "{tiny}", "--delta", "1e-3", "--out", "{out}", "--no-profile", "--no-plots",
              "--quiet", "--jobs", "1"],
             ["--delta", "--eps", "--bounds", "--refine", "--vary", "--objective", "--backend",
              "--budget-seconds", "--allocation", "--rel-tol"]),  # --jobs: the tune module's (its cap)
    "risk decision": (["risk", "decision", "--preset", "paper", "--convention", "paper", "--p", "1/2"],
                      ["--p", "--preset", "--convention"]),
    "countdep bounds": (["countdep", "bounds", "--r", "1/10", "--n", "10"], ["--r", "--n"]),
    "warmup": (["warmup", "--help"], ["--jobs", "--bogus"]),
}
#: options whose hostile value is refused before the work starts (the valid base then never runs)
ALWAYS_REFUSED = {"tune": ["--bounds", "--delta"], "warmup": ["--bogus"]}


def _vectors():
    rng = random.Random(SEED)
    out = []
    for name, (base, flags) in COMMANDS.items():
        for _ in range(10):
            argv = list(base)
            flag = rng.choice(flags)
            value = rng.choice(HOSTILE)
            if flag == "product":
                argv[1] = value or "x"
            elif name == "warmup":
                argv = ["warmup", flag, value]
            elif flag in argv and rng.random() < 0.5:
                argv[argv.index(flag) + 1] = value
            else:
                argv += [flag, value]
            if name == "tune":  # a tune is never run here (its values' checks and costs are the tune module's)
                argv += [rng.choice(ALWAYS_REFUSED["tune"]), "1e999999999"]
            if rng.random() < 0.5:
                argv.append("--json")
            out.append(argv)
    return out


@pytest.mark.parametrize("argv", _vectors(), ids=lambda a: " ".join(a)[:60])
def test_every_subcommand_with_hostile_options(argv, tmp_path, capsys):
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(_tiny_allocation())
    argv = [a.replace("{out}", str(tmp_path / "o")).replace("{tiny}", str(tiny)) for a in argv]
    check(argv, capsys)


# ----------------------------------------------------------------------------- files
def _tiny_allocation() -> str:
    return """format = "exactdp-allocation/1"
name = "tiny"
description = "test allocation"
levels = ["A", "B"]
queries = ["q1", "q2"]
[provenance]
source = "test"
[budget]
mode = "absolute"
expected_total_rho = "4/5"
[base]
A = ["1/10", "1/5"]
B = ["1/4", "1/4"]
[paths]
1 = ["1", "1"]
2 = ["8/3", "0"]
"""


SEEDS = {
    "mechanism.toml": (ROOT / "docs/examples/design.toml").read_text(encoding="utf-8"),
    "mechanism.csv": "sigma2,shift,count\n10000/11,1,20\n2.5025,1,1\n",
    "allocation.toml": _tiny_allocation(),
    "product.toml": (ROOT / "allocations/products/phsafe-2020-pr.toml").read_text(encoding="utf-8"),
    "weights.toml": '[levels]\nA = "1"\nB = "2"\n[queries]\nq1 = "1"\nq2 = "1/2"\n',
}
#: how each kind is used (``{f}`` the file); a valid file answers within a few seconds
USES = {
    "mechanism.toml": ["delta", "--mechanisms", "{f}", "--eps", "1"],
    "mechanism.csv": ["epsilon", "--mechanisms", "{f}", "--delta", "1e-10"],
    "allocation.toml": ["delta", "--allocation", "{f}", "--pair", "1", "2", "--eps", "1"],
    "product.toml": ["product", "{f}", "--cases", "1", "--quiet"],
    "weights.toml": ["tune", "--allocation", "{tiny}", "--weights", "{f}", "--delta", "1e-3", "--out", "{out}",
                     "--no-profile", "--no-plots", "--quiet", "--jobs", "1"],
}
NUMBERS = ['"1e999999999"', '"\u0661"', "2.5", '"nan"', '"-1"', '"0"', '"1/0"', "9223372036854775808", '"1e50"',
           '"\u00a01"', '"5/2e3"', "[1]", "{a = 1}", "true", '""', '"1e-300"', "1e300"]


def _mutate(text: str, rng: random.Random) -> bytes:
    data = text.encode("utf-8")
    kind = rng.choice(["cut", "flip", "number", "number", "encoding", "nest", "empty", "nul", "dup"])
    if kind == "cut":
        return data[:rng.randrange(len(data))]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == "number":  # one quoted or bare number replaced by a hostile one
        import re

        spots = [m.span() for m in re.finditer(r'"[0-9./e+-]+"|(?<== )[0-9]+', text)]
        if spots:
            a, b = rng.choice(spots)
            return (text[:a] + rng.choice(NUMBERS) + text[b:]).encode("utf-8")
        return data
    if kind == "encoding":
        return text.encode(rng.choice(["utf-16", "utf-32", "latin-1"]), errors="replace")
    if kind == "nest":
        return data + b"\nz = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    if kind == "empty":
        return b""
    if kind == "nul":
        return data[:10] + b"\x00" + data[10:]
    return data + data  # duplicated tables / rows


def _files():
    rng = random.Random(SEED + 1)
    cases = []
    for kind in SEEDS:
        n = 6 if kind == "weights.toml" else 16
        cases += [(kind, k, _mutate(SEEDS[kind], rng)) for k in range(n)]
    return cases


@pytest.mark.parametrize("kind, k, data", _files(), ids=lambda v: str(v)[:20] if not isinstance(v, bytes) else "")
def test_mutated_input_files(kind, k, data, tmp_path, capsys):
    f = tmp_path / kind
    f.write_bytes(data)
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(_tiny_allocation())
    argv = [a.replace("{f}", str(f)).replace("{tiny}", str(tiny)).replace("{out}", str(tmp_path / "o"))
            for a in USES[kind]]
    if k % 2:
        argv.append("--json")
    check(argv, capsys)
