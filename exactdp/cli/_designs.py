"""Designs from the command line: ``--sigma2 VALUE[xCOUNT]`` (and the other kinds' short
forms ``--dlaplace``, ``--rr``, ``--approx``), ``--mechanisms FILE``, ``--allocation NAME
--pair I J``.

Mechanism files (documented in the README and in docs/mixing.rst):

* TOML — an array of tables ``[[mechanism]]`` with ``sigma2 = "10000/11"`` (a string:
  exact rational or decimal), optional ``shift = 1`` (integer) and ``count = 20``; a
  ``kind`` key names another mechanism kind with its own fields
  (:data:`exactdp.cli._kinds.KINDS`): ``kind = "discrete_laplace"`` with ``scale`` (and
  ``shift``), ``kind = "randomized_response"`` with ``epsilon`` (and ``k``), ``kind =
  "approx_dp"`` with ``epsilon`` (and ``delta``), ``kind = "gaussian"`` (continuous) with
  ``sigma2`` (and a rational ``shift``), ``kind = "laplace"`` (continuous) with ``scale`` (and
  a rational ``shift``); ``kind = "discrete_gaussian"`` is the default.
* CSV — a header ``sigma2[,shift][,count]`` (or with a ``kind`` column and the columns of
  the kinds used, cells a row's kind does not take left empty) and one row per mechanism
  group.

A design of discrete Gaussians only is a :class:`~exactdp.mechanisms.Composition`, one with
other kinds a :class:`~exactdp.kinds.Mixture`.

Every number goes through the one parser (:func:`exactdp.numerics.exact.parse_exact`),
every file through :mod:`exactdp.numerics.inputfiles`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from exactdp.cli._common import add_pair_arguments, pair_specs, parse_pairs, set_design
from exactdp.cli._kinds import (
    ALL_FIELDS,
    INTEGER_FIELDS,
    KIND_FLAGS,
    RATIONAL_SHIFT_KINDS,
    describe_groups,
    group_from_fields,
    parse_kind_specs,
)
from exactdp.mechanisms import MAX_COUNT, MAX_SHIFT, Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, check_sigma2_range, fraction_str, parse_exact
from exactdp.numerics.inputfiles import TomlFloat

__all__ = ["MAX_COUNT", "MAX_SHIFT", "parse_sigma2_specs", "read_mechanisms_file", "add_design_arguments",
           "design_from_args", "design_spec", "design_label", "design_rho"]

#: the argparse ``dest`` of each kind flag
_DEST = {flag: flag[2:] for flag in KIND_FLAGS}

def _mechanism(sigma2_text, shift_text, count_text, where: str):
    """One mechanism group, every field range-checked by the one parser."""
    sigma2 = parse_exact(sigma2_text, f"{where}sigma2", lo=0, lo_open=True)
    check_sigma2_range(sigma2, f"{where}sigma2", str(sigma2_text))
    shift = int(parse_exact(shift_text, f"{where}shift", lo=-MAX_SHIFT, hi=MAX_SHIFT, integer=True))
    count = int(parse_exact(count_text, f"{where}count", lo=1, hi=MAX_COUNT, integer=True))
    return DiscreteGaussian(sigma2, shift), count


def parse_sigma2_specs(specs) -> Composition:
    """``["10000/11x20", "2.5025"]`` → Composition (unit shifts)."""
    groups = []
    for spec in specs:
        text = str(spec).strip(" \t")  # ASCII blanks only: a no-break space is refused by the number parser
        value, sep, count = text.partition("x")
        if sep and not count.strip():
            raise InputError("--sigma2", spec, "a count must follow 'x', e.g. 10000/11x20")
        if sep and not value.strip():
            raise InputError("--sigma2", spec, "a variance must come before 'x', e.g. 10000/11x20")
        try:
            groups.append(_mechanism(value, 1, count if sep else 1, ""))
        except InputError as exc:
            field = "--sigma2 count" if exc.field == "count" else "--sigma2"
            raise InputError(field, spec, exc.reason) from None
    return Composition(tuple(groups))


def _design(groups):
    """A Composition when every group is a discrete Gaussian, else a Mixture."""
    if all(isinstance(m, DiscreteGaussian) for m, _ in groups):
        return Composition(tuple(groups))
    from exactdp.kinds import Mixture

    return Mixture(tuple(groups))


def read_mechanisms_file(path):
    """Read a TOML or CSV mechanisms file (see the module docstring): a
    :class:`~exactdp.mechanisms.Composition`, or a :class:`~exactdp.kinds.Mixture` when a
    row names another kind."""
    from pathlib import Path

    from exactdp.numerics.inputfiles import parse_csv, parse_toml, read_text

    text = read_text(path, "--mechanisms")
    groups = []
    if Path(path).suffix.lower() == ".toml":
        data = parse_toml(text, "--mechanisms", str(path))
        rows = data.get("mechanism")
        if not isinstance(rows, list) or not rows:
            raise InputError("--mechanisms", str(path), "expected one or more [[mechanism]] tables")
        for i, row in enumerate(rows):
            groups.append(_row(row, f"{path}: mechanism[{i}]", toml=True))
    else:
        header, rows = parse_csv(text, "--mechanisms", str(path))
        if not ({"sigma2", "kind"} & set(header)) or not rows:
            raise InputError("--mechanisms", str(path), "expected a CSV header with a 'sigma2' (or a 'kind') column "
                                                        "and one row per mechanism group")
        for row in rows:
            line = row.pop(None)
            groups.append(_row(row, f"{path}: line {line}"))
    return _design(groups)


def _row(row, where: str, toml: bool = False):
    if not isinstance(row, dict):
        raise InputError(where, row, "must be a table with sigma2 (and optional shift, count), or a kind and its "
                                     "fields, e.g. [[mechanism]] sigma2 = \"10000/11\"")
    if "kind" not in row:  # the discrete Gaussian rows of before: their own messages
        unknown = set(row) - {"sigma2", "shift", "count"}
        if unknown - ALL_FIELDS:
            raise InputError(where, sorted(unknown), "unknown field(s); allowed: sigma2, shift, count (or a kind "
                                                     "key naming another mechanism kind, e.g. kind = "
                                                     "\"discrete_laplace\" with scale)")
        if "sigma2" not in row and not unknown:
            raise InputError(where, row, "missing sigma2")
    for key, value in row.items():
        if isinstance(value, TomlFloat):
            raise InputError(f"{where}: {key}", value, value.reason())
        if isinstance(value, (list, dict)) or isinstance(value, bool) or (key == "kind" and not isinstance(value, str)):
            raise InputError(f"{where}: {key}", value, "must be a string naming a kind, e.g. kind = "
                                                       "\"discrete_laplace\"" if key == "kind" else
                             "must be one number (a string such as \"10000/11\" or an integer)")
        if key == "shift" and row.get("kind") in RATIONAL_SHIFT_KINDS:
            continue  # the continuous Gaussian's real sensitivity: a rational string or an integer
        if toml and key in INTEGER_FIELDS and not (isinstance(value, int) and not isinstance(value, bool)):
            raise InputError(f"{where}: {key}", value, f"must be a TOML integer, e.g. {key} = "
                                                       f"{ {'shift': 1, 'count': 20, 'k': 3}[key]} (not a string)")
    return group_from_fields(row, f"{where}: ")


def add_design_arguments(p, kinds: bool = False) -> None:
    """Add the three ways of naming a design to an argparse parser (``kinds``: also the
    short forms of the kinds beside the discrete Gaussian, :data:`~exactdp.cli._kinds.KIND_FLAGS`)."""
    g = p.add_argument_group("design (one of; with kinds: --sigma2, --dlaplace, --rr, --approx, --gaussian and "
                             "--laplace combine into one mixed design)" if kinds else "design (one of)")
    g.add_argument("--sigma2", action="append", metavar="VALUE[xCOUNT]", default=[],
                   help="a mechanism N_Z(·, VALUE) with unit shift, COUNT times; exact rationals "
                        "such as 10000/11x20 (repeatable)")
    if kinds:
        for flag, (_, metavar, text) in KIND_FLAGS.items():
            g.add_argument(flag, dest=_DEST[flag], action="append", metavar=metavar, default=[], help=text)
    g.add_argument("--mechanisms", metavar="FILE",
                   help="TOML or CSV file of mechanisms (sigma2, shift, count"
                        + ("; or a kind: discrete_laplace with scale, randomized_response with epsilon [k], approx_dp "
                           "with epsilon [delta], gaussian with sigma2, laplace with scale)" if kinds else ")"))
    g.add_argument("--allocation", metavar="NAME|FILE", help="a built-in allocation or an allocation file")
    add_pair_arguments(g, many=False)


def design_spec(args) -> dict:
    """The design as the user named it (the envelope's ``design`` before it is built)."""
    spec: dict[str, str | list] = {}
    if getattr(args, "sigma2", None):
        spec["sigma2"] = list(args.sigma2)
    for dest in _DEST.values():
        if getattr(args, dest, None):
            spec[dest] = list(getattr(args, dest))
    if getattr(args, "mechanisms", None):
        spec["mechanisms_file"] = str(args.mechanisms)
    if getattr(args, "allocation", None):
        spec["allocation"] = str(args.allocation)
    if pair_specs(args):
        spec["pairs"] = [s for _, s in pair_specs(args)]
    return spec


def allocation_pair(args, alloc):
    """The one pair ``(i, j)`` of ``alloc`` named by ``--pair``/``--pairs`` (``None`` if none)."""
    pairs = parse_pairs(args, alloc.n_paths, single=True)
    return pairs[0] if pairs else None


def _kind_groups(args) -> list:
    return [g for flag, dest in _DEST.items() for g in parse_kind_specs(flag, getattr(args, dest, None) or ())]


def design_from_args(args, mixed: bool = False):
    """The design named by ``--sigma2`` (and the kind flags) / ``--mechanisms`` /
    ``--allocation --pair`` (also the envelope's ``design``: as named, with its zCDP ρ and
    size, and for a design mixing kinds its groups): a
    :class:`~exactdp.mechanisms.Composition`, or with ``mixed`` a
    :class:`~exactdp.kinds.Mixture` when kinds beside the discrete Gaussian are named
    (without ``mixed`` those are refused, naming the command's scope)."""
    spec = design_spec(args)
    set_design(spec)
    flags = bool(args.sigma2) or any(getattr(args, d, None) for d in _DEST.values())
    given = [flags, bool(args.mechanisms), bool(args.allocation)]
    if sum(given) != 1:
        raise InputError("design", None, "give exactly one of --sigma2 (with --dlaplace, --rr, --approx, --gaussian), "
                                         "--mechanisms or --allocation" if mixed else
                         "give exactly one of --sigma2, --mechanisms or --allocation")
    if pair_specs(args) and not args.allocation:
        flag, text = pair_specs(args)[0]
        raise InputError(flag, text, "only with --allocation (it names a neighbour case of an allocation)")
    comp: Any
    if flags:
        dg = list(parse_sigma2_specs(args.sigma2).groups) if args.sigma2 else []
        comp = _design(dg + _kind_groups(args))
    elif args.mechanisms:
        comp = read_mechanisms_file(args.mechanisms)
    else:
        from exactdp.census.allocations import load_allocation

        alloc = load_allocation(args.allocation)
        pair = allocation_pair(args, alloc)
        if pair is None:
            raise InputError("--pair", None, "an allocation needs --pair I J (or --pair I-J)")
        spec["pairs"] = [f"{pair[0]}-{pair[1]}"]
        comp = Composition.from_rhos(alloc.pair_rhos(*pair))
    if isinstance(comp, Composition):
        set_design({**spec, "rho_zcdp": fraction_str(comp.rho), "mechanisms": comp.size})
        return comp
    if not mixed:
        raise InputError("--mechanisms" if args.mechanisms else "design", str(args.mechanisms or "") or None,
                         "names mechanism kinds beside the discrete Gaussian; this command takes discrete Gaussians "
                         "only (exactdp delta, epsilon and tradeoff account mixed designs)")
    pure = comp.pure_epsilon
    gaussian_groups = [(m, n) for m, n in comp.groups if getattr(m, "kind", "gaussian") == "gaussian"]
    set_design({**spec, "kinds": sorted({g["kind"] for g in describe_groups(comp.groups)}),
                "mechanisms": comp.size, "groups": describe_groups(comp.groups),
                "gaussian_rho_zcdp": fraction_str(sum((m.rho * n for m, n in gaussian_groups), Fraction(0)))
                if gaussian_groups else None,
                "pure_epsilon": None if pure is None else fraction_str(pure)})
    return comp


def design_rho(design):
    """The zCDP ρ of a design's Gaussian parts, discrete and continuous (0 when it has none)."""
    if isinstance(design, Composition):
        return design.rho
    return sum((m.rho * n for m, n in design.groups if getattr(m, "kind", "gaussian") == "gaussian"), Fraction(0))


def design_label(design) -> str:
    """A design in a table's title: ``ρ = 5/4``, or the kinds and counts of a mixed design."""
    from exactdp.numerics.exact import rational_display

    if isinstance(design, Composition):
        return f"ρ = {rational_display(design.rho)}"
    counts: dict[str, int] = {}
    for g in describe_groups(design.groups):
        counts[g["kind"]] = counts.get(g["kind"], 0) + g["count"]
    return "mixed design: " + ", ".join(f"{n} {k}" for k, n in counts.items())
