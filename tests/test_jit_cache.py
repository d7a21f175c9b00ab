"""The JIT policy's cache stamp (kernels/jit.py): a cached kernel is reused only when no
kernel module changed.

Numba keys a cached kernel on its own file only, so a kernel compiled with a callee of
another file would keep running the old callee after that file changed (numba #1833;
seen here when log ψ in dgauss.py changed under the cached node factors of tilted.py).
Every kernel's stamp carries a digest of all kernel sources: checked in fresh processes on
an empty cache folder — compiled, then loaded, then compiled again once the digest differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
import exactdp.kernels.jit as J
if len(sys.argv) > 1:
    J.KERNELS_DIGEST = sys.argv[1]  # as after an edit of some kernel module
from exactdp.kernels import summation
summation.neumaier_add(1.0, 0.0, 1e-20)
d = summation.neumaier_add
print(json.dumps([sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()),
                  d._cache._cache_file._source_stamp[1]]))
"""


def _run(cache_dir, *args):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "EXACTDP_AOT": "0"}  # the JIT path
    out = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_cached_kernel_is_reloaded_only_under_the_same_kernel_sources(tmp_path):
    from exactdp.kernels.jit import KERNELS_DIGEST

    hits, misses, stamp = _run(tmp_path)
    assert (hits, misses, stamp) == (0, 1, KERNELS_DIGEST)  # compiled and saved
    hits, misses, _ = _run(tmp_path)
    assert (hits, misses) == (1, 0)  # loaded
    hits, misses, stamp = _run(tmp_path, "another-digest")
    assert (hits, misses, stamp) == (0, 1, "another-digest")  # a stale entry is not loaded


def test_the_digest_covers_every_kernel_module():
    from pathlib import Path

    import exactdp.kernels.jit as J

    names = sorted(p.name for p in Path(J.__file__).resolve().parent.glob("*.py"))
    assert {"jit.py", "dgauss.py", "tilted.py", "summation.py"} <= set(names)
    assert J.KERNELS_DIGEST == J._kernels_digest()
