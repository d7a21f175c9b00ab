"""Group commit of the sweep's pair files (io.write_tasks, runtime.GroupWriter) and the
pair tables the driver fills as results arrive (sweep.tables.PairTables).

The protocol: every temporary file of a group is written, one durability barrier, then
the renames (a task's curve last), then one fsync per folder; a task's future is done only
after that.  The references are the files' intended texts and the order of the calls."""

import os
import threading
from concurrent.futures import Future
from types import SimpleNamespace

import pytest

from exactdp.sweep import io as sio
from exactdp.sweep.io import info_text, pair_paths, remove_temp_files, task_complete, write_tasks
from exactdp.sweep.pair import GRID_COLUMNS, PAIR_COLUMNS, TRADEOFF_COLUMNS
from exactdp.sweep.runtime import GroupWriter
from exactdp.sweep.tables import PairTables

DELTAS = ("1e-3", "1e-6")


def _result(i, j, shift=0):
    rows = [",".join(PAIR_COLUMNS)]
    for k, d in enumerate(DELTAS):
        vals = [str(i), str(j), d, "1.5"]
        vals += [f"{(k + 1) * (7 + shift + m)}e-{5 + m}" for m in range(len(PAIR_COLUMNS) - 4)]
        rows.append(",".join(vals))
    trade = [",".join(TRADEOFF_COLUMNS), "0,0,0,1,0", "1,0.5,0,0.25,0", "2,1,0,0,0"]
    grid = [",".join(GRID_COLUMNS)] + [f"{a},{1 - a - 0.01 * shift},1e-12" for a in (0.25, 0.5, 0.75)]
    info = {"method": "exact", "worst_delta_rel_error": 1e-10 * (1 + shift), "worst_eps_rel_width": 2e-11,
            "worst_tradeoff_rel_error": 3e-11, "nodes_kept": 5}
    return SimpleNamespace(i=i, j=j, curve_csv="\n".join(rows) + "\n", tradeoff_csv="\n".join(trade) + "\n",
                           grid_csv="\n".join(grid) + "\n", diagnostics=info)


def _expected(res):
    texts = {"tradeoff": res.tradeoff_csv, "grid": res.grid_csv, "curve": res.curve_csv}
    return {**texts, "info": info_text(res.diagnostics, texts)}  # the diagnostics with the checksums


def _check_files(out, res):
    files = pair_paths(out, res.i, res.j)
    for name, text in _expected(res).items():
        assert files[name].read_text(encoding="utf-8") == text
    assert task_complete(files, DELTAS, 3)


@pytest.mark.parametrize("syncfs", [True, False])
def test_group_commit_barrier_before_renames_then_folder_fsync(tmp_path, monkeypatch, syncfs):
    events = []
    real_replace, real_fsync = os.replace, os.fsync
    monkeypatch.setattr(sio, "_SYNCFS", (lambda fd: events.append("barrier") or 0) if syncfs else None)
    monkeypatch.setattr(sio.os, "replace", lambda a, b: (events.append("rename"), real_replace(a, b))[1])
    monkeypatch.setattr(sio.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(sio, "_fsync_dir", lambda folder: events.append("dir"))
    results = [_result(1, 2), _result(1, 3, 1), _result(2, 2, 2)]
    write_tasks([(pair_paths(tmp_path, r.i, r.j), r, r.diagnostics) for r in results])
    for r in results:
        _check_files(tmp_path, r)
    assert not list(tmp_path.rglob(".*.tmp-*"))
    renames = [k for k, e in enumerate(events) if e == "rename"]
    assert len(renames) == 12
    syncs = [k for k, e in enumerate(events) if e in ("barrier", "fsync")]
    # one barrier a group with syncfs, else one fsync a file: all before the first rename
    assert len(syncs) == (1 if syncfs else 12) and max(syncs) < min(renames)
    assert events[renames[-1] + 1:] == ["dir"]  # one folder, fsync'ed once, after the renames


def test_crash_between_renames_leaves_complete_or_incomplete_tasks(tmp_path, monkeypatch):
    real_replace = os.replace
    done = []

    def replace(a, b):
        if len(done) == 6:  # task 1's four files and two of task 2's
            raise KeyboardInterrupt("killed")
        done.append(b)
        real_replace(a, b)

    monkeypatch.setattr(sio.os, "replace", replace)
    results = [_result(1, 2), _result(1, 3, 1), _result(2, 2, 2)]
    with pytest.raises(KeyboardInterrupt):
        write_tasks([(pair_paths(tmp_path, r.i, r.j), r, r.diagnostics) for r in results])
    monkeypatch.setattr(sio.os, "replace", real_replace)
    assert remove_temp_files(tmp_path) == 6
    _check_files(tmp_path, results[0])
    for r in results[1:]:
        assert not task_complete(pair_paths(tmp_path, r.i, r.j), DELTAS, 3)
    for r in results:  # every final name holds its whole text
        for name, path in pair_paths(tmp_path, r.i, r.j).items():
            assert path.is_file() == (path in done)
            if path in done:
                assert path.read_text(encoding="utf-8") == _expected(r)[name]


def test_group_writer_groups_tasks_and_reports_them_once_durable(tmp_path, monkeypatch):
    groups = []
    real = sio.write_tasks

    def spy(items):
        groups.append(len(items))
        real(items)

    monkeypatch.setattr("exactdp.sweep.runtime.write_tasks", spy)
    before: Future = Future()
    results = [_result(1, j, j) for j in range(1, 6)]
    with GroupWriter(before, gather=0.2) as writer:
        futs = [writer.submit(pair_paths(tmp_path, r.i, r.j), r) for r in results]
        assert not any(f.done() for f in futs)  # nothing before the manifest is written
        before.set_result(None)
        for f in futs:
            assert f.result(timeout=30) is None
    assert sum(groups) == 5 and len(groups) < 5
    for r in results:
        _check_files(tmp_path, r)


def test_group_writer_hands_errors_to_every_task(tmp_path):
    failed: Future = Future()
    failed.set_exception(OSError("manifest not written"))
    with GroupWriter(failed, gather=0.01) as writer:
        futs = [writer.submit(pair_paths(tmp_path, 1, j), _result(1, j)) for j in (1, 2)]
    for f in futs:
        with pytest.raises(OSError, match="manifest"):
            f.result(timeout=30)
    (tmp_path / "pairs").write_text("not a folder")  # a write that fails
    with GroupWriter(None, gather=0.01) as writer:
        fut = writer.submit(pair_paths(tmp_path, 1, 1), _result(1, 1))
    with pytest.raises(OSError):
        fut.result(timeout=30)
    assert not any(t.name == "exactdp-write" for t in threading.enumerate())


def test_tables_from_texts_equal_tables_from_files(tmp_path):
    results = [_result(1, 2), _result(3, 4, 3)]
    write_tasks([(pair_paths(tmp_path, r.i, r.j), r, r.diagnostics) for r in results])
    mem, disk = PairTables(), PairTables()
    for r in results:
        crlf = r.curve_csv.replace("\n", "\r\n")  # read back as "\n" from a file
        mem.add((r.i, r.j), crlf, r.grid_csv, r.diagnostics)
        disk.add_files(tmp_path, r.i, r.j)
    for name in ("curves", "records", "grids", "infos"):
        assert getattr(mem, name) == getattr(disk, name)
    assert all((mem.betas[k] == disk.betas[k]).all() for k in mem.betas)
    assert mem.grids[(1, 2)]["alpha"] is mem.grids[(3, 4)]["alpha"]  # one α list for all pairs
    assert set(mem.infos[(1, 2)]) == {"method", "worst_delta_rel_error", "worst_eps_rel_width",
                                      "worst_tradeoff_rel_error"}
