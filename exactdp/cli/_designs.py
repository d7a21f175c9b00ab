"""Designs from the command line: ``--sigma2 VALUE[xCOUNT]``, ``--mechanisms FILE``,
``--allocation NAME --pair I J``.

Mechanism files (documented in the README):

* TOML — an array of tables ``[[mechanism]]`` with ``sigma2 = "10000/11"`` (a string:
  exact rational or decimal), optional ``shift = 1`` (integer) and ``count = 20``.
* CSV — a header ``sigma2[,shift][,count]`` and one row per mechanism group.
"""

from __future__ import annotations

from exactdp.cli._common import check_exponent
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, check_sigma2_range, positive_fraction, to_int

#: the largest multiplicity and |shift| a design may name (the engine's tested range)
MAX_COUNT = 10**9
MAX_SHIFT = 10**12

__all__ = ["MAX_COUNT", "MAX_SHIFT", "parse_sigma2_specs", "read_mechanisms_file", "add_design_arguments",
           "design_from_args"]


def parse_sigma2_specs(specs) -> Composition:
    """``["10000/11x20", "2.5025"]`` → Composition (unit shifts)."""
    groups = []
    for spec in specs:
        text = str(spec).strip()
        value, sep, count = text.partition("x")
        check_exponent(value, "--sigma2")
        sigma2 = positive_fraction(value, "--sigma2")
        if sep and not count.strip():
            raise InputError("--sigma2", spec, "a count must follow 'x', e.g. 10000/11x20")
        n = to_int(count, "--sigma2 count") if sep else 1
        if not 1 <= n <= MAX_COUNT:
            raise InputError("--sigma2 count", spec, f"must lie in [1, {MAX_COUNT:.0e}]")
        check_sigma2_range(sigma2, "--sigma2", value.strip())
        groups.append((DiscreteGaussian(sigma2, 1), n))
    return Composition(tuple(groups))


def read_mechanisms_file(path) -> Composition:
    """Read a TOML or CSV mechanisms file (see the module docstring)."""
    import csv
    import tomllib
    from pathlib import Path

    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError("--mechanisms", str(path), f"cannot read file ({exc.strerror or exc})") from None
    groups = []
    if p.suffix.lower() == ".toml":
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError("--mechanisms", str(path), f"not valid TOML ({exc})") from None
        rows = data.get("mechanism")
        if not isinstance(rows, list) or not rows:
            raise InputError("--mechanisms", str(path), "expected one or more [[mechanism]] tables")
        for i, row in enumerate(rows):
            groups.append(_row(row, f"{path}: mechanism[{i}]"))
    else:
        try:
            reader = csv.DictReader(raw.decode("utf-8").splitlines())
            rows = list(reader)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError("--mechanisms", str(path), f"not valid CSV ({exc})") from None
        if not rows or "sigma2" not in (reader.fieldnames or []):
            raise InputError("--mechanisms", str(path), "expected a CSV header with a 'sigma2' column")
        for i, row in enumerate(rows, start=2):
            groups.append(_row({k: v for k, v in row.items() if v not in (None, "")}, f"{path}: line {i}"))
    return Composition(tuple(groups))


def _row(row: dict, where: str):
    unknown = set(row) - {"sigma2", "shift", "count"}
    if unknown:
        raise InputError(where, sorted(unknown), "unknown field(s); allowed: sigma2, shift, count")
    if "sigma2" not in row:
        raise InputError(where, row, "missing sigma2")
    for key in ("sigma2", "shift", "count"):
        if isinstance(row.get(key), str):
            check_exponent(row[key], f"{where}: {key}")
    sigma2 = positive_fraction(row["sigma2"], f"{where}: sigma2")
    check_sigma2_range(sigma2, f"{where}: sigma2", str(row["sigma2"]))
    shift = to_int(row.get("shift", 1), f"{where}: shift")
    count = to_int(row.get("count", 1), f"{where}: count")
    if not 1 <= count <= MAX_COUNT:
        raise InputError(f"{where}: count", count, f"must lie in [1, {MAX_COUNT:.0e}]")
    if abs(shift) > MAX_SHIFT:
        raise InputError(f"{where}: shift", shift, f"|shift| above {MAX_SHIFT:.0e} is not supported")
    return (DiscreteGaussian(sigma2, shift), count)


def add_design_arguments(p) -> None:
    """Add the three ways of naming a design to an argparse parser."""
    g = p.add_argument_group("design (one of)")
    g.add_argument("--sigma2", action="append", metavar="VALUE[xCOUNT]", default=[],
                   help="a mechanism N_Z(·, VALUE) with unit shift, COUNT times; exact rationals "
                        "such as 10000/11x20 (repeatable)")
    g.add_argument("--mechanisms", metavar="FILE", help="TOML or CSV file of mechanisms (sigma2, shift, count)")
    g.add_argument("--allocation", metavar="NAME|FILE", help="a built-in allocation or an allocation file")
    g.add_argument("--pair", nargs=2, type=int, metavar=("I", "J"), help="neighbour case: path I to path J")


def design_from_args(args) -> Composition:
    """The Composition named by ``--sigma2`` / ``--mechanisms`` / ``--allocation --pair``."""
    given = [bool(args.sigma2), bool(args.mechanisms), bool(args.allocation)]
    if sum(given) != 1:
        raise InputError("design", None, "give exactly one of --sigma2, --mechanisms or --allocation")
    if args.pair is not None and not args.allocation:
        raise InputError("--pair", " ".join(map(str, args.pair)), "only with --allocation (it names a neighbour case "
                                                                 "of an allocation)")
    if args.sigma2:
        return parse_sigma2_specs(args.sigma2)
    if args.mechanisms:
        return read_mechanisms_file(args.mechanisms)
    from exactdp.census.allocations import load_allocation

    alloc = load_allocation(args.allocation)
    if args.pair is None:
        raise InputError("--pair", None, "an allocation needs --pair I J")
    i, j = args.pair
    for name, v in (("--pair I", i), ("--pair J", j)):
        if not 1 <= v <= alloc.n_paths:
            raise InputError(name, v, f"paths of {alloc.name} are numbered 1..{alloc.n_paths}")
    return Composition.from_rhos(alloc.pair_rhos(i, j))
