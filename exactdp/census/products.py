"""The Tumult-built 2020 Census products as exact designs: SafeTab-P, SafeTab-H, PHSafe.

A :class:`ProductAllocation` describes one production run (US or Puerto Rico):

* **budgets** — the configuration's budgets, by configuration key;
* **tables** — every released noisy table (one Tumult measurement): the budget key it
  spends, the share ``factor`` of it (SafeTab-P's stage split) and Tumult's squared L2
  sensitivity ``d²`` of the count, so ρ_t = budget × factor; each cell of the table gets discrete
  Gaussian noise of variance ``σ_t² = d²/(2ρ_t)`` (``tmlt.core.utils.parameters.
  calculate_noise_scale``: σ = d/√(2ρ));
* **units** — what one record moves: for each table it touches, the vector of integer
  shifts of distinct cells (a SafeTab population group moves one cell of its stage-1 and
  one of its stage-2 table; a PHSafe household join moves one cell by up to ``2τ+1``);
* **cases** — the worst-case neighbours: ``fixed`` unit counts plus one option of every
  ``choice`` (the Cartesian product).  A case is one neighbouring pair of Tumult's
  relation; its composition is :meth:`ProductAllocation.case_composition`.  The product's
  exact privacy is the worst (maximum δ(ε)) over its cases.

How a table's configured budget string becomes ρ_t: ``"tumult-float"`` (production: the
exact binary value of the float Tumult is asked for, ``float(rho) * float(factor)``;
Tumult converts a float budget with ``ExactNumber.from_float(value, round_up=False)``,
which keeps its exact value) or ``"decimal"`` (the configuration's decimals as written).
The model and its citations to the production code are in ``allocations/README.md``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from exactdp.census.product_format import BUDGET_RULES, read_product_file
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, fraction_str

__all__ = ["ProductAllocation", "Table", "load_product", "builtin_products", "PRODUCT_CONTENT_TAG"]

#: Tag inside the canonical serialisation hashed by :meth:`ProductAllocation.content_hash`.
PRODUCT_CONTENT_TAG = "exactdp-product-content/1"

_DATA_PACKAGE = "exactdp.allocation_data"
_FOLDER = "products"


#: more neighbour cases than this in one product or portfolio are refused (each case is one exact accounting)
MAX_CASES = 2000

@dataclass(frozen=True)
class Table:
    """One released noisy table: it spends ``factor`` of budget ``budget`` (value ``rho``)
    and its counts have Tumult's squared L2 sensitivity ``sensitivity_sq``."""

    name: str
    budget: str
    rho: Fraction
    factor: Fraction
    sensitivity_sq: int

    def exact_rho(self, rule: str) -> Fraction:
        """ρ_t under a budget rule (:data:`~exactdp.census.product_format.BUDGET_RULES`)."""
        if rule == "decimal":
            return self.rho * self.factor
        if rule == "tumult-float":
            return Fraction(float(self.rho) * float(self.factor))
        raise InputError("budget_rule", rule, f"must be one of {', '.join(BUDGET_RULES)}")

    def sigma2(self, rule: str) -> Fraction:
        """σ_t² = d²/(2ρ_t), the variance of every cell's discrete Gaussian noise."""
        return Fraction(self.sensitivity_sq) / (2 * self.exact_rho(rule))


@dataclass(frozen=True, eq=True)
class ProductAllocation:
    """A Tumult-built product: tables, what one record moves, and its worst-case neighbours.

    Parameters
    ----------
    name, description, product, relation : str
        Identifier, one paragraph, the product's public name and the neighbouring relation
        one case belongs to (Tumult's protected change).
    budget_rule : str
        ``"tumult-float"`` or ``"decimal"`` (how ``rho`` strings become exact ρ).
    configured_rho : Fraction
        The ρ the configuration spends (the sum of its budgets, decimal arithmetic).
    provenance : Mapping[str, str]
        Repository, config file and code lines the numbers come from.
    budgets : Mapping[str, Fraction]
        configuration key → budget (as written in the configuration).
    tables : Mapping[str, tuple]
        name → ``(budget key, factor, sensitivity_sq)`` (held as :class:`Table` once built).
    units : Mapping[str, tuple]
        name → ``((table, (shift, ...)), ...)``: what one unit of the record moves.
    fixed : Mapping[str, int]
        Unit counts present in every case.
    choices : tuple
        ``(name, labels, options)``; each option maps units to counts.  The cases are the
        Cartesian product of the options (first choice slowest).

    Raises
    ------
    InputError
        Unknown names, a case that spends more than a budget (Σ over the budget's tables
        of factor × moved squared L2 norm / sensitivity_sq > 1: Tumult's noise would not
        cover it), or budgets that do not add up to ``configured_rho``.

    Notes
    -----
    Method: exact :class:`fractions.Fraction` bookkeeping (no error bound applies).
    Reference for the model: the production code of SafeTab-P, SafeTab-H and PHSafe
    (uscensusbureau/DAS_2020_DDHCA/DDHCB/SDHC_Production_Code) and Tumult Analytics/Core;
    see ``allocations/README.md``.
    """

    name: str
    description: str
    product: str
    relation: str
    budget_rule: str
    configured_rho: Fraction
    provenance: Mapping[str, str]
    budgets: Mapping[str, Fraction]
    tables: Mapping[str, Any]  # given as (budget key, factor, sensitivity_sq) tuples, held as Table
    units: Mapping[str, tuple]
    fixed: Mapping[str, int]
    choices: tuple

    def __post_init__(self):
        put = functools.partial(object.__setattr__, self)
        if self.budget_rule not in BUDGET_RULES:
            raise InputError("budget_rule", self.budget_rule, f"must be one of {', '.join(BUDGET_RULES)}")
        put("provenance", MappingProxyType(dict(self.provenance)))
        put("budgets", MappingProxyType({k: Fraction(v) for k, v in dict(self.budgets).items()}))
        tables = {}
        for k, (b, f, s) in dict(self.tables).items():
            if b not in self.budgets:
                raise InputError(f"tables.{k}.budget", b, "names no budget")
            tables[k] = Table(k, b, self.budgets[b], Fraction(f), int(s))
        put("tables", MappingProxyType(tables))
        put("units", MappingProxyType({k: tuple((t, tuple(v)) for t, v in moves)
                                       for k, moves in dict(self.units).items()}))
        put("fixed", MappingProxyType(dict(self.fixed)))
        put("choices", tuple((n, tuple(lab), tuple(MappingProxyType(dict(o)) for o in opts))
                             for n, lab, opts in self.choices))
        for unit, moves in self.units.items():
            for table, _ in moves:
                if table not in self.tables:
                    raise InputError(f"units.{unit}", table, "names no table")
        for unit in list(self.fixed) + [u for _, _, opts in self.choices for o in opts for u in o]:
            if unit not in self.units:
                raise InputError("unit", unit, "names no unit of the product")
        total = sum(self.budgets.values(), Fraction(0))
        if total != self.configured_rho:
            raise InputError("configured_rho", fraction_str(self.configured_rho),
                             f"the budgets add up to {fraction_str(total)} = {float(total):.10g}")
        if self.n_cases > MAX_CASES:  # checked before the cases are enumerated
            raise InputError("choice", self.n_cases, f"the product's {self.n_cases} cases (the product of its "
                                                     f"choices' option counts) exceed {MAX_CASES}; give fewer options")
        for i in range(1, self.n_cases + 1):
            self._check_sensitivity(i)

    # -- cases ------------------------------------------------------------------------
    @property
    def n_cases(self) -> int:
        """Number of worst-case neighbours (product of the choices' option counts)."""
        n = 1
        for _, labels, _ in self.choices:
            n *= len(labels)
        return n

    def _key(self, i: int) -> tuple:
        if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= self.n_cases:
            raise InputError("case", i, f"must be an integer case number in 1..{self.n_cases} for {self.name!r}")
        key, rest = [], i - 1  # mixed radix, the first choice slowest (itertools.product order)
        for _, labels, _ in reversed(self.choices):
            rest, k = divmod(rest, len(labels))
            key.append(k)
        return tuple(reversed(key))

    def case_label(self, i: int) -> str:
        """``"choice=label; ..."`` of case ``i`` (``"single case"`` without choices)."""
        key = self._key(i)
        if not key:
            return "single case"
        return "; ".join(f"{name}: {labels[k]}" for (name, labels, _), k in zip(self.choices, key))

    def case_units(self, i: int) -> dict:
        """unit → count of case ``i`` (fixed counts plus the chosen options)."""
        counts = dict(self.fixed)
        for (_, _, opts), k in zip(self.choices, self._key(i)):
            for unit, c in opts[k].items():
                counts[unit] = counts.get(unit, 0) + c
        return {u: c for u, c in counts.items() if c}

    def case_shifts(self, i: int) -> dict:
        """table → list of ``(shift, count)``: the cells case ``i`` moves in every table."""
        out: dict = {}
        for unit, count in self.case_units(i).items():
            for table, shifts in self.units[unit]:
                for s in shifts:
                    out.setdefault(table, {}).setdefault(abs(s), 0)
                    out[table][abs(s)] += count
        return {t: sorted(v.items()) for t, v in out.items()}

    def budget_shares(self, i: int) -> dict:
        """budget key → the share of it case ``i`` spends: Σ over the key's tables of
        factor × (moved squared L2 norm) / sensitivity_sq (at most 1 for every key: tables
        of one key are either sequential shares (factors) or parallel partitions)."""
        out = {k: Fraction(0) for k in self.budgets}
        for table, moves in self.case_shifts(i).items():
            t = self.tables[table]
            out[t.budget] += t.factor * Fraction(sum(s * s * c for s, c in moves), t.sensitivity_sq)
        return out

    def _check_sensitivity(self, i: int) -> None:
        for key, share in self.budget_shares(i).items():
            if share > 1:
                raise InputError(f"case {i} ({self.case_label(i)})", key,
                                 f"spends {fraction_str(share)} of this budget (> 1): it moves its tables by "
                                 f"more than their L2 sensitivity, so Tumult's noise would not cover it")

    def case_composition(self, i: int, budget_rule: str | None = None) -> Composition:
        """The composition of case ``i``: one discrete Gaussian N_Z(shift, σ_t²) per moved cell."""
        rule = budget_rule or self.budget_rule
        groups: list[tuple[DiscreteGaussian, int]] = []
        for table, moves in self.case_shifts(i).items():
            s2 = self.tables[table].sigma2(rule)
            groups.extend((DiscreteGaussian(s2, s), c) for s, c in moves)
        return Composition(tuple(groups))

    def case_rho(self, i: int, budget_rule: str | None = None) -> Fraction:
        """zCDP ρ of case ``i`` (Σ shift²/(2σ²)); under the ``"decimal"`` rule at most the
        ρ Tumult accounts, :meth:`accounted_rho`."""
        return self.case_composition(i, budget_rule).rho


    def accounted_rho(self, budget_rule: str | None = None) -> Fraction:
        """Σ over budget keys of ρ_key under the rule: the ρ Tumult's accountant charges
        (``configured_rho`` under ``"decimal"``)."""
        rule = budget_rule or self.budget_rule
        if rule == "decimal":
            return self.configured_rho
        return sum((Table("", k, v, Fraction(1), 1).exact_rho(rule) for k, v in self.budgets.items()), Fraction(0))

    # -- identity ---------------------------------------------------------------------
    def canonical_json(self) -> str:
        """The canonical serialisation hashed by :meth:`content_hash` (mathematical content only)."""
        obj = {
            "format": PRODUCT_CONTENT_TAG,
            "budget_rule": self.budget_rule,
            "budgets": {k: fraction_str(v) for k, v in self.budgets.items()},
            "tables": {k: [t.budget, fraction_str(t.factor), t.sensitivity_sq] for k, t in self.tables.items()},
            "units": {k: [[t, list(v)] for t, v in moves] for k, moves in self.units.items()},
            "fixed": dict(self.fixed),
            "choices": [[list(lab), [dict(o) for o in opts]] for _, lab, opts in self.choices],
        }
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    def content_hash(self) -> str:
        """SHA-256 (hex) of :meth:`canonical_json`."""
        return hashlib.sha256(self.canonical_json().encode("ascii")).hexdigest()

    def __hash__(self) -> int:
        return hash((self.name, self.content_hash()))


# -- loading -----------------------------------------------------------------------------
def builtin_products() -> tuple[str, ...]:
    """Names of the built-in product files (sorted)."""
    folder = resources.files(_DATA_PACKAGE) / _FOLDER
    return tuple(sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml")))


def _from_file(path, src: str) -> ProductAllocation:
    fields = read_product_file(path)
    try:
        return ProductAllocation(**fields)
    except InputError as exc:
        raise InputError(f"{src}: {exc.field}", exc.value, exc.reason) from None


@functools.cache
def _load_builtin(name: str) -> ProductAllocation:
    res = resources.files(_DATA_PACKAGE) / _FOLDER / f"{name}.toml"
    with resources.as_file(res) as path:
        prod = _from_file(path, str(path))
    if prod.name != name:
        raise InputError(f"{res}: name", prod.name, f"a built-in file must be named after its name ({name!r})")
    return prod


def load_product(name_or_path) -> ProductAllocation:
    """Load a built-in product by name, or a product file by path.

    Parameters
    ----------
    name_or_path : str, os.PathLike or ProductAllocation
        A name from :func:`builtin_products` (e.g. ``"safetab-p-2020-us"``) or the path of
        a TOML file in the ``exactdp-product/1`` format.

    Returns
    -------
    ProductAllocation

    Raises
    ------
    InputError
        Unknown name, unreadable or malformed file (the message names the file, the
        field and the value).

    Notes
    -----
    Exact: every value is parsed to a :class:`fractions.Fraction`.
    """
    if isinstance(name_or_path, ProductAllocation):
        return name_or_path
    if isinstance(name_or_path, Path) or hasattr(name_or_path, "__fspath__") or (
        isinstance(name_or_path, str)
        and ("/" in name_or_path or "\\" in name_or_path or name_or_path.endswith(".toml"))
    ):
        path = Path(name_or_path)  # read_text refuses a missing, special or oversized file
        return _from_file(path, str(path))
    if not isinstance(name_or_path, str):
        raise InputError("product", name_or_path, "must be a built-in product name or a path to a .toml file")
    names = builtin_products()
    if name_or_path not in names:
        raise InputError("product", name_or_path,
                         f"unknown built-in product; built-ins are {', '.join(names)} "
                         "(or give the path of a .toml file)")
    return _load_builtin(name_or_path)
