"""Every reproduction of issue 26 (faults and hostile input), run as a user would.

Each case is one ``exactdp`` command (or a short Python call) in its own process: its exit
status, wall time, the peak memory of its process tree (sampled every 0.1 s; the tree is
killed beyond ``--max-memory``, default 4 GB, and after ``--timeout`` seconds, default 90)
and its stderr (line count and first line).  Prints a Markdown table (bench/hostile_inputs.md).

    python bench/hostile_inputs.py [--only SUBSTRING] [--timeout S] [--max-memory BYTES]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ALLOCATION = """format = "exactdp-allocation/1"
name = "tiny"
description = "two levels, two queries, two paths"
levels = ["A", "B"]
queries = ["q1", "q2"]
[provenance]
source = "bench/hostile_inputs.py"
[budget]
{budget}
[base]
A = [{a}]
B = ["1/20", "1/20"]
[paths]
"1" = [{p}, "1"]
"2" = ["1", "1"]
"""


def _allocation(budget='mode = "absolute"', a='"1/10", "1/10"', p='"1"'):
    return ALLOCATION.format(budget=budget, a=a, p=p)


def _files(d: Path) -> None:
    w = lambda name, text: (d / name).write_text(text)  # noqa: E731
    w("mech_s2max.toml", '[[mechanism]]\nsigma2 = "9223372036854775807"\n')
    w("mech_list.toml", "mechanism = [1, 2]\n")
    w("mech_1000.csv", "sigma2\n" + "".join(f"{k}\n" for k in range(1, 1001)))
    w("mech_500.csv", "sigma2\n" + "".join(f"{k}/7\n" for k in range(8, 508)))
    w("dupcol.csv", "sigma2,sigma2\n2,3\n")
    w("quote.csv", 'sigma2,count\n"2,3\n')
    w("nested.toml", "a = " + "[" * 100000 + "]" * 100000 + "\n")
    w("alloc_cell.toml", _allocation(a='"1e999999999", "1/10"'))
    w("alloc_paths.toml", _allocation(p='"1e999999999"'))
    w("alloc_expected.toml", _allocation(budget='mode = "absolute"\nexpected_total_rho = "1e999999999"'))
    shares = 'mode = "shares"\nglobal_scale = "{s}"\ngeolevel_shares = ["1/2", "1/2"]'
    w("alloc_scale_huge.toml", _allocation(budget=shares.format(s="1e999999999"), a='"1/2", "1/2"').replace(
        'B = ["1/20", "1/20"]', 'B = ["1/2", "1/2"]'))
    w("alloc_scale_max.toml", _allocation(budget=shares.format(s="9223372036854775807"), a='"1/2", "1/2"').replace(
        'B = ["1/20", "1/20"]', 'B = ["1/2", "1/2"]'))
    w("alloc_rho400.toml", _allocation(a='"1e400", "1/10"'))
    (d / "alloc_utf16.toml").write_bytes(_allocation().encode("utf-16"))
    (d / "alloc_binary.toml").write_bytes(bytes(range(256)))
    w("afile", "not a folder")
    import random

    rnd = random.Random(2)
    levels, queries, paths = 200, 200, 200
    values = [rnd.randint(1, 999) for _ in range(queries)]
    lines = ['format = "exactdp-allocation/1"', 'name = "big200"', 'description = "200 levels, 200 queries, 200 paths"',
             "levels = [" + ",".join(f'"L{i}"' for i in range(levels)) + "]",
             "queries = [" + ",".join(f'"q{i}"' for i in range(queries)) + "]",
             "[provenance]", 'source = "bench/hostile_inputs.py"', "[base]"]
    for i in range(levels):
        rnd.shuffle(values)
        lines.append(f"L{i} = [" + ",".join(f'"{v}/1000000"' for v in values) + "]")
    lines.append("[paths]")
    pattern = [1 - k % 2 for k in range(levels)]
    for k in range(1, paths + 1):
        rnd.shuffle(pattern)
        lines.append(f'"{k}" = [' + ",".join(f'"{m}"' for m in pattern) + "]")
    w("big200.toml", "\n".join(lines) + "\n")
    # issue 34
    os.mkfifo(d / "fifo.toml")
    (d / "zero.toml").symlink_to("/dev/zero")
    (d / "urandom.csv").symlink_to("/dev/urandom")
    w("mech_1200.csv", "sigma2\n" + "".join(f"{k}.{k % 997 + 1:03d}1\n" for k in range(1, 1201)))
    w("mech_tiny.csv", "sigma2\n1e-300\n174.9\n")
    w("mech_huge.csv", "sigma2,count\n1e300,1000000000\n")
    w("mech_shift_str.toml", '[[mechanism]]\nsigma2 = "2"\nshift = "3"\n')
    product = (Path(__file__).resolve().parents[1] / "allocations/products/phsafe-2020-pr.toml").read_text()
    for c in range(8):
        opts = ", ".join('{ "neighbour-small-household" = 0 }' for _ in range(10))
        labels = ", ".join(f'"o{k}"' for k in range(10))
        product += f'\n[[choice]]\nname = "extra {c}"\nlabels = [{labels}]'
        product += f"\noptions = [{opts}]\n"
    w("product_1e8.toml", product)


SWEEP_FAST = ["--only-deltas", "--deltas", "1e-2,1e-10", "--tradeoff-half", "20", "--no-plots", "--jobs", "2"]

_RESUME = """
import subprocess, sys
from pathlib import Path
run = lambda *a: subprocess.run([sys.executable, "-m", "exactdp", "sweep", "--pairs", "1-10,13-13", "--out", "rs",
                                 *{fast!r}, *a], capture_output=True, text=True)
first = run("--quiet")
assert first.returncode == 0, first.stderr
p = Path("rs/pairs/pair_1_10.csv")
rows = p.read_text().splitlines(keepends=True)
cells = rows[1].split(",")
cells[4] = cells[4][:-1] + ("7" if cells[4][-1] != "7" else "3")
rows[1] = ",".join(cells)
p.write_text("".join(rows))
second = run("--resume", "--quiet")
sys.stderr.write(second.stderr)
sys.exit(second.returncode)
"""

_SIGNAL = """
import os, signal, subprocess, sys, time
from pathlib import Path
p = subprocess.Popen([sys.executable, "-m", "exactdp", "sweep", "--pairs", "1-1,1-2,6-6,6-10,13-13", "--out", "sg",
                      "--quiet", *{fast!r}], stderr=subprocess.PIPE, text=True, start_new_session=True)
while not list(Path("sg").glob("pairs/*.json")):
    time.sleep(0.05)
os.kill(p.pid, signal.{sig})
_, err = p.communicate()
time.sleep(3)
left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True).stdout.split()
sys.stderr.write(err + (f"{{len(left)}} processes of the sweep left after 3 s\\n" if left else ""))
for pid in left:
    os.kill(int(pid), signal.SIGKILL)
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)
"""


def _py(code: str) -> list:
    return [sys.executable, "-c", code]


def _api(expr: str) -> list:
    return _py("import sys\nfrom decimal import Decimal\nfrom exactdp.mechanisms import Composition, DiscreteGaussian\n"
               "from exactdp.accounting.accountant import ExactAccountant\n"
               "from exactdp.numerics.errors import InputError\n"
               f"try:\n    r = {expr}\n    print(repr(r)[:100])\n"
               "except InputError as e:\n    sys.stderr.write(f'InputError: {e}\\n'); sys.exit(2)\n")


def cases() -> list:
    x = ["exactdp"]
    acc = "ExactAccountant(Composition.from_sigma2(['2']))"
    return [
        ("1 memory", "--sigma2 1e17", x + ["delta", "--sigma2", "1e17", "--eps", "1"]),
        ("1 memory", "mechanism sigma2 = 2**63-1", x + ["delta", "--mechanisms", "mech_s2max.toml", "--eps", "1"]),
        ("1 memory", "allocation global_scale = 2**63-1",
         x + ["delta", "--allocation", "./alloc_scale_max.toml", "--pair", "1", "1", "--eps", "1"]),
        ("2 hangs", 'allocation cell "1e999999999"',
         x + ["delta", "--allocation", "./alloc_cell.toml", "--pair", "1", "1", "--eps", "1"]),
        ("2 hangs", '[paths] "1e999999999"',
         x + ["delta", "--allocation", "./alloc_paths.toml", "--pair", "1", "1", "--eps", "1"]),
        ("2 hangs", 'expected_total_rho "1e999999999"',
         x + ["delta", "--allocation", "./alloc_expected.toml", "--pair", "1", "1", "--eps", "1"]),
        ("2 hangs", 'global_scale "1e999999999"',
         x + ["delta", "--allocation", "./alloc_scale_huge.toml", "--pair", "1", "1", "--eps", "1"]),
        ("2 hangs", "DiscreteGaussian('1e999999999')", _api("DiscreteGaussian('1e999999999')")),
        ("2 hangs", "DiscreteGaussian(2, shift='1e-999999999')", _api("DiscreteGaussian(2, shift='1e-999999999')")),
        ("2 hangs", "delta(['1e999999999'])", _api(f"{acc}.delta(['1e999999999'])")),
        ("2 hangs", "epsilon(['1e-999999999'])", _api(f"{acc}.epsilon(['1e-999999999'])")),
        ("2 hangs", "tradeoff(['1e-999999999'])", _api(f"{acc}.tradeoff(['1e-999999999'])")),
        ("2 hangs", "delta([Decimal('1e999999999')])", _api(f"{acc}.delta([Decimal('1e999999999')])")),
        ("2 hangs", "1,000 distinct integer σ²", x + ["delta", "--mechanisms", "mech_1000.csv", "--eps", "1"]),
        ("2 hangs", "500 distinct rationals", x + ["delta", "--mechanisms", "mech_500.csv", "--eps", "1"]),
        ("2 hangs", "--tradeoff-half 1000000000", x + ["sweep", "--out", "th", "--tradeoff-half", "1000000000"]),
        ("2 hangs", "--jobs 1000", x + ["sweep", "--out", "jb", "--jobs", "1000"]),
        ("2 hangs", "200×200 allocation (200 paths)", x + ["sweep", "--allocation", "./big200.toml", "--out", "bg"]),
        ("2 hangs", "--certify on σ² 1/1000 and 1e7",
         x + ["delta", "--sigma2", "1/1000", "--sigma2", "1e7", "--eps", "1", "--certify"]),
        ("3 resume", "one digit of pair_1_10.csv, --resume", _py(_RESUME.format(fast=SWEEP_FAST))),
        ("4 API", "Composition.from_sigma2('25')", _api("Composition.from_sigma2('25')")),
        ("4 API", "Composition.from_rhos('12')", _api("Composition.from_rhos('12')")),
        ("4 API", "a number of 5,000 digits", _api("DiscreteGaussian('9' * 5000)")),
        ("5 signals", "SIGTERM to the driver mid-sweep", _py(_SIGNAL.format(fast=SWEEP_FAST, sig="SIGTERM"))),
        ("5 signals", "kill -9 of the driver mid-sweep", _py(_SIGNAL.format(fast=SWEEP_FAST, sig="SIGKILL"))),
        ("6 exits", "mechanism = [1, 2]", x + ["delta", "--mechanisms", "mech_list.toml", "--eps", "1"]),
        ("6 exits", 'allocation ρ = "1e400"',
         x + ["delta", "--allocation", "./alloc_rho400.toml", "--pair", "1", "1", "--eps", "1"]),
        ("6 exits", "deeply nested TOML", x + ["delta", "--mechanisms", "nested.toml", "--eps", "1"]),
        ("6 exits", "--jobs 1e20", x + ["sweep", "--out", "j20", "--jobs", "1e20"]),
        ("6 exits", "σ² = 1e-300", x + ["delta", "--sigma2", "1e-300", "--eps", "1"]),
        ("6 exits", "σ² = 1e300", x + ["delta", "--sigma2", "1e300", "--eps", "1"]),
        ("6 exits", "σ² = 1e-28", x + ["delta", "--sigma2", "1e-28", "--eps", "1"]),
        ("6 exits", "UTF-16 allocation file",
         x + ["delta", "--allocation", "./alloc_utf16.toml", "--pair", "1", "1", "--eps", "1"]),
        ("6 exits", "binary allocation file",
         x + ["delta", "--allocation", "./alloc_binary.toml", "--pair", "1", "1", "--eps", "1"]),
        ("6 exits", "--alpha-min 1e-300", x + ["sweep", "--out", "am", "--alpha-min", "1e-300"]),
        ("6 exits", "--out that is a file", x + ["sweep", "--out", "afile", "--pairs", "13-13"]),
        ("6 exits", "--out unwritable (/sys)", x + ["sweep", "--out", "/sys/kernel/exactdp", "--pairs", "13-13"]),
        ("6 exits", "--only-deltas --deltas 1e-600 (plots)",
         x + ["sweep", "--out", "d600", "--pairs", "13-13", "--only-deltas", "--deltas", "1e-600", "--quiet"]),
        ("6 exits", "--sigma2 ١ (Arabic-Indic 1)", x + ["delta", "--sigma2", "١", "--eps", "1"]),
        ("6 exits", "--sigma2 𝟏 (mathematical 1)", x + ["delta", "--sigma2", "𝟏", "--eps", "1"]),
        ("6 exits", "CSV with a duplicated column", x + ["delta", "--mechanisms", "dupcol.csv", "--eps", "1"]),
        ("6 exits", "CSV with an unterminated quote", x + ["delta", "--mechanisms", "quote.csv", "--eps", "1"]),
        ("6 exits", "--pairs 13-13 --pairs 6-6",
         x + ["sweep", "--out", "pp", "--pairs", "13-13", "--pairs", "6-6", "--json", *SWEEP_FAST]),
        ("34 files", "FIFO as --mechanisms", x + ["delta", "--mechanisms", "fifo.toml", "--eps", "1"]),
        ("34 files", "/dev/zero as --mechanisms", x + ["delta", "--mechanisms", "zero.toml", "--eps", "1"]),
        ("34 files", "/dev/urandom as --mechanisms", x + ["delta", "--mechanisms", "urandom.csv", "--eps", "1"]),
        ("34 files", "FIFO as --allocation",
         x + ["delta", "--allocation", "fifo.toml", "--pair", "1", "1", "--eps", "1"]),
        ("34 files", "/dev/zero as --allocation",
         x + ["delta", "--allocation", "zero.toml", "--pair", "1", "1", "--eps", "1"]),
        ("34 files", "FIFO as a product", x + ["product", "fifo.toml"]),
        ("34 files", "/dev/zero as a product", x + ["product", "zero.toml"]),
        ("34 files", "/dev/urandom as --member", x + ["portfolio", "--member", "urandom.csv"]),
        ("34 exits", "1,200 distinct decimal σ² (CSV)", x + ["delta", "--mechanisms", "mech_1200.csv", "--eps", "1"]),
        ("34 exits", "CSV σ² 1e-300 beside 174.9, ε(δ)",
         x + ["epsilon", "--mechanisms", "mech_tiny.csv", "--delta", "1e-10"]),
        ("34 exits", "CSV σ² 1e-300 beside 174.9, β(α)",
         x + ["tradeoff", "--mechanisms", "mech_tiny.csv", "--alpha", "0.1"]),
        ("34 exits", "CSV σ² 1e300 × count 1e9", x + ["delta", "--mechanisms", "mech_huge.csv", "--eps", "1"]),
        ("34 exits", "DiscreteGaussian('2', shift=10**13)", _api("DiscreteGaussian('2', shift=10**13)")),
        ("34 strict", "--sigma2 '\\u00a02' (no-break space)", x + ["delta", "--sigma2", "\u00a02", "--eps", "1"]),
        ("34 strict", "--sigma2 5/2e3", x + ["delta", "--sigma2", "5/2e3", "--eps", "1"]),
        ("34 strict", 'TOML shift = "3"', x + ["delta", "--mechanisms", "mech_shift_str.toml", "--eps", "1"]),
        ("34 strict", "--pair 13 ١٣", x + ["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "١٣", "--eps",
                                          "1"]),
        ("34 strict", "--member dhc-persons-2020:", x + ["portfolio", "--member", "dhc-persons-2020:"]),
        ("34 budget", "a product of 2e8 cases", x + ["product", "product_1e8.toml"]),
        ("34 budget", "portfolio of 946 pairs", x + ["portfolio", "--member", "dhc-persons-2020:all"]),
        ("34 budget", "product --budget-seconds 1", x + ["product", "safetab-p-2020-us", "--budget-seconds", "1"]),
        ("34 calibrate", "calibrate --pair 13 13 --delta 1e-10 --out",
         x + ["calibrate", "--allocation", "dhc-persons-2020", "--pair", "13", "13", "--delta", "1e-10", "--out",
              "cal"]),
        ("6 exits", "lost dask scheduler (unreachable)",
         x + ["sweep", "--out", "dk", "--pairs", "13-13", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"]),
    ]


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return total


def run(argv, cwd, timeout: float, max_memory: float) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    peak, killed = 0, None
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        if peak > max_memory:
            killed = f"killed at {max_memory / 1e9:.0f} GB"
        elif time.perf_counter() - t0 > timeout:
            killed = f"killed after {timeout:.0f} s"
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return {"code": proc.returncode, "wall": wall, "peak": peak, "lines": len(lines),
            "first": killed or (lines[-1] if lines else out.strip().splitlines()[0] if out.strip() else "")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--max-memory", type=float, default=4e9)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _files(Path(tmp))
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}\n")
        print("| item | reproduction | exit | wall s | peak MB | stderr lines | last stderr line (or stdout) |")
        print("|---|---|---|---|---|---|---|")
        for item, label, argv in cases():
            if args.only not in label and args.only not in item:
                continue
            r = run(argv, tmp, args.timeout, args.max_memory)
            text = r["first"].replace(tmp + "/", "").replace("|", "\\|")
            text = text if len(text) <= 170 else text[:167] + "..."
            print(f"| {item} | {label} | {r['code']} | {r['wall']:.1f} | {r['peak'] / 1e6:.0f} | {r['lines']} | "
                  f"{text} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
