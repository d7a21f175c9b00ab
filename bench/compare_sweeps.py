"""Compare two sweep output folders number by number (issue 14: "same outputs").

For every pair file present in both folders and for the summary it checks that

* each certified bracket of the new run overlaps the old one: δ(ε) ``[δ − err, δ_upper]``
  (``delta_exact ± delta_error_bound``, upper column), ε(δ) ``[eps_lower, eps_upper]``,
  trade-off vertices ``β(1 ± β_rel_error)`` (same thresholds and α), the summary's
  overall δ and ε ``[lower, upper]``;
* and reports how much the estimates moved (largest relative change), how the certified
  errors changed (largest new/old ratio of each bound), which files are byte-identical,
  and the manifest's worst certified errors side by side.

Usage: python bench/compare_sweeps.py OLD_DIR NEW_DIR   (exit status 1 if a bracket fails
to overlap, a file or row is missing, or the pair sets differ)
"""

from __future__ import annotations

import csv
import filecmp
import json
import sys
from fractions import Fraction
from pathlib import Path


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _q(x: str) -> Fraction:
    return Fraction(x)


class Report:
    def __init__(self):
        self.failures: list[str] = []
        self.moved = {}  # name → largest relative change of an estimate
        self.err_ratio = {}  # name → (largest new/old, smallest new/old) of a bound

    def fail(self, msg: str):
        if len(self.failures) < 50:
            print("FAIL", msg)
        self.failures.append(msg)

    def overlap(self, where: str, lo_a, hi_a, lo_b, hi_b):
        if lo_a > hi_b or lo_b > hi_a:
            self.fail(f"{where}: [{float(lo_a):.17g}, {float(hi_a):.17g}] vs [{float(lo_b):.17g}, {float(hi_b):.17g}]")

    def move(self, name: str, old, new):
        if old != 0:
            r = abs(float((new - old) / old))
            self.moved[name] = max(self.moved.get(name, 0.0), r)

    def ratio(self, name: str, old, new):
        old, new = float(old), float(new)
        if old > 0:
            hi, lo = self.err_ratio.get(name, (0.0, float("inf")))
            self.err_ratio[name] = (max(hi, new / old), min(lo, new / old))


def _paired(rep: Report, old: Path, new: Path) -> list:
    """The rows of both files side by side ([] and a failure when the counts differ)."""
    a, b = _rows(old), _rows(new)
    if len(a) != len(b):
        rep.fail(f"{new.name}: {len(a)} rows vs {len(b)}")
        return []
    return list(zip(a, b))


def compare_pair_csv(rep: Report, old: Path, new: Path):
    for ra, rb in _paired(rep, old, new):
        where = f"{new.name} δ={ra['delta_target']}"
        if ra["delta_target"] != rb["delta_target"] or ra["eps_bureau"] != rb["eps_bureau"]:
            rep.fail(f"{where}: targets differ")
            continue
        da, db = _q(ra["delta_exact"]), _q(rb["delta_exact"])
        ea, eb = _q(ra["delta_error_bound"]), _q(rb["delta_error_bound"])
        rep.overlap(where + " delta", da - ea * da, _q(ra["delta_upper"]), db - eb * db, _q(rb["delta_upper"]))
        rep.move("delta_exact", da, db)
        rep.ratio("delta_error_bound", ea, eb)
        rep.overlap(where + " eps", _q(ra["eps_lower"]), _q(ra["eps_upper"]), _q(rb["eps_lower"]), _q(rb["eps_upper"]))
        rep.move("eps_exact", _q(ra["eps_exact"]), _q(rb["eps_exact"]))
        rep.ratio("eps_width", _q(ra["eps_upper"]) - _q(ra["eps_lower"]), _q(rb["eps_upper"]) - _q(rb["eps_lower"]))


def compare_tradeoff(rep: Report, old: Path, new: Path):
    for ra, rb in _paired(rep, old, new):
        where = f"{new.name} threshold {ra['threshold']}"
        if ra["threshold"] != rb["threshold"]:
            rep.fail(f"{where}: thresholds differ")
            continue
        for col in ("alpha", "beta"):
            va, vb = _q(ra[col]), _q(rb[col])
            ea, eb = _q(ra[col + "_rel_error"]), _q(rb[col + "_rel_error"])
            rep.overlap(f"{where} {col}", va * (1 - ea), va * (1 + ea), vb * (1 - eb), vb * (1 + eb))
            rep.move(col, va, vb)
            rep.ratio(col + "_rel_error", ea, eb)


def compare_summary(rep: Report, old: Path, new: Path):
    for ra, rb in _paired(rep, old, new):
        where = f"summary δ={ra['delta_target']}"
        for name in ("delta_overall", "eps_overall"):
            rep.overlap(f"{where} {name}", _q(ra[name + "_lower"]), _q(ra[name + "_upper"]),
                        _q(rb[name + "_lower"]), _q(rb[name + "_upper"]))
            rep.move("summary " + name, _q(ra[name]), _q(rb[name]))
        for col in ("delta_argmax_pair", "eps_argmax_pair", "delta_argmin_pair", "eps_argmin_pair"):
            if ra[col] != rb[col]:
                print(f"note: {where} {col} {ra[col]} -> {rb[col]}")


def main(argv) -> int:
    old, new = Path(argv[1]), Path(argv[2])
    rep = Report()
    names_a = {p.name for p in (old / "pairs").iterdir()}
    names_b = {p.name for p in (new / "pairs").iterdir()}
    if names_a != names_b:
        rep.fail(f"pair files differ: {len(names_a ^ names_b)} only on one side")
    identical = differ = 0
    for name in sorted(names_a & names_b):
        pa, pb = old / "pairs" / name, new / "pairs" / name
        if filecmp.cmp(pa, pb, shallow=False):
            identical += 1
            continue
        differ += 1
        if name.endswith("_tradeoff.csv"):
            compare_tradeoff(rep, pa, pb)
        elif name.endswith("_grid.csv"):
            pass  # interpolated from the vertices compared above
        elif name.endswith(".csv"):
            compare_pair_csv(rep, pa, pb)
        elif name.endswith(".json"):  # per-pair facts; timings differ from run to run
            ja, jb = json.loads(pa.read_text()), json.loads(pb.read_text())
            for k in ja:
                if k.startswith("worst_"):
                    rep.ratio("pair " + k, ja[k], jb[k])
                elif k not in ("seconds", "timings", "checksums", "self_sha256", "sweep_identity") \
                        and ja[k] != jb.get(k):
                    rep.fail(f"{name}: {k} {ja[k]} -> {jb.get(k)}")
    compare_summary(rep, old / "summary.csv", new / "summary.csv")
    same_summary = filecmp.cmp(old / "summary.csv", new / "summary.csv", shallow=False)
    ma = json.loads((old / "manifest.json").read_text())["results"]
    mb = json.loads((new / "manifest.json").read_text())["results"]
    print(f"pair files: {identical} byte-identical, {differ} differ; summary.csv byte-identical: {same_summary}")
    for k in ma["worst_certified"]:
        print(f"worst certified {k}: old {ma['worst_certified'][k]}  new {mb['worst_certified'][k]}")
    print(f"envelope: old {ma['envelope']}  new {mb['envelope']}")
    for k, v in sorted(rep.moved.items()):
        print(f"largest relative change of {k}: {v:.3g}")
    for k, (hi, lo) in sorted(rep.err_ratio.items()):
        print(f"bound {k}: new/old between {lo:.12g} and {hi:.12g}")
    print("brackets:", "all overlap" if not rep.failures else f"{len(rep.failures)} FAILURES")
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
