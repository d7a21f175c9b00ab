"""``exactdp warmup`` on a Numba without ``numba.pycc`` (deprecated upstream).

The import of ``numba.pycc`` is made to fail (``sys.modules["numba.pycc"] = None``, what
Python does for a removed module); warmup must still succeed (exit 0, the JIT cache of
every kernel built, no ahead-of-time module written, the reason said), and the kernels
must then run: a δ(ε) of one discrete Gaussian, certified against the independent
brute-force sum of :func:`harness.single_delta`.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction

import pytest
from exactdp.kernels import aot
from exactdp.kernels.aot_build import pycc_available
from exactdp.kernels.jit import KERNELS_DIGEST

from exactdp.accounting.accountant import ExactAccountant
from exactdp.cli import main
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import single_delta


@pytest.fixture
def no_pycc(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "numba.pycc", None)  # `import numba.pycc` raises ImportError
    monkeypatch.setenv("EXACTDP_AOT_DIR", str(tmp_path / "aot"))
    monkeypatch.setattr(aot, "_LOADED", [])  # no module looked up yet in this process
    return tmp_path / "aot"


def test_warmup_without_pycc_builds_the_jit_cache_and_kernels_run(no_pycc, capsys):
    assert not pycc_available()
    assert main(["warmup", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["points"][0]
    assert out["aot_available"] is False and out["aot_kernels"] == 0
    assert out["jit_kernels"] > 20 and out["byte_compiled"] in (True, False)
    assert not no_pycc.exists() or not any(no_pycc.rglob("manifest.json"))  # nothing built ahead of time
    assert aot.load(KERNELS_DIGEST)[0] is None  # the kernels below run JIT-compiled
    for eps in ("0.5", "3"):
        pt = ExactAccountant(Composition.of([DiscreteGaussian(Fraction(2), 1)])).delta([eps])[0]
        truth = single_delta(2, 1, Fraction(eps), dps=40)
        assert pt.lower <= truth <= pt.upper
        assert pt.upper - pt.lower <= 1e-9 * truth


def test_warmup_text_says_why_there_is_no_ahead_of_time_module(no_pycc, capsys):
    assert main(["warmup"]) == 0
    captured = capsys.readouterr()
    assert "numba.pycc is not available" in captured.out
    assert "numba.pycc is not available" in captured.err
