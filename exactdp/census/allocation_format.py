"""Reading and writing exactdp allocation files (TOML, format ``exactdp-allocation/1``).

The format is documented in ``allocations/README.md`` (installed as
``exactdp.allocation_data``).  This module only turns the text into validated exact
values and back; the mechanism model lives in :mod:`exactdp.census.allocations`.

Every number in a file is an exact rational: a TOML string (``"11/10000"``,
``"0.0011"``) or a TOML integer, read by the one parser
(:func:`exactdp.numerics.exact.parse_exact`: checked on its written form before it is
expanded).  A TOML float (``0.0011`` without quotes) is refused, because the TOML parser
would turn it into a binary float.  Every per-query ρ a path spends (base value × path
multiplier) is 0 or lies in [1e-300, 1e300], the range of the engine's variances
σ² = 1/ρ.  Files are read by :mod:`exactdp.numerics.inputfiles` (UTF-8 only, bounded
size and nesting).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from exactdp.numerics.exact import S2_RANGE, InputError, decimal_exponent, fraction_str, interval_text, to_fraction
from exactdp.numerics.inputfiles import TomlFloat, parse_toml, read_text

__all__ = ["FORMAT_TAG", "parse_allocation_text", "read_allocation_file", "dump_allocation"]

#: Value of the mandatory top-level ``format`` key.
FORMAT_TAG = "exactdp-allocation/1"

_TOP_KEYS = ("format", "name", "description", "levels", "queries", "provenance", "budget", "base", "paths")
_REQUIRED = ("format", "name", "description", "levels", "queries", "provenance", "base")
_BUDGET_KEYS = ("mode", "global_scale", "global_rho", "geolevel_shares", "expected_total_rho")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class _Reader:
    """Validates one parsed TOML document; every error names the file and the field."""

    def __init__(self, src: str):
        self.src = src

    def err(self, field: str, value, reason: str) -> InputError:
        return InputError(f"{self.src}: {field}", value, reason)

    def rational(self, value, field: str) -> Fraction:
        if isinstance(value, TomlFloat):
            raise self.err(field, value, value.reason())
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.err(field, value,
                           'must be an exact rational written as a string ("11/10000", "0.0011") or an integer')
        try:
            frac = to_fraction(value, field)
        except InputError as exc:
            raise self.err(field, value, exc.reason) from None
        if frac < 0:
            raise self.err(field, value, "must be >= 0 (a privacy-loss budget cannot be negative)")
        return frac

    def string(self, doc: dict, key: str) -> str:
        value = doc[key]
        if not isinstance(value, str) or not value.strip():
            raise self.err(key, value, "must be a non-empty string")
        return value.strip()

    def name_list(self, doc: dict, key: str) -> tuple[str, ...]:
        value = doc[key]
        if not isinstance(value, list) or not value:
            raise self.err(key, value, "must be a non-empty array of strings")
        seen: dict[str, int] = {}
        for k, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise self.err(f"{key}[{k}]", item, "must be a non-empty string")
            if item in seen:
                raise self.err(f"{key}[{k}]", item, f"duplicate name (already {key}[{seen[item]}])")
            seen[item] = k
        return tuple(value)

    def rational_list(self, value, field: str, n: int, what: str) -> tuple[Fraction, ...]:
        if not isinstance(value, list):
            raise self.err(field, value, f"must be an array of {n} exact rationals (one per entry of {what})")
        if len(value) != n:
            raise self.err(field, f"<array of {len(value)}>", f"has {len(value)} entries but there are {n} {what}")
        return tuple(self.rational(v, f"{field}[{k}]") for k, v in enumerate(value))


def parse_allocation_text(text: str, src: str = "<string>") -> dict:
    """Parse and validate the text of an allocation file.

    Parameters
    ----------
    text : str
        TOML text in the ``exactdp-allocation/1`` format.
    src : str
        Name of the file, used in every error message.

    Returns
    -------
    dict
        Keyword arguments for :class:`exactdp.census.allocations.Allocation`: ``name``,
        ``description``, ``provenance``, ``levels``, ``queries``, ``base`` (absolute
        per-query zCDP ρ_q per level, shares already multiplied out exactly) and
        ``paths``; plus ``expected_total_rho`` (a Fraction or None) for the caller to
        check.

    Raises
    ------
    InputError
        Naming the file, the field and the offending value.

    Notes
    -----
    Method: ``tomllib`` with a ``parse_float`` hook that marks float literals so they
    can be refused with their literal text (:class:`~exactdp.numerics.inputfiles.TomlFloat`).  All arithmetic is on
    :class:`fractions.Fraction`, so the result is exact (no error bound applies).
    """
    r = _Reader(src)
    doc = parse_toml(text, src, "<file>")
    for key in doc:
        if key not in _TOP_KEYS:
            raise r.err(key, doc[key], f"unknown top-level key; allowed: {', '.join(_TOP_KEYS)}")
    for key in _REQUIRED:
        if key not in doc:
            raise r.err(key, None, "is missing (required)")
    if doc["format"] != FORMAT_TAG:
        raise r.err("format", doc["format"], f'must be "{FORMAT_TAG}"')
    name = r.string(doc, "name")
    if not _NAME_RE.match(name):
        raise r.err("name", name, "must be lower-case letters, digits, '.', '_' or '-' (e.g. \"dhc-persons-2020\")")
    description = r.string(doc, "description")
    levels = r.name_list(doc, "levels")
    queries = r.name_list(doc, "queries")

    prov = doc["provenance"]
    if not isinstance(prov, dict) or "source" not in prov:
        raise r.err("provenance", prov, 'must be a table with at least a "source" string')
    for key, value in prov.items():
        if not isinstance(value, str):
            raise r.err(f"provenance.{key}", value, "must be a string")

    budget = doc.get("budget", {"mode": "absolute"})
    if not isinstance(budget, dict):
        raise r.err("budget", budget, "must be a table")
    for key in budget:
        if key not in _BUDGET_KEYS:
            raise r.err(f"budget.{key}", budget[key], f"unknown key; allowed: {', '.join(_BUDGET_KEYS)}")
    mode = budget.get("mode", "absolute")
    if mode not in ("absolute", "shares"):
        raise r.err("budget.mode", mode, 'must be "absolute" or "shares"')
    expected = budget.get("expected_total_rho")
    expected = None if expected is None else r.rational(expected, "budget.expected_total_rho")

    table = doc["base"]
    if not isinstance(table, dict):
        raise r.err("base", table, "must be a table with one array per level")
    for key in table:
        if key not in levels:
            raise r.err(f"base.{key}", table[key], f"unknown level (levels are {', '.join(levels)})")
    for lev in levels:
        if lev not in table:
            raise r.err(f"base.{lev}", None, "is missing: every level needs one value per query")
    values = {lev: r.rational_list(table[lev], f"base.{lev}", len(queries), "queries") for lev in levels}

    if mode == "shares":
        values = _apply_shares(r, budget, levels, values)
    else:
        for key in ("global_scale", "global_rho", "geolevel_shares"):
            if key in budget:
                raise r.err(f"budget.{key}", budget[key], 'is only allowed with mode = "shares"')

    paths = _read_paths(r, doc.get("paths"), levels)
    _check_spent(r, values, levels, paths)
    return {
        "name": name,
        "description": description,
        "provenance": dict(prov),
        "levels": levels,
        "queries": queries,
        "base": values,
        "paths": paths,
        "expected_total_rho": expected,
    }


def _apply_shares(r: _Reader, budget: dict, levels, values) -> dict:
    """ρ_q = ρ_global × geolevel share × query share, exactly (the DAS rule)."""
    has_scale, has_rho = "global_scale" in budget, "global_rho" in budget
    if has_scale == has_rho:
        raise r.err("budget", "<table>", 'mode = "shares" needs exactly one of global_scale or global_rho')
    if has_scale:
        scale = r.rational(budget["global_scale"], "budget.global_scale")
        if scale == 0:
            raise r.err("budget.global_scale", budget["global_scale"], "must be > 0")
        rho = 1 / scale**2
    else:
        rho = r.rational(budget["global_rho"], "budget.global_rho")
    if "geolevel_shares" not in budget:
        raise r.err("budget.geolevel_shares", None, 'is missing (required with mode = "shares")')
    shares = r.rational_list(budget["geolevel_shares"], "budget.geolevel_shares", len(levels), "levels")
    if sum(shares, Fraction(0)) != 1:
        raise r.err("budget.geolevel_shares", budget["geolevel_shares"],
                    f"must sum to 1, they sum to {fraction_str(sum(shares, Fraction(0)))}")
    out = {}
    for lev, share in zip(levels, shares):
        total = sum(values[lev])
        if total != 1:
            raise r.err(f"base.{lev}", "<array>",
                        f"query shares of a level must sum to 1, they sum to {fraction_str(total)}")
        out[lev] = tuple(rho * share * q for q in values[lev])
    return out


def _read_paths(r: _Reader, table, levels) -> tuple[tuple[Fraction, ...], ...]:
    if table is None:
        return (tuple(Fraction(1) for _ in levels),)
    if not isinstance(table, dict) or not table:
        raise r.err("paths", table, 'must be a table of numbered arrays: "1" = [...], "2" = [...], ...')
    wanted = [str(k) for k in range(1, len(table) + 1)]
    if sorted(table, key=lambda s: (len(s), s)) != wanted:
        bad = next(k for k in table if k not in wanted)
        raise r.err(f"paths.{bad}", table[bad], f"paths must be numbered 1..{len(table)} without gaps")
    return tuple(r.rational_list(table[k], f"paths.{k}", len(levels), "levels") for k in wanted)


def _check_spent(r: _Reader, values: dict, levels, paths) -> None:
    """Every per-query ρ a path spends (base value × multiplier) is 0 or in the engine's
    range: σ² = 1/ρ in [1e-300, 1e300] (outside, the engine's float64 kernels cannot
    represent the variance).  Checked on each level's smallest and largest non-zero value
    (O(levels × (queries + paths)), not one product per path and query)."""
    lo, hi = 1 / S2_RANGE[1], 1 / S2_RANGE[0]
    ends = {}
    for lev in levels:
        nonzero = [(v, q) for q, v in enumerate(values[lev]) if v]
        if nonzero:
            ends[lev] = (min(nonzero), max(nonzero))
    for k, mult in enumerate(paths, start=1):
        for lev, m in zip(levels, mult):
            if m == 0 or lev not in ends:
                continue
            for v, q in ends[lev]:
                if not lo <= m * v <= hi:
                    where = f"base.{lev}[{q}]" if m == 1 else f"paths.{k} × base.{lev}[{q}]"
                    raise r.err(where, f"~1e{decimal_exponent(m * v)}",
                                f"a per-query rho outside {interval_text(lo, hi)} (its variance 1/rho is beyond the "
                                f"engine's range [1e-300, 1e300])")


def dump_allocation(alloc) -> str:
    """Serialise an allocation as an ``absolute``-mode allocation file.

    Parameters
    ----------
    alloc : exactdp.census.allocations.Allocation

    Returns
    -------
    str
        TOML text; :func:`parse_allocation_text` reads it back to an equal allocation.

    Notes
    -----
    Values are written in lowest terms as ``"p/q"`` strings, so the round trip is
    exact.  A ``shares``-mode source is written with its products multiplied out.  The
    text is written by :mod:`tomli_w` (a maintained TOML writer), so any string —
    a multi-line description, quotes, backslashes, non-ASCII names — is escaped
    correctly.
    """
    import tomli_w

    def row(values):
        return [fraction_str(v) for v in values]

    doc = {
        "format": FORMAT_TAG,
        "name": alloc.name,
        "description": alloc.description,
        "levels": list(alloc.levels),
        "queries": list(alloc.queries),
        "provenance": dict(alloc.provenance),
        "budget": {"mode": "absolute", "expected_total_rho": fraction_str(alloc.total_rho)},
        "base": {lev: row(alloc.base[lev]) for lev in alloc.levels},
        "paths": {str(k): row(p) for k, p in enumerate(alloc.paths, start=1)},
    }
    return tomli_w.dumps(doc)


def read_allocation_file(path) -> dict:
    """Read and validate an allocation file (see :func:`parse_allocation_text`)."""
    path = Path(path)
    return parse_allocation_text(read_text(path, "allocation"), str(path))
