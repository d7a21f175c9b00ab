"""The sweep worker's collector policy (exactdp.sweep.runtime.after_worker_task).

A worker process settles its heap after its first task (gc.freeze, rarer collections);
the driver's own process — tasks run in it with one job, or a user's Python calling
``run_sweep`` — keeps its collector as it was.  Both sides are checked in fresh
interpreters, so the test process's collector is never touched.
"""

import json
import subprocess
import sys

from exactdp.sweep.runtime import WORKER_GC_GEN0_FACTOR, WORKER_GC_THRESHOLD2

_PROBE = """
import gc, json, sys
from exactdp.sweep import runtime
if sys.argv[1] == "driver":
    runtime.mark_driver_process()
before = (gc.get_threshold(), gc.get_freeze_count())
runtime.after_worker_task()
once = (gc.get_threshold(), gc.get_freeze_count())
runtime.after_worker_task()
twice = (gc.get_threshold(), gc.get_freeze_count())
print(json.dumps([before, once, twice]))
"""


def _probe(role: str):
    out = subprocess.run([sys.executable, "-c", _PROBE, role], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_worker_settles_its_heap_once():
    (thr0, frozen0), (thr1, frozen1), (thr2, frozen2) = _probe("worker")
    assert frozen1 > frozen0  # the objects alive after the first task are out of the collector's scans
    assert thr1 == [WORKER_GC_GEN0_FACTOR * thr0[0], thr0[1], WORKER_GC_THRESHOLD2]
    assert thr2 == thr1  # settled once: a second task changes nothing
    assert frozen2 == frozen1


def test_the_driver_process_keeps_its_collector():
    (thr0, frozen0), (thr1, frozen1), (thr2, frozen2) = _probe("driver")
    assert thr0 == thr1 == thr2
    assert frozen0 == frozen1 == frozen2 == 0


def test_a_one_job_sweep_leaves_the_callers_collector_alone(tmp_path):
    probe = (
        "import gc, json, sys\n"
        "from exactdp.sweep.driver import run_sweep\n"
        "before = gc.get_threshold()\n"
        "from exactdp.sweep.pair import SweepSettings\n"
        "s = SweepSettings(deltas=('1e-10',), tradeoff_half=20, envelope_points=11)\n"
        "run_sweep(out=sys.argv[1], pairs='13-13,1-1', settings=s, jobs=1, plots=False)\n"
        "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "s")], capture_output=True, text=True,
                         check=True)
    before, after, frozen = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == after and frozen == 0
