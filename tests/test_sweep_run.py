"""The sweep driver: determinism across --jobs, kill -9 and --resume, summary maxima,
CLI errors.  Small settings (few δ, few trade-off vertices, light pairs) keep it fast."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from exactdp.cli import main
from exactdp.sweep.driver import run_sweep
from exactdp.sweep.io import read_csv
from exactdp.sweep.pair import SweepSettings

PAIRS = "13-13,2-2,1-43,8-8,20-30,12-40"
FAST = SweepSettings(deltas=("1e-2", "1e-10", "1e-30"), tradeoff_half=30)
CLI_FAST = ["--only-deltas", "--deltas", "1e-2,1e-10,1e-30", "--tradeoff-half", "30", "--quiet"]


def data_files(out: Path) -> dict:
    """All data files (CSV) of a sweep folder, by relative path -> bytes."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.csv"))}


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    rep = run_sweep("dhc-persons-2020", out, pairs=PAIRS, settings=FAST, jobs=1, plots=False)
    return out, rep


def test_reference_run_layout(reference_run):
    out, rep = reference_run
    assert rep.n_pairs == 6 and rep.computed == 6 and rep.reused == 0
    names = sorted(p.name for p in (out / "pairs").iterdir())
    expected = sorted(f"pair_{i}_{j}{suf}" for i, j in [(13, 13), (2, 2), (1, 43), (8, 8), (20, 30), (12, 40)]
                      for suf in (".csv", "_tradeoff.csv", "_grid.csv", ".json"))
    assert names == expected
    assert rep.manifest["status"] == "complete"
    assert rep.manifest["allocation"]["content_hash"] == __import__(
        "exactdp.census.allocations", fromlist=["x"]).load_allocation("dhc-persons-2020").content_hash()
    for v in rep.manifest["results"]["worst_certified"].values():
        assert float(v) <= 1e-9


def test_summary_max_and_argmax_against_direct_accounting(reference_run):
    """The overall δ at the Bureau's ε is the max over pairs: recomputed here pair by pair
    with the accountant directly (not from the sweep's files)."""
    from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition

    out, _ = reference_run
    summary = {r["delta_target"]: r for r in read_csv(out / "summary.csv")}
    alloc = load_allocation("dhc-persons-2020")
    direct = {}
    for spec in PAIRS.split(","):
        i, j = map(int, spec.split("-"))
        acc = ExactAccountant(Composition.from_rhos(alloc.pair_rhos(i, j)))
        direct[(i, j)] = acc.delta([bun_steinke_epsilon(acc.rho, "1e-10")])[0]
    row = summary["1e-10"]
    best = max(direct.values(), key=lambda p: p.estimate)
    assert abs(mpmath.mpf(row["delta_overall"]) / best.estimate - 1) < 1e-12
    i, j = map(int, row["delta_argmax_pair"].split("-"))
    # the argmax is the largest estimate, or indistinguishable from it within the bounds
    assert direct[(i, j)].estimate + direct[(i, j)].error_bound >= best.estimate - best.error_bound
    lo = min(direct.values(), key=lambda p: p.estimate)
    assert abs(mpmath.mpf(row["delta_min"]) / lo.estimate - 1) < 1e-12
    # headline of the paper: Bureau's ε = 26.3406 at δ = 1e-10, exact δ ≈ 1.78e-12
    assert abs(float(row["eps_bureau"]) - 26.3406) < 1e-4
    assert 1.7e-12 < float(row["delta_overall"]) < 1.9e-12
    assert mpmath.mpf(row["delta_overall_lower"]) <= mpmath.mpf(row["delta_overall"]) <= mpmath.mpf(
        row["delta_overall_upper"])
    # the exact ε at δ = 1e-10 lies below the Bureau's
    assert float(row["eps_overall_upper"]) < float(row["eps_bureau"])


def test_envelope_is_convex_and_below_pairs(reference_run):
    out, _ = reference_run
    env = read_csv(out / "envelope.csv")
    with mpmath.workdps(30):
        a = [mpmath.mpf(r["alpha"]) for r in env]
        b = [mpmath.mpf(r["beta_envelope"]) for r in env]
        pm = [mpmath.mpf(r["beta_pointwise_min"]) for r in env]
        assert all(x < y for x, y in zip(a, a[1:]))
        assert all(e <= p * (1 + mpmath.mpf(10) ** -18) for e, p in zip(b, pm))
        # convex: slopes non-decreasing (up to the 20-digit rounding of the printed β)
        s = [(b[k + 1] - b[k]) / (a[k + 1] - a[k]) for k in range(len(a) - 1)]
        assert all(s[k] <= s[k + 1] + 1e-8 * abs(s[k]) for k in range(len(s) - 1))
    # symmetric design: f(f(α)) = α at the midpoint where α = β (to grid resolution)
    mid = min(env, key=lambda r: abs(float(r["alpha"]) - float(r["beta_envelope"])))
    assert abs(float(mid["alpha"]) - float(mid["beta_envelope"])) < 0.01


def test_jobs_do_not_change_outputs(reference_run, tmp_path):
    out, _ = reference_run
    out2 = tmp_path / "j2"
    rep = run_sweep("dhc-persons-2020", out2, pairs=PAIRS, settings=FAST, jobs=2, plots=False)
    assert rep.computed == 6
    assert data_files(out2) == data_files(out)


def test_kill_and_resume_is_byte_identical(tmp_path):
    # the default 42 δ make each pair take ~0.2 s, so the kill lands mid-run
    ref = tmp_path / "uninterrupted"
    run_sweep("dhc-persons-2020", ref, pairs=PAIRS, settings=SweepSettings(tradeoff_half=30), jobs=1, plots=False)
    out = tmp_path / "killed"
    cli = ["--tradeoff-half", "30", "--quiet"]
    cmd = [sys.executable, "-m", "exactdp", "sweep", "--pairs", PAIRS, "--out", str(out), "--jobs", "1",
           "--no-plots"] + cli
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            done = list((out / "pairs").glob("pair_*_*[0-9].csv")) if (out / "pairs").is_dir() else []
            if done or proc.poll() is not None:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    n_done = len(list((out / "pairs").glob("pair_*_*[0-9].csv")))
    assert 1 <= n_done < 6, "the kill should land after the first pair and before the last"
    assert main(["sweep", "--pairs", PAIRS, "--out", str(out), "--jobs", "1", "--no-plots", "--resume"] + cli) == 0
    import json

    man = json.loads((out / "manifest.json").read_text())
    assert man["run"]["reused"] == n_done and man["run"]["computed"] == 6 - n_done
    assert data_files(out) == data_files(ref)
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]


def test_resume_refuses_other_settings(reference_run, tmp_path, capsys):
    out = tmp_path / "r"
    run_sweep("dhc-persons-2020", out, pairs="13-13", settings=FAST, jobs=1, plots=False)
    code = main(["sweep", "--pairs", "13-13", "--out", str(out), "--resume", "--only-deltas", "--deltas", "1e-3",
                 "--tradeoff-half", "30", "--quiet"])
    assert code == 2
    assert "different settings" in capsys.readouterr().err
    # and a finished folder is not overwritten without --resume
    code = main(["sweep", "--pairs", "13-13", "--out", str(out), "--no-plots"] + CLI_FAST)
    assert code == 2
    assert "--resume" in capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [
    (["--pairs", "13-99"], "out of range"),
    (["--pairs", "13-x"], "pairs"),
    (["--pairs", "13-13,13-13"], "listed twice"),
    (["--allocation", "no-such-allocation"], "unknown built-in allocation"),
    (["--deltas", "2"], "--deltas"),
    (["--backend", "dask"], "--scheduler"),
    (["--jobs", "0"], "--jobs"),
    # (--with-pl94 is not refused: tests/test_biglattice.py runs it)
    (["--pairs", "13-13", "--with-pl94", "13-99"], "out of range"),
])
def test_cli_errors(tmp_path, capsys, argv, needle):
    code = main(["sweep", "--out", str(tmp_path / "e"), "--quiet", "--no-plots"] + argv)
    assert code == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_cli_main_job_help_and_output(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["sweep", "--pairs", "13-13", "--out", str(out), "--json"] + CLI_FAST) == 0
    import json

    obj = json.loads(capsys.readouterr().out)
    head = {pt["delta"]: pt for pt in obj["points"]}
    assert obj["command"] == "sweep" and obj["n_pairs"] == 1 and head["1e-10"]["delta_argmax_pair"] == "13-13"
    for stem in ("eps_delta", "tradeoff", "spread_heatmap"):
        for ext in ("png", "pdf"):
            assert (out / "plots" / f"{stem}.{ext}").stat().st_size > 1000
    row = read_csv(out / "pairs" / "pair_13_13.csv")[2]
    assert row["delta_target"] == "1e-30" and Fraction(row["eps_upper"]) >= Fraction(row["eps_lower"])


def test_reproduce_figures_script(reference_run, tmp_path):
    """scripts/reproduce_figures.py: figures exist and the proxy gap is (δ_max − δ_13-13)/δ_max
    recomputed here from the pair files."""
    import importlib.util

    out, _ = reference_run
    path = Path(__file__).resolve().parents[1] / "scripts" / "reproduce_figures.py"
    spec = importlib.util.spec_from_file_location("reproduce_figures", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    figs = tmp_path / "figs"
    assert mod.main([str(out), "--out", str(figs)]) == 0
    for stem in ("fig_eps_delta", "fig_tradeoff", "fig_proxy_sensitivity"):
        assert (figs / f"{stem}.png").is_file() and (figs / f"{stem}.pdf").is_file()
    rows = {r["delta_target"]: r for r in read_csv(figs / "proxy_sensitivity.csv")}
    with mpmath.workdps(30):
        for d in FAST.deltas:
            vals = [mpmath.mpf(read_csv(p)[FAST.deltas.index(d)]["delta_exact"])
                    for p in sorted((out / "pairs").glob("pair_*_*[0-9].csv"))]
            proxy = mpmath.mpf(read_csv(out / "pairs" / "pair_13_13.csv")[FAST.deltas.index(d)]["delta_exact"])
            gap = (max(vals) - proxy) / max(vals) * 100
            assert abs(mpmath.mpf(rows[d]["gap_percent"]) - gap) <= 1e-6 * abs(gap) + 1e-12


def test_pairs_of_one_composition_are_computed_once_and_written_as_computed(tmp_path):
    # DHC pairs 1-2 and 13-26 compose the same multiset of ρ (so do 1-5 and 3-13): one of
    # each is computed, the other written from its result relabelled — byte for byte what
    # compute_pair gives for it (the labels are the first two fields of the ε–δ rows)
    from exactdp.census.allocations import load_allocation
    from exactdp.sweep.io import pair_paths
    from exactdp.sweep.pair import compute_pair
    from exactdp.sweep.twins import composition_key

    alloc = load_allocation("dhc-persons-2020")
    assert composition_key(alloc.pair_rhos(1, 2)) == composition_key(alloc.pair_rhos(13, 26))
    assert composition_key(alloc.pair_rhos(1, 2)) != composition_key(alloc.pair_rhos(1, 5))
    out = tmp_path / "twins"
    rep = run_sweep("dhc-persons-2020", out, pairs="1-2,13-26,1-5,3-13", settings=FAST, jobs=1, plots=False)
    assert rep.computed == 4
    timed = [k for k, v in rep.manifest["timings"]["pairs"].items() if sum(v.values()) > 0]
    assert sorted(timed) == ["pair:1-2", "pair:1-5"]
    for i, j in [(13, 26), (3, 13), (1, 2)]:
        direct = compute_pair(i, j, alloc.pair_rhos(i, j), FAST)
        files = pair_paths(out, i, j)
        assert files["curve"].read_text() == direct.curve_csv
        assert files["tradeoff"].read_text() == direct.tradeoff_csv
        assert files["grid"].read_text() == direct.grid_csv
