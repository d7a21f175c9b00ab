"""The driver's set-up shortcuts give what the plain calls give."""

from __future__ import annotations

from fractions import Fraction

from exactdp.census.allocations import load_allocation
from exactdp.sweep import driver
from exactdp.sweep.plan import PathDesigns
from exactdp.sweep.twins import composition_key


def _groups(keys: dict) -> list:
    by: dict = {}
    for pair in sorted(keys):
        by.setdefault(keys[pair], []).append(pair)
    return sorted(by.values())


def test_pair_rhos_and_composition_keys_of_the_dhc_pairs():
    alloc = load_allocation("dhc-persons-2020")
    designs, key_of = PathDesigns(alloc), driver._composition_key_memo(alloc)
    rhos_of = lambda i, j: designs.rhos("pair", i, j)  # noqa: E731
    pairs = alloc.pairs()
    plain = {p: alloc.pair_rhos(*p) for p in pairs}
    assert all(rhos_of(*p) == plain[p] for p in pairs)
    reference = _groups({p: composition_key(r) for p, r in plain.items()})
    assert _groups({p: key_of(*p) for p in pairs}) == reference
    assert sum(len(g) - 1 for g in reference) == 106  # the twins the sweep relabels


class _Toy:
    """An allocation-like object whose paths share values written differently."""

    paths = {1: (Fraction(1, 2), Fraction(0), Fraction(2, 4)), 2: (Fraction(1, 2), Fraction(1, 2)),
             3: (Fraction(1, 3), Fraction(1, 2)), 4: (Fraction(2, 6), Fraction(3, 6), Fraction(0)),
             5: (Fraction(3, 2), Fraction(1, 2))}

    def path_rhos(self, i):
        return self.paths[i]

    def pair_rhos(self, i, j):
        return self.paths[i] + self.paths[j]


def test_composition_keys_group_equal_multisets_only():
    toy = _Toy()
    pairs = [(i, j) for i in range(1, 6) for j in range(i, 6)]
    key_of = driver._composition_key_memo(toy)
    assert _groups({p: key_of(*p) for p in pairs}) == _groups({p: composition_key(toy.pair_rhos(*p)) for p in pairs})
    assert key_of(1, 3) == key_of(2, 4) and key_of(1, 3) != key_of(1, 5)


def test_versions_name_the_installed_packages(monkeypatch):
    import sys

    import joblib
    import numba
    import numpy

    imported = {"numba": numba.__version__, "joblib": joblib.__version__, "numpy": numpy.__version__}
    for name in imported:  # as in a driver that has not imported them: the distributions' versions
        monkeypatch.delitem(sys.modules, name)
    v = driver._versions()
    assert {k: v[k] for k in imported} == imported
