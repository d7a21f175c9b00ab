"""The sweep driver's own work per result and after the last one, old protocol against new.

Replays the pair files of a finished sweep (``SWEEP_DIR``, e.g. a DHC sweep: 946 pairs) as
if their results arrived from workers, one every ``--pace`` seconds, into a fresh folder:

* ``old`` (main 083cc26): four writer threads, each pair's four files written with an
  fsync each and the folder fsync'ed (``write_task`` as it was, frozen below); after the
  last result, ``assemble`` reads and parses every pair file.
* ``new``: :class:`exactdp.sweep.runtime.GroupWriter` (group commits: one ``syncfs`` and
  one folder fsync a group) and :class:`exactdp.sweep.tables.PairTables` filled as each
  result arrives; after the last one ``assemble(..., tables=...)``.

Both assemble without figures and with the GDP column given (as the helper process gives
it), so "end" is the driver's serial work after the last pair.  CPU is this process's
(``time.process_time``: every thread), the runs alternate; outputs are compared byte for
byte with ``SWEEP_DIR``::

    python bench/bench_sweep_driver.py /tmp/sweep_b0 --pace 0.01 --rounds 2
    python bench/bench_sweep_driver.py /tmp/sweep_b0 --pace 0.02 --rounds 3 --writes-only 100
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from types import SimpleNamespace


def _old_write_task(files, res):
    """main 083cc26's ``write_task``: an fsync a file (``atomic_write_text`` is unchanged),
    then the folder's."""
    from exactdp.sweep.io import _fsync_dir, atomic_write_text

    atomic_write_text(files["tradeoff"], res.tradeoff_csv, sync_dir=False)
    atomic_write_text(files["grid"], res.grid_csv, sync_dir=False)
    atomic_write_text(files["info"], json.dumps(res.diagnostics, indent=1, sort_keys=True) + "\n", sync_dir=False)
    atomic_write_text(files["curve"], res.curve_csv, sync_dir=False)
    _fsync_dir(files["curve"].parent)


class _GDP:
    def __init__(self, column):
        self.column = column

    def gdp_column(self, texts):
        return self.column

    def draw(self, name, *args):  # no figures (plots=False)
        pass


def _replay(kind, results, out, alloc, settings, gdp, pace, writes_only=False):
    from exactdp.sweep.io import pair_paths
    from exactdp.sweep.runtime import GroupWriter
    from exactdp.sweep.summary import assemble
    from exactdp.sweep.tables import PairTables

    (out / "pairs").mkdir(parents=True)
    c0, w0 = time.process_time(), time.perf_counter()
    if kind == "old":
        with ThreadPoolExecutor(max_workers=4) as pool:
            futs = []
            for res in results:
                futs.append(pool.submit(_old_write_task, pair_paths(out, res.i, res.j), res))
                time.sleep(pace)
            wait(futs)
        tables = None
    else:
        tables = PairTables()
        with GroupWriter(None) as writer:
            futs = []
            for res in results:
                futs.append(writer.submit(pair_paths(out, res.i, res.j), res))
                if not writes_only:
                    tables.add((res.i, res.j), res.curve_csv, res.grid_csv, res.diagnostics)
                time.sleep(pace)
            wait(futs)
    c1, w1 = time.process_time(), time.perf_counter()
    if writes_only:
        return c1 - c0, w1 - w0, 0.0, 0.0
    assemble(out, alloc, sorted((r.i, r.j) for r in results), settings, plots=False, assistant=_GDP(gdp),
             tables=tables)
    c2, w2 = time.process_time(), time.perf_counter()
    return c1 - c0, w1 - w0, c2 - c1, w2 - w1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep_dir")
    ap.add_argument("--pace", type=float, default=0.01, help="seconds between results")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--writes-only", type=int, metavar="N", default=0,
                    help="only the writes (no parsing, no assembly), of the first N pairs")
    args = ap.parse_args(argv)
    from exactdp.census.allocations import load_allocation
    from exactdp.sweep.io import pair_paths
    from exactdp.sweep.pair import SweepSettings, grid_alphas
    from exactdp.sweep.summary import gdp_column

    src = Path(args.sweep_dir)
    alloc, settings = load_allocation("dhc-persons-2020"), SweepSettings()
    results = []
    for i, j in sorted(alloc.pairs()):
        f = pair_paths(src, i, j)
        results.append(SimpleNamespace(i=i, j=j, curve_csv=f["curve"].read_text(), grid_csv=f["grid"].read_text(),
                                       tradeoff_csv=f["tradeoff"].read_text(),
                                       diagnostics=json.loads(f["info"].read_text())))
    if args.writes_only:
        results = results[:args.writes_only]
    gdp = gdp_column(grid_alphas(settings)[0], alloc.total_rho)
    root = Path(tempfile.mkdtemp(prefix="bench_driver_"))
    try:
        for rnd in range(args.rounds):
            for kind in ("old", "new"):
                out = root / f"{kind}{rnd}"
                loop_cpu, loop_wall, end_cpu, end_wall = _replay(kind, results, out, alloc, settings, gdp, args.pace,
                                                                 bool(args.writes_only))
                if args.writes_only:
                    print(f"{kind} round {rnd}: writes of {len(results)} pairs {loop_cpu / len(results) * 1e3:.2f} "
                          f"CPU-ms a pair ({loop_wall:.2f} s wall with the pacing)")
                    shutil.rmtree(out)
                    continue
                same = all((out / n).read_bytes() == (src / n).read_bytes()
                           for n in ("summary.csv", "envelope.csv", "spread_matrix.csv"))
                print(f"{kind} round {rnd}: {len(results)} results, loop {loop_cpu:.2f} CPU-s ({loop_wall:.1f} s wall "
                      f"with the pacing); end {end_cpu:.2f} CPU-s ({end_wall:.2f} s); outputs identical: {same}")
                shutil.rmtree(out)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
