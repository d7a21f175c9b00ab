"""Designs from the command line: ``--sigma2 VALUE[xCOUNT]``, ``--mechanisms FILE``,
``--allocation NAME --pair I J``.

Mechanism files (documented in the README):

* TOML — an array of tables ``[[mechanism]]`` with ``sigma2 = "10000/11"`` (a string:
  exact rational or decimal), optional ``shift = 1`` (integer) and ``count = 20``.
* CSV — a header ``sigma2[,shift][,count]`` and one row per mechanism group.

Every number goes through the one parser (:func:`exactdp.numerics.exact.parse_exact`),
every file through :mod:`exactdp.numerics.inputfiles`.
"""

from __future__ import annotations

from exactdp.cli._common import add_pair_arguments, pair_specs, parse_pairs, set_design
from exactdp.mechanisms import MAX_COUNT, MAX_SHIFT, Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, check_sigma2_range, fraction_str, parse_exact
from exactdp.numerics.inputfiles import TomlFloat

__all__ = ["MAX_COUNT", "MAX_SHIFT", "parse_sigma2_specs", "read_mechanisms_file", "add_design_arguments",
           "design_from_args", "design_spec"]

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


def read_mechanisms_file(path) -> Composition:
    """Read a TOML or CSV mechanisms file (see the module docstring)."""
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
        if "sigma2" not in header or not rows:
            raise InputError("--mechanisms", str(path), "expected a CSV header with a 'sigma2' column and one row "
                                                        "per mechanism group")
        for row in rows:
            line = row.pop(None)
            groups.append(_row(row, f"{path}: line {line}"))
    return Composition(tuple(groups))


def _row(row, where: str, toml: bool = False):
    if not isinstance(row, dict):
        raise InputError(where, row, "must be a table with sigma2 (and optional shift, count), e.g. "
                                     "[[mechanism]] sigma2 = \"10000/11\"")
    unknown = set(row) - {"sigma2", "shift", "count"}
    if unknown:
        raise InputError(where, sorted(unknown), "unknown field(s); allowed: sigma2, shift, count")
    if "sigma2" not in row:
        raise InputError(where, row, "missing sigma2")
    for key, value in row.items():
        if isinstance(value, TomlFloat):
            raise InputError(f"{where}: {key}", value, value.reason())
        if isinstance(value, (list, dict)):
            raise InputError(f"{where}: {key}", value,
                             "must be one number (a string such as \"10000/11\" or an integer)")
        if toml and key in ("shift", "count") and not (isinstance(value, int) and not isinstance(value, bool)):
            raise InputError(f"{where}: {key}", value, f"must be a TOML integer, e.g. {key} = "
                                                       f"{1 if key == 'shift' else 20} (not a string)")
    return _mechanism(row["sigma2"], row.get("shift", 1), row.get("count", 1), f"{where}: ")


def add_design_arguments(p) -> None:
    """Add the three ways of naming a design to an argparse parser."""
    g = p.add_argument_group("design (one of)")
    g.add_argument("--sigma2", action="append", metavar="VALUE[xCOUNT]", default=[],
                   help="a mechanism N_Z(·, VALUE) with unit shift, COUNT times; exact rationals "
                        "such as 10000/11x20 (repeatable)")
    g.add_argument("--mechanisms", metavar="FILE", help="TOML or CSV file of mechanisms (sigma2, shift, count)")
    g.add_argument("--allocation", metavar="NAME|FILE", help="a built-in allocation or an allocation file")
    add_pair_arguments(g, many=False)


def design_spec(args) -> dict:
    """The design as the user named it (the envelope's ``design`` before it is built)."""
    spec: dict[str, str | list] = {}
    if getattr(args, "sigma2", None):
        spec["sigma2"] = list(args.sigma2)
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


def design_from_args(args) -> Composition:
    """The Composition named by ``--sigma2`` / ``--mechanisms`` / ``--allocation --pair``
    (also the envelope's ``design``: as named, with its zCDP ρ and size)."""
    spec = design_spec(args)
    set_design(spec)
    given = [bool(args.sigma2), bool(args.mechanisms), bool(args.allocation)]
    if sum(given) != 1:
        raise InputError("design", None, "give exactly one of --sigma2, --mechanisms or --allocation")
    if pair_specs(args) and not args.allocation:
        flag, text = pair_specs(args)[0]
        raise InputError(flag, text, "only with --allocation (it names a neighbour case of an allocation)")
    if args.sigma2:
        comp = parse_sigma2_specs(args.sigma2)
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
    set_design({**spec, "rho_zcdp": fraction_str(comp.rho), "mechanisms": comp.size})
    return comp
