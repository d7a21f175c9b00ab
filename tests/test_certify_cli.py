"""``--certify`` (delta | epsilon | tradeoff) and ``sweep --certify-headline`` in-process."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

import pytest

from exactdp.cli import main


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _digits(text: str) -> int:
    return len(text.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))


@pytest.mark.parametrize("cmd,flag,value,key", [
    ("delta", "--eps", "1", "delta"),
    ("epsilon", "--delta", "1e-10", "epsilon"),
    ("tradeoff", "--alpha", "0.05", "beta"),
])
def test_certify_adds_enclosures_on_the_right_side(capsys, cmd, flag, value, key):
    out = _json(capsys, [cmd, "--sigma2", "10000/11x20", "--sigma2", "2.5025", flag, value, flag, "1/3"
                         if cmd != "epsilon" else "1e-30", "--certify", "--json"])
    for p in out["points"]:
        lo, hi = p["enclosure"]
        assert p["certificate"] == "arb"
        assert _digits(lo) >= 20 and _digits(hi) >= 20
        assert Fraction(lo) <= Fraction(hi) and (Fraction(hi) - Fraction(lo)) <= Fraction(hi) * Fraction(1, 10**15)
        fast = Fraction(p[key])
        assert fast <= Fraction(lo) if cmd == "tradeoff" else fast >= Fraction(hi)


def test_certify_text_output_and_full_chain(capsys):
    assert main(["delta", "--allocation", "dhc-persons-2020", "--pair", "13", "13", "--eps", "26.3405888527",
                 "--certify"]) == 0
    text = capsys.readouterr().out
    assert "arb enclosure at epsilon=263405888527/10000000000: [1.78319933513051307664" in text


def test_disagreement_exits_3_with_one_line(capsys, monkeypatch):
    import exactdp.accounting.accountant as accountant

    real = accountant.delta

    def too_small(design, epsilons, **kw):  # a fast path that under-reports δ
        res = real(design, epsilons, **kw)
        pts = tuple(dataclasses.replace(p, estimate=p.estimate * (1 - 1e-6), error_bound=p.error_bound * 0)
                    for p in res.points)
        return dataclasses.replace(res, points=pts)

    monkeypatch.setattr(accountant, "delta", too_small)
    assert main(["delta", "--sigma2", "10000/11x20", "--eps", "1", "--certify", "--json"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "disagree" in err[0] and "epsilon=1" in err[0]


def test_sweep_certify_headline_writes_manifest(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["sweep", "--pairs", "13-13,1-43", "--only-deltas", "--deltas", "1e-10", "--tradeoff-half", "5",
            "--no-plots", "--quiet", "--jobs", "1", "--out", str(out), "--certify-headline", "--json"]
    res = _json(capsys, argv)
    man = json.loads((out / "manifest.json").read_text())
    cert = man["headline_certificates"]["targets"]["1e-10"]
    assert res["headline_certificates"]["1e-10"] == cert
    head = man["results"]["headline"]["1e-10"]
    for key, fast_key in (("delta_overall", "delta_overall_upper"), ("eps_overall", "eps_overall_upper")):
        lo, hi = (Fraction(x) for x in cert[key]["enclosure"])
        assert lo <= hi <= Fraction(head[fast_key]) and hi - lo <= hi * Fraction(1, 10**15)
        assert cert[key]["argmax"] == head[key.replace("overall", "argmax_pair")]
        assert cert[key]["certificate"] == "arb"
    assert cert["delta_overall"]["excluded_pairs"] + len(cert["delta_overall"]["certified_pairs"]) == 2
