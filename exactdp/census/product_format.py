"""Reading product files (TOML, format ``exactdp-product/1``): Tumult-built 2020 products.

A *product* file describes a release whose neighbouring datasets move noisy counts by
integer vectors: SafeTab-P, SafeTab-H and PHSafe.  The format is documented in
``allocations/README.md`` ("Product files"); :mod:`exactdp.census.products` holds the
mechanism model built from it.  This module only turns text into validated exact values.

Every number is an exact rational written as a TOML string (``"0.008"``, ``"11/10000"``)
or a TOML integer, parsed by :func:`exactdp.numerics.exact.to_fraction` (the parser the
allocation files use too); a TOML float is refused with its literal text.
"""

from __future__ import annotations

import re
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

from exactdp.numerics.exact import InputError, to_fraction

__all__ = ["PRODUCT_FORMAT_TAG", "BUDGET_RULES", "parse_product_text", "read_product_file"]

#: Value of the mandatory top-level ``format`` key.
PRODUCT_FORMAT_TAG = "exactdp-product/1"

#: How a table's configured budget string becomes its exact ρ (see the README):
#: ``"tumult-float"`` — the exact binary value of the float Tumult Analytics is asked for
#: (``float(rho) * float(factor)``, as the production code computes it);
#: ``"decimal"`` — the decimal numbers as written (``rho × factor``).
BUDGET_RULES = ("tumult-float", "decimal")

_TOP = ("format", "name", "description", "product", "relation", "budget_rule", "configured_rho",
        "provenance", "budgets", "tables", "units", "fixed", "choice")
_REQUIRED = ("format", "name", "description", "product", "relation", "budget_rule", "configured_rho",
             "provenance", "budgets", "tables", "units")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
#: the largest |shift| and multiplicity a file may state (the engine's tested range)
MAX_SHIFT = 10**6
MAX_COUNT = 10**6


class _Float:
    """A TOML float literal, kept as text so the error message can quote it."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _Fields:
    """Validation helpers; every error names the file and the field."""

    def __init__(self, src: str):
        self.src = src

    def err(self, field: str, value, reason: str) -> InputError:
        return InputError(f"{self.src}: {field}", value, reason)

    def rational(self, value, field: str, positive: bool = False) -> Fraction:
        if isinstance(value, _Float):
            raise self.err(field, value, f'is a TOML float (read as an inexact binary float); write it as a '
                                         f'quoted string, e.g. "{value.text}"')
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.err(field, value, 'must be an exact rational written as a string ("0.008", "1/125") '
                                         'or an integer')
        try:
            frac = to_fraction(value, field)
        except InputError as exc:
            raise self.err(field, value, exc.reason) from None
        if frac < 0 or (positive and frac == 0):
            raise self.err(field, value, "must be > 0" if positive else "must be >= 0")
        return frac

    def integer(self, value, field: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.err(field, value, "must be a TOML integer")
        if not lo <= value <= hi:
            raise self.err(field, value, f"must lie in [{lo}, {hi}]")
        return value

    def text(self, doc: dict, key: str) -> str:
        value = doc[key]
        if not isinstance(value, str) or not value.strip():
            raise self.err(key, value, "must be a non-empty string")
        return value.strip()

    def table(self, value, field: str) -> dict:
        if not isinstance(value, dict) or not value:
            raise self.err(field, value, "must be a non-empty table")
        return value


def parse_product_text(text: str, src: str = "<string>") -> dict:
    """Parse and validate the text of a product file.

    Parameters
    ----------
    text : str
        TOML text in the ``exactdp-product/1`` format.
    src : str
        Name of the file, used in every error message.

    Returns
    -------
    dict
        Keyword arguments for :class:`exactdp.census.products.ProductAllocation`:
        ``name``, ``description``, ``product``, ``relation``, ``budget_rule``,
        ``configured_rho`` (Fraction), ``provenance``, ``budgets`` (configuration key →
        Fraction), ``tables`` (name → (budget key, factor, sensitivity_sq)), ``units`` (name →
        ((table, shifts), ...)), ``fixed`` (unit → count) and ``choices`` ((name, labels,
        options), ...).

    Raises
    ------
    InputError
        Naming the file, the field and the offending value.

    Notes
    -----
    Method: ``tomllib`` with a ``parse_float`` hook that marks float literals so they can
    be refused with their text; numbers through :func:`exactdp.numerics.exact.to_fraction`.
    Exact (no error bound applies).
    """
    f = _Fields(src)
    try:
        doc = tomllib.loads(text, parse_float=_Float)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(src, "<file>", f"is not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(src, "<file>", "is not valid input: its arrays or tables are nested too deeply") from None
    for key in doc:
        if key not in _TOP:
            raise f.err(key, doc[key], f"unknown top-level key; allowed: {', '.join(_TOP)}")
    for key in _REQUIRED:
        if key not in doc:
            raise f.err(key, None, "is missing (required)")
    if doc["format"] != PRODUCT_FORMAT_TAG:
        raise f.err("format", doc["format"], f'must be "{PRODUCT_FORMAT_TAG}"')
    out: dict[str, Any] = {k: f.text(doc, k) for k in ("name", "description", "product", "relation", "budget_rule")}
    if not _NAME_RE.match(out["name"]):
        raise f.err("name", out["name"], "must be lower-case letters, digits, '.', '_' or '-'")
    if out["budget_rule"] not in BUDGET_RULES:
        raise f.err("budget_rule", out["budget_rule"], f"must be one of {', '.join(BUDGET_RULES)}")
    out["configured_rho"] = f.rational(doc["configured_rho"], "configured_rho", positive=True)
    prov = f.table(doc["provenance"], "provenance")
    if "source" not in prov:
        raise f.err("provenance", prov, 'must contain at least a "source" string')
    for key, value in prov.items():
        if not isinstance(value, str):
            raise f.err(f"provenance.{key}", value, "must be a string")
    out["provenance"] = dict(prov)
    out["budgets"] = {k: f.rational(v, f"budgets.{k}", positive=True)
                      for k, v in f.table(doc["budgets"], "budgets").items()}
    out["tables"] = _tables(f, f.table(doc["tables"], "tables"), out["budgets"])
    out["units"] = _units(f, f.table(doc["units"], "units"), out["tables"])
    out["fixed"] = _counts(f, doc.get("fixed", {}), "fixed", out["units"])
    out["choices"] = _choices(f, doc.get("choice", []), out["units"])
    return out


def _tables(f: _Fields, raw: dict, budgets: dict) -> dict:
    out = {}
    for name, spec in raw.items():
        field = f"tables.{name}"
        if not isinstance(spec, dict):
            raise f.err(field, spec, "must be an inline table { budget = ..., sensitivity_sq = ... }")
        extra = set(spec) - {"budget", "factor", "sensitivity_sq"}
        if extra or "budget" not in spec or "sensitivity_sq" not in spec:
            raise f.err(field, spec, "needs budget and sensitivity_sq (and optionally factor), nothing else")
        if spec["budget"] not in budgets:
            raise f.err(f"{field}.budget", spec["budget"], "names no key of [budgets]")
        factor = f.rational(spec.get("factor", 1), f"{field}.factor", positive=True)
        if factor > 1:
            raise f.err(f"{field}.factor", spec["factor"], "must be <= 1 (a share of the level's budget)")
        sens = f.integer(spec["sensitivity_sq"], f"{field}.sensitivity_sq", 1, MAX_SHIFT**2)
        out[name] = (spec["budget"], factor, sens)
    return out


def _units(f: _Fields, raw: dict, tables: dict) -> dict:
    out = {}
    for name, spec in raw.items():
        field = f"units.{name}"
        if not isinstance(spec, dict) or not spec:
            raise f.err(field, spec, 'must be an inline table { "<table>" = [shift, ...], ... }')
        moves = []
        for table, shifts in spec.items():
            if table not in tables:
                raise f.err(f"{field}.{table}", shifts, "names no table of [tables]")
            if not isinstance(shifts, list) or not shifts:
                raise f.err(f"{field}.{table}", shifts, "must be a non-empty array of integer shifts")
            vals = tuple(f.integer(s, f"{field}.{table}[{k}]", -MAX_SHIFT, MAX_SHIFT) for k, s in enumerate(shifts))
            if 0 in vals:
                raise f.err(f"{field}.{table}", shifts, "a shift of 0 moves nothing; leave it out")
            moves.append((table, vals))
        out[name] = tuple(moves)
    return out


def _counts(f: _Fields, raw, field: str, units: dict) -> dict:
    if not isinstance(raw, dict):
        raise f.err(field, raw, "must be a table of unit = count")
    out = {}
    for unit, count in raw.items():
        if unit not in units:
            raise f.err(f"{field}.{unit}", count, "names no unit of [units]")
        out[unit] = f.integer(count, f"{field}.{unit}", 0, MAX_COUNT)
    return out


def _choices(f: _Fields, raw, units: dict) -> tuple:
    if not isinstance(raw, list):
        raise f.err("choice", raw, "must be an array of tables [[choice]]")
    out = []
    for k, ch in enumerate(raw):
        field = f"choice[{k}]"
        if not isinstance(ch, dict) or set(ch) - {"name", "labels", "options"} or "options" not in ch:
            raise f.err(field, ch, "needs options (and optionally name, labels), nothing else")
        name = ch.get("name", f"choice {k + 1}")
        if not isinstance(name, str) or not name.strip():
            raise f.err(f"{field}.name", name, "must be a non-empty string")
        opts = ch["options"]
        if not isinstance(opts, list) or not opts:
            raise f.err(f"{field}.options", opts, "must be a non-empty array of inline tables")
        options = tuple(_counts(f, o, f"{field}.options[{i}]", units) for i, o in enumerate(opts))
        labels = ch.get("labels", [str(i) for i in range(len(options))])
        if (not isinstance(labels, list) or len(labels) != len(options)
                or not all(isinstance(s, str) and s.strip() for s in labels) or len(set(labels)) != len(labels)):
            raise f.err(f"{field}.labels", labels, f"must be {len(options)} distinct non-empty strings")
        out.append((name.strip(), tuple(s.strip() for s in labels), options))
    return tuple(out)


def read_product_file(path) -> dict:
    """Read and validate a product file (see :func:`parse_product_text`)."""
    from exactdp.numerics.inputfiles import read_text

    path = Path(path)
    return parse_product_text(read_text(path, "product"), str(path))
