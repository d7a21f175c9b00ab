"""The tuner's keys against their definitions: :func:`~exactdp.tune.evaluate.composition_key`
(the sorted multiset of non-zero ρ as exact rationals, here a ``Counter`` of Fractions) and
:func:`~exactdp.tune.trace.design_id` (the SHA-256 of the JSON of the σ² texts), asked
repeatedly and for designs that differ in one value; and the node tables' byte budget
(:data:`exactdp.kernels.nodes.TABLE_BYTES`) kept by its running total."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from fractions import Fraction

import numpy as np
from exactdp.kernels import nodes as node_kernels
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.tune.evaluate import composition_key
from exactdp.tune.trace import design_id

RHOS = [Fraction(0), Fraction(1, 3), Fraction(2, 6), Fraction(5, 7), Fraction(1), Fraction(10**300 + 1, 3**500),
        Fraction(3, 10**400 + 9)]


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(RHOS + [0, 1, 2]), max_size=14))
def test_composition_key_is_the_sorted_multiset(rhos):
    ref = tuple(sorted(Counter(Fraction(r) for r in rhos if r).items()))
    key = composition_key(rhos)
    assert key == ref
    assert all(type(r) is Fraction for r, _ in key)


def _design_id_ref(design, levels) -> str:
    text = json.dumps([[str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
                        for v in map(Fraction, design[lev])] for lev in levels], separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def test_design_id_is_the_hash_of_the_texts_every_time():
    design = {"US": [Fraction(1, 3), Fraction(10**400 + 7, 3)], "State": [Fraction(2), 5]}
    for levels in (("US", "State"), ("State", "US"), ("US",)):
        for _ in range(2):  # the second answer is the kept one
            assert design_id(design, levels) == _design_id_ref(design, levels)
    design["US"][0] = Fraction(2, 3)  # a changed value is a new design
    assert design_id(design, ("US", "State")) == _design_id_ref(design, ("US", "State"))
    design["State"] = [Fraction(2), Fraction(5)]  # the same values as Fractions: the same id
    assert design_id(design, ("US", "State")) == _design_id_ref(design, ("US", "State"))


def test_node_tables_stay_within_their_budget(monkeypatch):
    node_kernels.clear_tables()
    A = np.array([1, 3], dtype=np.int64)
    s2 = np.array([2.0, 0.7])
    sizes = []
    monkeypatch.setattr(node_kernels, "TABLE_BYTES", 150_000)
    for k in range(12):
        nodes = np.arange(0, 40 + 8 * k, dtype=np.int64)
        node_kernels.node_factors(A, np.array([1, 2], dtype=np.int64), s2, np.array([0.1, -0.2]), 0.05, nodes, 256)
        with node_kernels._TABLES_LOCK:
            held = [v[1] for v in node_kernels._TABLES.values()]
            sizes.append(len(held))
            assert node_kernels._TABLES_SIZE[0] == sum(held) <= node_kernels.TABLE_BYTES
    assert sizes[0] == 1 and min(sizes[1:]) >= 1 and sizes[-1] < 12  # kept, and evicted
    node_kernels.clear_tables()
    assert node_kernels._TABLES_SIZE[0] == 0


def test_tuner_pair_keys_are_the_sorted_multisets(tmp_path):
    """The tuner's per-path keys (``Tuner.rhos_of(design).key``) of every pair of a toy
    allocation, for its input and for a design with long exact ρ and a value shared across
    levels: the ``Counter`` of the pair's ρ, and equal hashes to the plain tuples."""
    from tune_toys import THREE_LEVELS

    from exactdp.census.allocations import load_allocation
    from exactdp.tune.problem import Problem
    from exactdp.tune.search import Tuner

    path = tmp_path / "toy.toml"
    path.write_text(THREE_LEVELS)
    prob = Problem(load_allocation(path), "cell")
    tuner = Tuner(prob, None, None, None)
    odd = {lev: tuple(v * Fraction(10**40 + 7, 10**40 + 3 * k) for k, v in enumerate(row))
           for lev, row in prob.input_design().items()}
    odd["C"] = (odd["A"][0], odd["C"][1])  # one ρ on two levels
    for design in (prob.input_design(), odd):
        rhos = tuner.rhos_of(design)
        for i, j in tuner.pairs:
            ref = tuple(sorted(Counter(Fraction(r) for r in rhos(i, j) if r).items()))
            key = rhos.key(i, j)
            assert key == ref and hash(key) == hash(ref) == hash(key)
            assert all(type(r) is Fraction for r, _ in key)
