"""Ahead-of-time kernels (``exactdp warmup``, :mod:`exactdp.kernels.aot`).

One build of a few kernels (``numba.pycc``, in a temporary folder) chosen to cover the
kinds of code and of data: complex and tuple results, callees compiled in, a kernel that
writes into its arguments, 1-D and 2-D arrays of float64/int64/int32/complex128, bool
arguments.  Their compiled functions are compared bit for bit with the JIT dispatchers
(the independent reference: Numba's own compilation of the same source) on random inputs
with inf, nan, −0, subnormal and huge values where the kernel's domain has them; calls
whose arguments are not of the declared kind go to the dispatcher (same conversion, same
refusal); the module is found by a new process without importing Numba.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from exactdp.kernels import aot
from exactdp.kernels.aot_build import all_kernels, export_name
from exactdp.kernels.jit import KERNELS_DIGEST

#: the kernels built by the test (one pycc build, ~20 s)
SUBSET = ("exactdp.kernels.summation.neumaier_add", "exactdp.kernels.dgauss.log_theta",
          "exactdp.kernels.dgauss.log_theta_ratio", "exactdp.kernels.dgauss.tilted_moments",
          "exactdp.kernels.dgauss.psi_consts", "exactdp.kernels.convolution.suffix_sums",
          "exactdp.kernels.convolution.convolve_strided", "exactdp.kernels.convolution.dg_pmf",
          "exactdp.kernels.profile.interval_penalty", "exactdp.kernels.profile.dd_frac2",
          "exactdp.kernels.profile.log_mgf")

_COMPARE = r'''
import json, struct, sys
import numpy as np
from exactdp.kernels import aot
from exactdp.kernels.aot_build import all_kernels, export_name
from exactdp.kernels.jit import KERNELS_DIGEST

module, manifest = aot.load(KERNELS_DIGEST)
out = {"numba_after_load": "numba" in sys.modules, "cpu": [manifest["cpu_name"], manifest["cpu_features"]]}
kernels = all_kernels(manifest["kernels"])
rng = np.random.default_rng(20261201)
EDGE = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1.5, -2.75, 1e300, -1e300,
        np.inf, -np.inf, np.nan]

def bits(x):
    if isinstance(x, tuple):
        return [bits(v) for v in x]
    if isinstance(x, np.ndarray):
        return [str(x.dtype), list(x.shape), x.tobytes().hex()]
    if isinstance(x, complex):
        return struct.pack("<dd", x.real, x.imag).hex()
    if isinstance(x, float):
        return struct.pack("<d", x).hex()
    return repr(x)

def farr(n, edge=True):
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)
    if edge:
        a[rng.integers(0, n, n // 3)] = rng.choice(EDGE, n // 3)
    return a

def fval(edge=True):
    if edge and rng.random() < 0.4:
        return float(rng.choice(EDGE))
    return float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4))

def cases(name):
    for _ in range(60):
        if name.endswith("neumaier_add"):
            yield (fval(), fval(), fval())
        elif name.endswith(("log_theta", "log_theta_ratio")):
            s2 = float(rng.choice([1.0, 2.0, 37.5, 1e7]))       # Poisson form: any a, b
            yield (fval(), fval(), s2)
            s2 = float(rng.choice([1e-3, 0.1, 0.5, 0.999999]))  # direct form: moderate a
            yield (float(rng.uniform(-50, 50)), fval(), s2)
        elif name.endswith("tilted_moments"):
            yield (float(rng.uniform(-0.5, 0.5)), float(rng.choice([1e-3, 0.3, 0.999, 1.0, 4.0, 1e7])))
        elif name.endswith("suffix_sums"):
            yield (farr(int(rng.integers(0, 40))),)
        elif name.endswith("convolve_strided"):
            yield (farr(int(rng.integers(1, 30))), farr(int(rng.integers(1, 8))), int(rng.integers(1, 5)))
        elif name.endswith("dg_pmf"):
            yield (float(rng.choice([1e-3, 0.5, 2.0, 1e7, 5e-324])), int(rng.integers(0, 30)), fval())
        elif name.endswith("interval_penalty"):
            g, k = int(rng.integers(1, 4)), int(rng.integers(1, 6))
            x0 = rng.uniform(-3, 3, (g, k))
            logd = rng.uniform(-1, 2, g)
            logd[rng.random(g) < 0.3] = -np.inf
            yield (x0, x0 + rng.uniform(0, 0.2, (g, k)), rng.uniform(0.5, 50, g), rng.integers(1, 1000, g), logd)
        elif name.endswith("dd_phases"):
            yield (rng.integers(-2**50, 2**50, int(rng.integers(0, 30))), float(rng.uniform(0, 1)),
                   float(rng.uniform(-1e-17, 1e-17)))
        elif name.endswith("sorted_tail_sums"):
            n, t = int(rng.integers(1, 30)), int(rng.integers(1, 6))
            c = np.sort(rng.uniform(-5, 5, n))[::-1].copy()
            p = rng.uniform(0, 1, n)
            b = np.sort(rng.uniform(-5, 5, n))
            suffix = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
            yield (c, p, b, suffix, rng.uniform(-6, 6, t), np.full(t, 1e-12), bool(rng.random() < 0.5),
                   rng.integers(-1, 2, (t, 2)))
        elif name.endswith("psi_consts"):
            yield (float(rng.uniform(-0.5, 0.5)), float(rng.choice([1e-3, 0.2, 0.9, 1.0, 3.0, 1e7])),
                   np.zeros(32, np.complex128), np.zeros(512))

def run(fn, args):
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    try:
        res = fn(*args)
    except Exception as exc:  # the same refusal counts as the same result
        return ["raised", type(exc).__name__]
    return [bits(res), [bits(a) for a in args if isinstance(a, np.ndarray)]]  # written-into arguments too

diff, n = [], 0
for name, kern in kernels.items():
    compiled = getattr(module, manifest["kernels"][name]["export"])
    for args in cases(name):
        n += 1
        if run(compiled, args) != run(kern.dispatcher, args):
            diff.append([name, repr(args)[:300]])
out.update(compared=n, differ=diff)
# the guard: wrong dtype / ndim / scalar kind go to the dispatcher (which refuses or converts)
fast = aot.function_for(KERNELS_DIGEST, "exactdp.kernels.convolution", "suffix_sums", kernels[
    "exactdp.kernels.convolution.suffix_sums"].signature, kernels["exactdp.kernels.convolution.suffix_sums"].py_func,
    lambda: kernels["exactdp.kernels.convolution.suffix_sums"].dispatcher)
refused = []
for bad in (np.arange(4), np.ones((2, 2)), np.ones(3, np.float32), [1.0, 2.0]):
    try:
        fast(bad)
        refused.append(False)
    except TypeError:
        refused.append(True)
out["refused"] = refused
ref = kernels["exactdp.kernels.convolution.suffix_sums"].dispatcher(np.ones(3))
out["kwargs"] = bits(fast(p=np.ones(3))) == bits(ref)
out["fallbacks"] = aot.FALLBACKS.get("exactdp.kernels.convolution.suffix_sums", 0)
print(json.dumps(out))
'''

_FIRST_CALL = r'''
import json, sys
from exactdp.kernels import convolution, dgauss
import numpy as np
got = [dgauss.log_theta(0.25, 1.0, 3.0), list(convolution.suffix_sums(np.array([1.0, 2.0])))]
print(json.dumps({"numba": "numba" in sys.modules, "rebound": type(dgauss.log_theta).__name__,
                  "repr": repr(dgauss.log_theta_real), "got": repr(got)}))
'''


@pytest.fixture(scope="module")
def aot_env(tmp_path_factory):
    """An environment whose ahead-of-time folder holds a build of :data:`SUBSET`."""
    env = {**os.environ, "EXACTDP_AOT_DIR": str(tmp_path_factory.mktemp("aot")), "EXACTDP_AOT": "1"}
    code = f"from exactdp.kernels.aot_build import build\nbuild({list(SUBSET)!r})\n"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return env


def _child(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_compiled_kernels_are_the_jit_bit_for_bit(aot_env):
    import llvmlite.binding as ll

    got = _child(_COMPARE, aot_env)
    assert got["numba_after_load"] is False
    assert got["cpu"] == [ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten()]  # the JIT's target
    assert got["compared"] > 600 and got["differ"] == []
    assert got["refused"] == [True] * 4 and got["kwargs"] and got["fallbacks"] == 4


def test_a_new_process_calls_them_without_numba(aot_env):
    got = _child(_FIRST_CALL, aot_env)
    reference = _child(_FIRST_CALL, {**aot_env, "EXACTDP_AOT": "0"})
    assert got["numba"] is False and reference["numba"] is True
    assert got["got"] == reference["got"]
    assert got["rebound"] == "function" and reference["rebound"] == "CPUDispatcher"
    assert "not loaded yet" in got["repr"]  # a kernel not called stays unbuilt


def test_require_mode_names_a_missing_kernel(aot_env):
    code = "from exactdp.kernels import tilted\nimport numpy as np\ntilted.node_trig(np.arange(3), 8)\n"
    out = subprocess.run([sys.executable, "-c", code], env={**aot_env, "EXACTDP_AOT": "require"},
                         capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "node_trig" in out.stderr and "exactdp warmup" in out.stderr


def test_every_kernel_signature_can_be_exported_and_checked():
    kernels = all_kernels()
    jit_only = {name: kern.signature for name, kern in kernels.items() if aot.parse_args(kern.signature) is None}
    assert len(kernels) > 30 and len(jit_only) <= len(kernels) // 10, jit_only  # today: none
    assert len({export_name(n) for n in kernels}) == len(kernels)
    assert aot.parse_args("float64(float64[::1])") is None and aot.parse_args("float64(float32)") is None
    assert aot.parse_args("Tuple((float64[:], int64))(int32[:, :], boolean)") == [("array", "int32", 2),
                                                                                  ("scalar", "boolean")]


def test_the_key_follows_the_sources_and_the_switch(monkeypatch):
    key = aot.build_key(KERNELS_DIGEST)
    assert key != aot.build_key(KERNELS_DIGEST + "x")
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")  # Numba's code generation settings are part of it
    assert aot.build_key(KERNELS_DIGEST) != key
    monkeypatch.setenv("EXACTDP_AOT", "0")
    assert aot.aot_mode() == "off"
    monkeypatch.setenv("EXACTDP_AOT", "require")
    assert aot.aot_mode() == "require"
