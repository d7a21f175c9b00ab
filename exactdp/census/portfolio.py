"""The 2020 Census portfolio for one person: every product's neighbour, composed.

A person is in every product of a run (United States, or Puerto Rico).  The portfolio's
neighbouring relation is the Bureau's accounting made exact: **one neighbour of each
product's own relation at once** — one record replaced in each TopDown file (a pair of
paths ``(i, j)``, as ``exactdp release`` composes P.L. 94-171 with the DHC), one person
added or removed in SafeTab-P, one household in SafeTab-H, one person row and two unit
rows in PHSafe — so its zCDP ρ is the sum of the files' configured ρ, the number the
Bureau converts.  A portfolio *case* picks one case of every member; the portfolio's
exact privacy is the worst over the Cartesian product of the members' chosen cases
(:func:`exactdp.census.product_accounting.family_rows`).

Members are named ``NAME`` or ``NAME:SPEC``: a TopDown allocation with a pair list
(``dhc-persons-2020:13-13``; default ``13-13`` for the 43-path DHC persons file, as
``exactdp release``, else ``1-1``) or a product with a case list (``safetab-p-2020-us:1,30``;
default ``all``).
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from fractions import Fraction

from exactdp.census.allocations import builtin_allocations, load_allocation, parse_pair_spec
from exactdp.census.product_accounting import Case
from exactdp.census.products import MAX_CASES, builtin_products, load_product
from exactdp.mechanisms import Composition
from exactdp.numerics.exact import InputError

__all__ = ["Member", "PORTFOLIOS", "case_numbers", "parse_member", "portfolio_cases", "portfolio_rho"]

#: the default members of each run's portfolio (P.L. 94-171 exists as a US file only)
PORTFOLIOS = {
    "us": ("pl94-persons-2020", "pl94-units-2020", "dhc-persons-2020:13-13", "dhc-units-2020",
           "safetab-p-2020-us", "safetab-h-2020-us", "phsafe-2020-us"),
    "pr": ("dhc-persons-2020-pr", "dhc-units-2020-pr", "safetab-p-2020-pr", "safetab-h-2020-pr", "phsafe-2020-pr"),
}

#: the DHC persons pair composed by default (the full chain, as ``exactdp release``)
_DEFAULT_PAIR = {"dhc-persons-2020": "13-13"}


@dataclass(frozen=True)
class Member:
    """One product of the portfolio and the cases of it to consider."""

    name: str
    kind: str  # "allocation" (TopDown, pairs of paths) or "product" (Tumult, cases)
    configured_rho: Fraction
    cases: tuple  # ((label, Composition), ...)


def parse_member(spec: str, budget_rule: str | None = None) -> Member:
    """``"NAME"`` or ``"NAME:SPEC"`` → :class:`Member` (see the module docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("member", spec, 'must be a name such as "safetab-p-2020-us" or "dhc-persons-2020:13-13"')
    name, colon, sel = spec.strip(" \t").partition(":")  # ASCII blanks only: a no-break space is refused
    name, sel = name.strip(" \t"), sel.strip(" \t")
    if colon and not sel:
        raise InputError("member", spec, "names no pairs or cases after ':' (e.g. dhc-persons-2020:13-13, "
                                         "safetab-p-2020-us:1,30; or the name alone for the default)")
    is_file = "/" in name or "\\" in name or name.endswith(".toml") or (
        name not in builtin_products() + builtin_allocations() and os.path.lexists(name))
    if name in builtin_products() or (is_file and _is_product_file(name)):
        prod = load_product(name)
        numbers = case_numbers(sel or "all", prod.n_cases, "member", spec)
        cases = tuple((f"{prod.name} case {i} ({prod.case_label(i)})", prod.case_composition(i, budget_rule))
                      for i in numbers)
        return Member(prod.name, "product", prod.configured_rho, cases)
    if name in builtin_allocations() or is_file:
        alloc = load_allocation(name)
        try:
            pairs = parse_pair_spec(sel or _DEFAULT_PAIR.get(alloc.name, "1-1"), alloc.n_paths)
        except InputError as exc:
            raise InputError("member", spec, exc.reason) from None
        cases = tuple((f"{alloc.name} pair {i}-{j}", Composition.from_rhos(alloc.pair_rhos(i, j))) for i, j in pairs)
        return Member(alloc.name, "allocation", alloc.total_rho, cases)
    known = ", ".join(builtin_allocations() + builtin_products())
    raise InputError("member", spec, f"unknown allocation or product; built-ins are {known}")


def _is_product_file(path: str) -> bool:
    """Whether the file names the product format (read as every input file is: bounded,
    never a FIFO or a device; a file that cannot be read is refused naming ``member``)."""
    from exactdp.numerics.inputfiles import read_text

    return "exactdp-product/1" in read_text(path, "member")[:4096]


def case_numbers(sel: str, n: int, field: str = "member", value=None) -> list[int]:
    """``"all"`` or ``"1,5,30"`` → case numbers in 1..n (errors name ``field`` and ``value``)."""
    value = sel if value is None else value
    if sel.strip(" \t").lower() == "all":
        if n > MAX_CASES:
            raise InputError(field, value, f"{n} cases exceed {MAX_CASES}; name fewer, e.g. 1,30")
        return list(range(1, n + 1))
    out: list[int] = []
    for item in sel.split(","):
        item = item.strip(" \t")
        if not re.fullmatch(r"[0-9]{1,9}", item, re.ASCII) or not 1 <= int(item) <= n:
            raise InputError(field, value, f"case {item!r} is not a case number in 1..{n}")
        if int(item) in out:
            raise InputError(field, value, f"case {item} is listed twice")
        out.append(int(item))
    return out


def portfolio_rho(members) -> Fraction:
    """Σ of the members' configured ρ: the Bureau's additive zCDP accounting."""
    return sum((m.configured_rho for m in members), Fraction(0))



def portfolio_cases(members) -> list[Case]:
    """The Cartesian product of the members' cases, each the sum of the compositions."""
    members = list(members)
    if not members:
        raise InputError("members", members, "at least one member is needed")
    n = 1
    for m in members:
        n *= len(m.cases)
    if n > MAX_CASES:
        raise InputError("members", [m.name for m in members],
                         f"{n} portfolio cases (the product of the members' case counts) exceed {MAX_CASES}; "
                         f"name fewer cases, e.g. safetab-p-2020-us:1,30")
    out = []
    for combo in itertools.product(*(m.cases for m in members)):
        comp = combo[0][1]
        for _, c in combo[1:]:
            comp = comp + c
        out.append(Case(" | ".join(label for label, _ in combo), comp))
    return out
