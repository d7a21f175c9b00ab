"""Privacy-loss allocations (per-query zCDP ρ_q along geographic paths), as exact rationals.

An :class:`Allocation` describes a TopDown-style release: an ordered list of geographic
levels (top-down), an ordered list of queries, a *base* table of absolute per-query zCDP
budgets ρ_q for every level, and one or more *paths*.  A path is the chain of geounits
that contain one record; it is stored as one multiplier per level applied to the whole
base row of that level (``0`` for a level bypassed by the spine optimiser, whose budget
moved to a neighbouring level).  Every path spends the same total ρ.

Mechanism model (DAS code, see ``allocations/README.md``): each query is answered with
discrete Gaussian noise of variance σ_q² = 1/ρ_q; a record change moves −1 along path i
and +1 along path j, one unit shift per query.  The pair (i, j) is therefore the
composition of the mechanisms of both paths, :meth:`Allocation.pair_rhos`, and it costs
½·Σ ρ_q = ρ in zCDP.

Built-in allocations (``builtin_allocations()``) are the 2020 Census production
settings; user files in the same TOML format work everywhere a built-in name does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from exactdp.census.allocation_format import dump_allocation, read_allocation_file
from exactdp.numerics.exact import InputError, fraction_str, to_fraction

__all__ = [
    "Allocation",
    "load_allocation",
    "builtin_allocations",
    "parse_pair_spec",
    "CONTENT_HASH_TAG",
]

#: Tag inside the canonical serialisation hashed by :meth:`Allocation.content_hash`.
CONTENT_HASH_TAG = "exactdp-allocation-content/1"

_DATA_PACKAGE = "exactdp.allocation_data"


def _names(value, field: str) -> tuple[str, ...]:
    items = tuple(value)
    if not items:
        raise InputError(field, value, "must not be empty")
    seen: dict[str, int] = {}
    for k, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise InputError(f"{field}[{k}]", item, "must be a non-empty string")
        if item in seen:
            raise InputError(f"{field}[{k}]", item, f"duplicate name (already {field}[{seen[item]}])")
        seen[item] = k
    return items


def _row(values, field: str, n: int, what: str) -> tuple[Fraction, ...]:
    row = tuple(values)
    if len(row) != n:
        raise InputError(field, f"<{len(row)} values>", f"has {len(row)} entries but there are {n} {what}")
    out = []
    for k, v in enumerate(row):
        frac = to_fraction(v, f"{field}[{k}]")
        if frac < 0:
            raise InputError(f"{field}[{k}]", v, "must be >= 0 (a privacy-loss budget cannot be negative)")
        out.append(frac)
    return tuple(out)


#: envelope of an allocation: digits of its total ρ's numerator and denominator (thousands
#: of distinct unrelated denominators make it a rational of tens of thousands of digits,
#: which no exact step downstream can print or sum in time)
TOTAL_RHO_DIGITS = 1000
TOTAL_RHO_BITS = 3322  # 1000 decimal digits
#: ... and of the common denominator of its cells' variances (below CPython's 4300 digits
#: of an int's text; a tuned DHC allocation, 80 cells on a 1/1.04e6 grid: < 600)
VARIANCE_DIGITS = 4000
VARIANCE_BITS = 13288  # 4000 decimal digits


def _check_variance_lattice(base, paths) -> None:
    """The variances σ² = 1/(m·ρ) of an allocation's cells have a common denominator (the
    lcm of the numerators of its budgets ρ and path multipliers m) of at most
    :data:`VARIANCE_DIGITS` digits: the engines' exact sums over a pair's variances
    (40,000 budgets k/10⁹ had one of ~17,000 digits and ran for minutes in one pair)."""
    nums = {v.numerator for row in base.values() for v in row if v} | {m.numerator for p in paths for m in p if m}
    lcm = 1
    for n in sorted(nums):
        lcm = lcm // math.gcd(lcm, n) * n
        if lcm.bit_length() > VARIANCE_BITS:
            raise InputError("base", f"{len(nums)} distinct budget numerators",
                             f"the variances 1/rho of the cells have a common denominator beyond the envelope of an "
                             f"allocation (at most {VARIANCE_DIGITS} digits: the lcm of the numerators of every rho "
                             f"and path multiplier; e.g. budgets with a common decimal or few distinct values)")

@dataclass(frozen=True, eq=True)
class Allocation:
    """A privacy-loss allocation: base per-query ρ_q per level and the geographic paths.

    Parameters
    ----------
    name : str
        Short identifier, e.g. ``"dhc-persons-2020"``.
    description : str
        One-paragraph human description.
    provenance : Mapping[str, str]
        Where the numbers come from (repository, config file, strategy class, ...).
    levels : tuple of str
        Geographic levels, top-down (e.g. ``US, State, ..., Block``).
    queries : tuple of str
        Query names, in the order of every base row.
    base : Mapping[str, tuple of Fraction]
        For every level, the absolute per-query zCDP budget ρ_q of the full chain
        (``0`` = the query is not measured at that level).
    paths : tuple of tuple of Fraction
        Path k (1-based: ``paths[k-1]``) gives one multiplier per level; the ρ_q of
        query q at level l on path k is ``paths[k-1][l] * base[l][q]``.

    Raises
    ------
    InputError
        Wrong lengths, duplicate names, negative values, or paths whose totals differ.

    Notes
    -----
    Method: pure :class:`fractions.Fraction` arithmetic, so every quantity is exact
    (there is no error bound to report).  Reference for the model: the DAS production
    code (``programs/engine/budget.py``, ``programs/engine/primitives.py``) and Su, Su &
    Wang, "Exact privacy accounting for the 2020 U.S. Census" (the 43 DHC paths).
    """

    name: str
    description: str
    provenance: Mapping[str, str]
    levels: tuple[str, ...]
    queries: tuple[str, ...]
    base: Mapping[str, tuple[Fraction, ...]]
    paths: tuple[tuple[Fraction, ...], ...]

    def __post_init__(self):
        put = functools.partial(object.__setattr__, self)
        for field in ("name", "description"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field).strip():
                raise InputError(field, getattr(self, field), "must be a non-empty string")
            put(field, getattr(self, field).strip())
        prov = dict(self.provenance)
        for key, value in prov.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InputError(f"provenance.{key}", value, "keys and values must be strings")
        put("provenance", MappingProxyType(prov))
        levels = _names(self.levels, "levels")
        queries = _names(self.queries, "queries")
        put("levels", levels)
        put("queries", queries)
        base = dict(self.base)
        for key in base:
            if key not in levels:
                raise InputError(f"base.{key}", "<row>", f"unknown level (levels are {', '.join(levels)})")
        missing = [lev for lev in levels if lev not in base]
        if missing:
            raise InputError(f"base.{missing[0]}", None, "is missing: every level needs one value per query")
        put("base", MappingProxyType({lev: _row(base[lev], f"base.{lev}", len(queries), "queries") for lev in levels}))
        paths = tuple(self.paths)
        if not paths:
            raise InputError("paths", paths, "at least one path is needed")
        put("paths", tuple(_row(p, f"paths.{k}", len(levels), "levels") for k, p in enumerate(paths, start=1)))
        sums = [sum(self.base[lev], Fraction(0)) for lev in levels]  # once, not once a path
        totals = [sum((m * t for m, t in zip(p, sums)), Fraction(0)) for p in self.paths]
        if totals[0] <= 0:
            raise InputError("paths.1", fraction_str(totals[0]), "path 1 spends no budget (total rho is 0)")
        if max(totals[0].numerator.bit_length(), totals[0].denominator.bit_length()) > TOTAL_RHO_BITS:
            raise InputError("base", f"total rho of ~{totals[0].denominator.bit_length() * 0.30103:.0f} digits",
                             f"the budgets' common denominator is beyond the envelope of an allocation: its total "
                             f"rho must be a rational of at most {TOTAL_RHO_DIGITS} digits (numerator and "
                             f"denominator; e.g. budgets with a common decimal or small denominators)")
        _check_variance_lattice(self.base, self.paths)
        for k, tot in enumerate(totals[1:], start=2):
            if tot != totals[0]:
                raise InputError(
                    f"paths.{k}",
                    fraction_str(tot),
                    f"path {k} has total rho {fraction_str(tot)} = {float(tot):.10g} but path 1 has "
                    f"{fraction_str(totals[0])} = {float(totals[0]):.10g}; every path must spend the same total",
                )

    def __hash__(self) -> int:
        return hash((self.name, self.content_hash()))

    def _path_total(self, i: int) -> Fraction:
        mult = self.paths[i - 1]
        return sum((m * sum(self.base[lev]) for m, lev in zip(mult, self.levels)), Fraction(0))

    def _index(self, i) -> int:
        n = len(self.paths)
        if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= n:
            raise InputError("path", i, f"must be an integer path number in 1..{n} for allocation {self.name!r}")
        return i

    # -- summaries ---------------------------------------------------------------------
    @property
    def n_paths(self) -> int:
        """Number of paths."""
        return len(self.paths)

    @property
    def total_rho(self) -> Fraction:
        """Total zCDP ρ of one path (the same for all paths; also the ρ of every pair)."""
        return self._path_total(1)

    def level_rho(self, i: int) -> dict[str, Fraction]:
        """Per-level totals Σ_q ρ_q of path ``i`` (1-based), in level order (zeros included)."""
        mult = self.paths[self._index(i) - 1]
        return {lev: m * sum(self.base[lev]) for m, lev in zip(mult, self.levels)}

    def path_table(self, i: int) -> dict[str, tuple[Fraction, ...]]:
        """Full ρ_q table of path ``i``: level -> per-query values (zeros included)."""
        mult = self.paths[self._index(i) - 1]
        return {lev: tuple(m * v for v in self.base[lev]) for m, lev in zip(mult, self.levels)}

    def path_rhos(self, i: int) -> tuple[Fraction, ...]:
        """The nonzero ρ_q of path ``i``, in level order then query order.

        Each entry is one discrete Gaussian mechanism with σ_q² = 1/ρ_q and a unit
        shift under the neighbour relation.
        """
        table = self.path_table(i)
        return tuple(v for lev in self.levels for v in table[lev] if v != 0)

    def pair_rhos(self, i: int, j: int) -> tuple[Fraction, ...]:
        """Path ``i``'s nonzero ρ_q followed by path ``j``'s (the composed pair (i, j)).

        A record change moves −1 along path i and +1 along path j, so the pair is the
        composition of all mechanisms of both paths; Σ pair_rhos / 2 == total_rho.
        """
        return self.path_rhos(i) + self.path_rhos(j)

    def pairs(self) -> list[tuple[int, int]]:
        """All pairs (i, j) with 1 <= i <= j <= n_paths (n(n+1)/2 of them; 946 for 43)."""
        n = self.n_paths
        return [(i, j) for i in range(1, n + 1) for j in range(i, n + 1)]

    def parse_pairs(self, spec: str) -> list[tuple[int, int]]:
        """:func:`parse_pair_spec` with this allocation's number of paths."""
        return parse_pair_spec(spec, self.n_paths)

    # -- identity ----------------------------------------------------------------------
    def canonical_json(self) -> str:
        """The canonical serialisation hashed by :meth:`content_hash` (see README)."""
        obj = {
            "format": CONTENT_HASH_TAG,
            "levels": list(self.levels),
            "queries": list(self.queries),
            "base": [[fraction_str(v) for v in self.base[lev]] for lev in self.levels],
            "paths": [[fraction_str(m) for m in p] for p in self.paths],
        }
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    def content_hash(self) -> str:
        """SHA-256 (hex) of :meth:`canonical_json`.

        Covers levels, queries, the absolute base table and the paths; not the name,
        description or provenance.  Two files stating the same numbers (e.g. as shares
        or as absolute ρ_q) have the same hash.
        """
        return hashlib.sha256(self.canonical_json().encode("ascii")).hexdigest()

    def to_toml(self) -> str:
        """This allocation as an ``absolute``-mode allocation file (exact round trip)."""
        return dump_allocation(self)


# -- loading -----------------------------------------------------------------------------
def builtin_allocations() -> tuple[str, ...]:
    """Names of the built-in allocations (sorted)."""
    folder = resources.files(_DATA_PACKAGE)
    return tuple(sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml")))


def _from_fields(fields: dict, src: str) -> Allocation:
    expected = fields.pop("expected_total_rho")
    try:
        alloc = Allocation(**fields)
    except InputError as exc:
        raise InputError(f"{src}: {exc.field}", exc.value, exc.reason) from None
    if expected is not None and alloc.total_rho != expected:
        raise InputError(
            f"{src}: budget.expected_total_rho",
            fraction_str(expected),
            f"the paths spend {fraction_str(alloc.total_rho)} = {float(alloc.total_rho):.10g}, not the stated total",
        )
    return alloc


@functools.cache
def _load_builtin(name: str) -> Allocation:
    res = resources.files(_DATA_PACKAGE) / f"{name}.toml"
    with resources.as_file(res) as path:
        alloc = _from_fields(read_allocation_file(path), str(path))
    if alloc.name != name:
        raise InputError(f"{res}: name", alloc.name, f"a built-in file must be named after its name ({name!r})")
    return alloc


def load_allocation(name_or_path) -> Allocation:
    """Load a built-in allocation by name, or a user allocation file by path.

    Parameters
    ----------
    name_or_path : str, os.PathLike or Allocation
        A name from :func:`builtin_allocations`, or the path of a TOML file in the
        ``exactdp-allocation/1`` format (anything containing a path separator or ending
        in ``.toml`` is taken as a path).  An :class:`Allocation` is returned as is.

    Returns
    -------
    Allocation

    Raises
    ------
    InputError
        Unknown name, unreadable file, or a malformed file (the message names the file,
        the field and the value).

    Notes
    -----
    Exact: every value is parsed to a :class:`fractions.Fraction`; ``shares`` files are
    multiplied out exactly (ρ_q = ρ_global × geolevel share × query share).
    """
    if isinstance(name_or_path, Allocation):
        return name_or_path
    if isinstance(name_or_path, Path) or (
        isinstance(name_or_path, str)
        and ("/" in name_or_path or "\\" in name_or_path or name_or_path.endswith(".toml"))
    ):
        path = Path(name_or_path)  # read_text refuses a missing, special or oversized file
        return _from_fields(read_allocation_file(path), str(path))
    if hasattr(name_or_path, "__fspath__"):
        return load_allocation(Path(name_or_path))
    if not isinstance(name_or_path, str):
        raise InputError("allocation", name_or_path, "must be a built-in name or a path to a .toml file")
    names = builtin_allocations()
    if name_or_path not in names:
        raise InputError(
            "allocation",
            name_or_path,
            f"unknown built-in allocation; built-ins are {', '.join(names)} (or give the path of a .toml file)",
        )
    return _load_builtin(name_or_path)


#: ASCII digits and blanks only (no Arabic-Indic digits, no no-break space), at most 9 digits a path number
_PAIR_RE = re.compile(r"^[ \t]*([0-9]{1,9})[ \t]*(?:-[ \t]*([0-9]{1,9})[ \t]*)?$", re.ASCII)


def parse_pair_spec(spec: str, n_paths: int | None = None) -> list[tuple[int, int]]:
    """Parse a pair list such as ``"13-13,6-6,1-43"``.

    Parameters
    ----------
    spec : str
        Comma-separated items ``i-j`` (or ``i``, short for ``i-i``); ``"all"`` means every
        pair (needs ``n_paths``).
    n_paths : int, optional
        Number of paths; when given, every path number must be in ``1..n_paths``.

    Returns
    -------
    list of (int, int)
        Pairs normalised to ``i <= j``, in the order given.

    Raises
    ------
    InputError
        Malformed item, path number out of range, or the same pair listed twice
        (``6-13`` and ``13-6`` are the same pair).

    Notes
    -----
    Pairs are unordered because the privacy-loss distribution of (i, j) is that of
    (j, i) mirrored; the accounting covers both directions.
    """
    if not isinstance(spec, str):
        raise InputError("pairs", spec, 'must be a string such as "13-13,6-6"')
    if spec.strip().lower() == "all":
        if n_paths is None:
            raise InputError("pairs", spec, '"all" needs the number of paths of an allocation')
        return [(i, j) for i in range(1, n_paths + 1) for j in range(i, n_paths + 1)]
    out: list[tuple[int, int]] = []
    seen: dict[tuple[int, int], str] = {}
    for item in spec.split(","):
        m = _PAIR_RE.match(item)
        if not m:
            raise InputError("pairs", spec,
                             f"item {item.strip()!r} is not of the form i-j with path numbers i, j (e.g. 13-13)")
        i = int(m.group(1))
        j = int(m.group(2) or m.group(1))
        for k in (i, j):
            if k < 1 or (n_paths is not None and k > n_paths):
                rng = f"1..{n_paths}" if n_paths is not None else ">= 1"
                raise InputError("pairs", spec, f"path number {k} in item {item.strip()!r} is out of range ({rng})")
        pair = (min(i, j), max(i, j))
        if pair in seen:
            raise InputError(
                "pairs", spec, f"pair {pair[0]}-{pair[1]} is listed twice ({seen[pair]!r} and {item.strip()!r})"
            )
        seen[pair] = item.strip()
        out.append(pair)
    return out
