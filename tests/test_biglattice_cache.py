"""The big-lattice path does not depend on what a process computed before.

A whole-release sweep once stopped with a refusal in a long-lived worker that the same
pair computed afresh did not give: the sieve of the smoothed engine used to take the
families whose resonance arcs were already in the process-wide cache first, so the
windows (and the cost of generating them) depended on earlier accountants.  These tests
put a worker's history into that cache by hand — the arcs of the costliest families
only, which is what changed the order — and require the same nodes and the same numbers
as a fresh process; a second test compares with a fresh interpreter (another hash seed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from exactdp.accounting.bracketed import BigLatticeAccountant
from exactdp.census.allocations import load_allocation
from exactdp.engine import resonance
from exactdp.engine.families import families_of
from exactdp.engine.smoothed import SIEVE_MULTIPLIER, SmoothedTails
from exactdp.mechanisms import Composition

EPS = ["33.8333", "20", "45"]
DELTAS = ["1e-10", "1e-3"]


def _release_rhos(i, j):
    return tuple(load_allocation("dhc-persons-2020").pair_rhos(i, j)) + \
        tuple(load_allocation("pl94-persons-2020").pair_rhos(1, 1))


def _numbers(acc) -> list:
    d = [(str(p.lower), str(p.upper)) for p in acc.delta(EPS)]
    e = [(str(p.lower), str(p.upper)) for p in acc.epsilon(DELTAS)]
    return d + e


@pytest.mark.parametrize("pair", [(13, 13), (6, 10)])
def test_cached_arcs_of_costly_families_change_nothing(pair):
    comp = Composition.from_rhos(_release_rhos(*pair))
    resonance._ARCS.clear()
    fresh = BigLatticeAccountant(comp)
    assert fresh.method == "smoothed-inversion"
    eng = fresh.levels[0]
    nodes, numbers = eng.nodes.copy(), _numbers(fresh)
    # a worker's history: the arcs of the costliest families (1 to 4 of them).  With the
    # old order two cached families turned one window into 97 118 (same nodes, a much
    # costlier generation: the refusal when it passed the limit)
    fams = families_of(eng.groups, SIEVE_MULTIPLIER)
    costly = sorted(fams, key=lambda f: -max(f.multipliers) * len(f.groups))
    for n_cached in range(1, min(4, len(fams)) + 1):
        resonance._ARCS.clear()
        for f in costly[:n_cached]:
            resonance.family_arcs(f, eng.sieve_T)
        again = SmoothedTails(eng.groups, eng.a)
        assert (again.generation, again.n_windows) == (eng.generation, eng.n_windows), n_cached
        np.testing.assert_array_equal(again.nodes, nodes)
    assert _numbers(BigLatticeAccountant(comp)) == numbers


_CHILD = """
import json, sys
from exactdp.accounting.bracketed import BigLatticeAccountant
from exactdp.mechanisms import Composition
sys.path.insert(0, {here!r})
from test_biglattice_cache import _numbers, _release_rhos
print(json.dumps(_numbers(BigLatticeAccountant(Composition.from_rhos(_release_rhos(13, 13))))))
"""


def test_a_fresh_interpreter_gives_the_same_numbers():
    here = os.path.dirname(os.path.abspath(__file__))
    ours = _numbers(BigLatticeAccountant(Composition.from_rhos(_release_rhos(13, 13))))
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", _CHILD.format(here=here)], capture_output=True, text=True,
                         env=env, check=True, cwd=here)
    assert [tuple(x) for x in json.loads(out.stdout)] == ours
