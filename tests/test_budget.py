"""The cost budget (exactdp.numerics.budget) and what is refused beyond it, before any work;
progress lines when stderr is not a terminal (exactdp.sweep.runtime.ProgressLines)."""

from __future__ import annotations

import io
import time

import pytest

from exactdp.cli import main
from exactdp.numerics.budget import (
    DEFAULT_MEMORY,
    DEFAULT_SECONDS,
    BudgetExceeded,
    check_cost,
    cost_budget,
    current_budget,
    parse_size,
)
from exactdp.numerics.errors import InputError


def test_precedence_context_then_environment_then_the_requests_default(monkeypatch):
    monkeypatch.delenv("EXACTDP_BUDGET_SECONDS", raising=False)
    monkeypatch.delenv("EXACTDP_BUDGET_MEMORY", raising=False)
    assert current_budget() == current_budget(None, None)
    assert (current_budget().seconds, current_budget().memory) == (DEFAULT_SECONDS, DEFAULT_MEMORY)
    assert current_budget(default_seconds=3600).seconds == 3600
    monkeypatch.setenv("EXACTDP_BUDGET_SECONDS", "7")
    monkeypatch.setenv("EXACTDP_BUDGET_MEMORY", "1.5G")
    assert current_budget(default_seconds=3600).seconds == 7 and current_budget().memory == 1.5e9
    with cost_budget(seconds=11):
        assert current_budget(default_seconds=3600).seconds == 11 and current_budget().memory == 1.5e9
        with cost_budget(memory=2**30):
            assert (current_budget().seconds, current_budget().memory) == (11, 2**30)
    assert current_budget().seconds == 7


@pytest.mark.parametrize("text, value", [("2G", 2e9), ("500MB", 5e8), ("1.5GiB", 1.5 * 2**30), ("123", 123)])
def test_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["0", "-1G", "2Q", "", "x", "1e999"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(InputError):
        parse_size(text)


def test_the_refusal_names_the_field_the_estimate_and_the_flag():
    with pytest.raises(BudgetExceeded) as info:
        check_cost("--tradeoff-half", 10**9, seconds=2e5, memory=1e13, what="one pair")
    msg = str(info.value)
    assert msg.startswith("--tradeoff-half=1000000000: one pair would need about")
    assert "--budget-seconds" in msg and "--budget-memory" in msg and "10 TB" in msg
    assert isinstance(info.value, InputError)  # exit status 2
    with cost_budget(seconds=3e5, memory=1e14):
        check_cost("--tradeoff-half", 10**9, seconds=2e5, memory=1e13)


@pytest.mark.parametrize("argv, needle", [
    (["--tradeoff-half", "1000000000"], "--tradeoff-half=1000000000"),
    (["--jobs", "1000"], "--jobs=1000"),
    (["--jobs", "1e20"], "--jobs='1e20'"),
    (["--budget-seconds", "1"], "--budget-seconds"),
])
def test_a_sweep_beyond_the_budget_is_refused_at_once_and_writes_nothing(tmp_path, capsys, argv, needle):
    out = tmp_path / "o"
    t0 = time.perf_counter()
    try:
        code = main(["sweep", "--out", str(out), "--no-plots", *argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.splitlines()) == 1, err
    assert time.perf_counter() - t0 < 20 and not out.exists()


def test_the_default_dhc_sweep_is_within_its_budget_and_costs_grow_with_the_settings():
    from exactdp.census.allocations import load_allocation
    from exactdp.sweep.pair import SweepSettings
    from exactdp.sweep.plan import SWEEP_DEFAULT_SECONDS, PathDesigns, check_budget, estimate_sweep, plan_tasks

    alloc = load_allocation("dhc-persons-2020")
    designs = PathDesigns(alloc)
    base = SweepSettings()
    nowhere = __import__("pathlib").Path("/nonexistent")
    tasks, reused, damaged = plan_tasks(nowhere, designs, alloc.pairs(), [], base, "")
    assert len(tasks) == 946 and reused == 0 and damaged == []
    for task in tasks[:50]:  # sizes from the structure = the built designs
        rhos = designs.rhos("pair", task[1], task[2])
        assert task[3] == len(rhos) and task[4] >= len(set(rhos))
    est = estimate_sweep(tasks, base, 1, 946)
    assert est["wall"] < SWEEP_DEFAULT_SECONDS / 10 and est["driver_bytes"] < DEFAULT_MEMORY / 4
    check_budget(tasks, base, 1, alloc.name, 946)  # not refused, even on one core
    wide = estimate_sweep(tasks, SweepSettings(tradeoff_half=4000), 1, 946)
    assert wide["cpu"] > 5 * est["cpu"] and wide["worker_bytes"] > est["worker_bytes"]


def test_progress_lines_per_tenth_and_per_minute(monkeypatch):
    from exactdp.sweep import runtime

    clock = [0.0]
    monkeypatch.setattr(runtime.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    bar = runtime.ProgressLines(100, "exactdp sweep", stream=stream)
    for k in range(100):
        clock[0] += 0.1 if k != 4 else 61.0  # a minute passes after the fifth task
        bar.update()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("exactdp sweep: 5/100 done (5 %), 1 min 01 s elapsed, about")
    assert [ln.split()[2] for ln in lines] == ["5/100"] + [f"{n}/100" for n in range(15, 100, 10)] + ["100/100"]
    assert lines[-1] == "exactdp sweep: 100/100 done (100 %), 1 min 11 s elapsed"
    assert all("\r" not in ln for ln in lines)
