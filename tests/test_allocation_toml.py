"""Allocation files written by exactdp (tomli-w) read back exactly, for every built-in
allocation and for strings a hand-written TOML writer gets wrong."""

from __future__ import annotations

import dataclasses
import tomllib
from fractions import Fraction

import pytest

from exactdp.census.allocation_format import parse_allocation_text
from exactdp.census.allocations import Allocation, builtin_allocations, load_allocation


def _reread(alloc: Allocation) -> Allocation:
    fields = parse_allocation_text(alloc.to_toml(), "<dump>")
    expected = fields.pop("expected_total_rho")
    again = Allocation(**fields)
    assert expected == alloc.total_rho
    return again


@pytest.mark.parametrize("name", builtin_allocations())
def test_every_builtin_round_trips_exactly(name):
    alloc = load_allocation(name)
    again = _reread(alloc)
    assert again == alloc
    assert (again.description, dict(again.provenance)) == (alloc.description, dict(alloc.provenance))
    assert again.content_hash() == alloc.content_hash()
    doc = tomllib.loads(alloc.to_toml())  # plain TOML, every number a string
    assert doc["budget"] == {"mode": "absolute", "expected_total_rho": str(alloc.total_rho)}


@pytest.mark.parametrize("text", [
    "First line.\nSecond line.",
    'Quotes " and \\ backslashes, a tab\there',
    "Résumé — non-ASCII, and a trailing \"\"\" triple quote",
])
def test_awkward_strings_round_trip(text):
    base = load_allocation("pl94-units-2020")
    alloc = dataclasses.replace(base, description=text, provenance={**base.provenance, "note": text,
                                                                     'key with "quotes"': text})
    again = _reread(alloc)
    assert again.description == text.strip()
    assert dict(again.provenance) == dict(alloc.provenance)
    assert again.base == alloc.base and again.paths == alloc.paths


def test_values_stay_exact_rationals():
    alloc = load_allocation("dhc-persons-2020")
    text = alloc.to_toml()
    doc = tomllib.loads(text)
    us = doc["base"][alloc.levels[0]]
    assert all(isinstance(v, str) for v in us)
    assert [Fraction(v) for v in us] == list(alloc.base[alloc.levels[0]])
    assert len(doc["paths"]) == alloc.n_paths == 43
