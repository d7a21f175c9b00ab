"""Mechanism kinds as named in files and on the command line.

* :data:`KINDS` — each kind's fields: ``discrete_gaussian`` (``sigma2``, optional ``shift``;
  the default kind), ``discrete_laplace`` (``scale``, optional ``shift``),
  ``randomized_response`` (``epsilon``, optional ``k``), ``approx_dp`` (``epsilon``,
  optional ``delta``), ``gaussian`` (the continuous Gaussian: ``sigma2``, optional rational
  ``shift``), ``laplace`` (the continuous Laplace: ``scale``, optional rational ``shift``);
  every kind also takes ``count``;
* :func:`group_from_fields` — one row of fields (a TOML table, a CSV row) → ``(mechanism,
  count)``, every field range-checked by the one parser and every error one line naming it;
* :func:`parse_kind_specs` — the short forms ``--dlaplace SCALE[xCOUNT][@SHIFT]``,
  ``--rr EPS[:K][xCOUNT]``, ``--approx EPS[,DELTA][xCOUNT]`` and
  ``--gaussian SIGMA2[xCOUNT][@SHIFT]`` and ``--laplace SCALE[xCOUNT][@SHIFT]``;
* :func:`describe_groups` — a design's groups as the JSON envelope shows them.
"""

from __future__ import annotations

import re

from exactdp.mechanisms import MAX_COUNT, MAX_SHIFT, DiscreteGaussian
from exactdp.numerics.exact import InputError, check_sigma2_range, fraction_str, parse_exact

__all__ = ["KINDS", "DEFAULT_KIND", "KIND_FLAGS", "group_from_fields", "parse_kind_specs", "describe_groups"]

#: kind → (required fields, optional fields); ``count`` (default 1) is allowed for every kind
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "discrete_gaussian": (("sigma2",), ("shift",)),
    "discrete_laplace": (("scale",), ("shift",)),
    "randomized_response": (("epsilon",), ("k",)),
    "approx_dp": (("epsilon",), ("delta",)),
    "gaussian": (("sigma2",), ("shift",)),
    "laplace": (("scale",), ("shift",)),
}
DEFAULT_KIND = "discrete_gaussian"
#: fields that are integers (a TOML integer, not a string); the continuous Gaussian's shift is
#: any rational (:data:`RATIONAL_SHIFT_KINDS`)
INTEGER_FIELDS = frozenset({"shift", "count", "k"})
RATIONAL_SHIFT_KINDS = frozenset({"gaussian", "laplace"})
#: every field any kind takes
ALL_FIELDS = frozenset({"kind", "count"}.union(*(set(r) | set(o) for r, o in KINDS.values())))
_EXAMPLE = {"sigma2": '"10000/11"', "scale": '"5/2"', "epsilon": '"1/2"', "delta": '"1e-9"', "shift": "1",
            "count": "20", "k": "3"}
#: the command-line short form of each kind beside ``--sigma2``: flag → (kind, metavar, help)
KIND_FLAGS = {
    "--dlaplace": ("discrete_laplace", "SCALE[xCOUNT][@SHIFT]",
                   "a discrete Laplace mechanism (P(x) ∝ exp(−|x|/SCALE) on the integers; pure ε = abs(SHIFT)/SCALE) "
                   "with integer sensitivity SHIFT (default 1), COUNT times, e.g. 5/2x365 or 5/2x3@2 (repeatable)"),
    "--rr": ("randomized_response", "EPS[:K][xCOUNT]",
             "randomized response with exact ε = EPS over K categories (default 2), COUNT times, e.g. 1/2x10 or "
             "1:4 (repeatable)"),
    "--approx": ("approx_dp", "EPS[,DELTA][xCOUNT]",
                 "any (EPS, DELTA)-DP mechanism (DELTA default 0), composed through its exact dominating pair, "
                 "COUNT times, e.g. 1,1e-9x2 (repeatable)"),
    "--gaussian": ("gaussian", "SIGMA2[xCOUNT][@SHIFT]",
                   "a continuous Gaussian mechanism N(·, SIGMA2) with real sensitivity SHIFT (an exact rational, "
                   "default 1), COUNT times, e.g. 4x10 or 4@1/2 (repeatable)"),
    "--laplace": ("laplace", "SCALE[xCOUNT][@SHIFT]",
                  "a continuous Laplace mechanism (density ∝ exp(−|x|/SCALE); pure ε = abs(SHIFT)/SCALE) with real "
                  "sensitivity SHIFT (an exact rational, default 1), COUNT times, e.g. 2x10 or 2@1/2; at most 256 "
                  "of them (repeatable)"),
}


def _fields_text(kind: str) -> str:
    req, opt = KINDS[kind]
    return ", ".join(list(req) + [f"{f} (optional)" for f in opt + ("count",)])


def _kind_of(fields: dict, where: str) -> str:
    kind = fields.get("kind", DEFAULT_KIND)
    if not isinstance(kind, str) or kind.strip() not in KINDS:
        raise InputError(f"{where}kind", kind, f"unknown mechanism kind; one of {', '.join(KINDS)} "
                                              f"(default {DEFAULT_KIND})")
    return kind.strip()


def group_from_fields(fields: dict, where: str) -> tuple:
    """One mechanism group ``(mechanism, count)`` from its fields (texts or integers).

    Parameters
    ----------
    fields : dict
        ``kind`` (default ``discrete_gaussian``) and the kind's fields (:data:`KINDS`) plus
        ``count``; values are exact-number texts or integers (floats are refused by the
        caller, which knows how they were written).
    where : str
        Prefix of every field name in an error (``"f.toml: mechanism[2]: "``).

    Raises
    ------
    InputError
        An unknown kind, a field the kind does not take (``scale`` on a
        randomized_response), a missing field, or a value out of range — naming the field.
    """
    kind = _kind_of(fields, where)
    required, optional = KINDS[kind]
    for key in fields:
        if key in ("kind", "count") or key in required or key in optional:
            continue
        reason = (f"is not a field of a {kind} mechanism (its fields: {_fields_text(kind)})" if key in ALL_FIELDS
                  else f"unknown field; a {kind} mechanism takes {_fields_text(kind)}")
        if "kind" not in fields:
            owners = [k for k, (r, o) in KINDS.items() if key in r + o]
            if owners:
                reason += f"; name the mechanism's kind, e.g. kind = \"{owners[0]}\""
        raise InputError(f"{where}{key}", fields[key], reason)
    for key in required:
        if key not in fields:
            raise InputError(f"{where}{key}", None, f"missing: a {kind} mechanism needs {key} "
                                                    f"(e.g. {key} = {_EXAMPLE[key]})")
    try:
        count = int(parse_exact(fields.get("count", 1), "count", lo=1, hi=MAX_COUNT, integer=True))
        return _mechanism(kind, fields), count
    except InputError as exc:
        raise InputError(f"{where}{exc.field}", exc.value, exc.reason) from None


def _mechanism(kind: str, fields: dict):
    from exactdp.kinds import ApproxDP, DiscreteLaplace, RandomizedResponse

    def shift() -> int:
        return int(parse_exact(fields.get("shift", 1), "shift", lo=-MAX_SHIFT, hi=MAX_SHIFT, integer=True))

    if kind == "discrete_gaussian":
        sigma2 = parse_exact(fields["sigma2"], "sigma2", lo=0, lo_open=True)
        check_sigma2_range(sigma2, "sigma2", str(fields["sigma2"]))
        return DiscreteGaussian(sigma2, shift())
    if kind == "discrete_laplace":
        return DiscreteLaplace(parse_exact(fields["scale"], "scale", lo=0, lo_open=True), shift())
    if kind == "randomized_response":
        k = int(parse_exact(fields.get("k", 2), "k", lo=2, integer=True))
        return RandomizedResponse(parse_exact(fields["epsilon"], "epsilon", lo=0), k)
    if kind == "laplace":
        from exactdp.kinds import Laplace

        return Laplace(parse_exact(fields["scale"], "scale", lo=0, lo_open=True),
                       parse_exact(fields.get("shift", 1), "shift", lo=-MAX_SHIFT, hi=MAX_SHIFT))
    if kind == "gaussian":
        from exactdp.kinds import Gaussian

        return Gaussian(parse_exact(fields["sigma2"], "sigma2", lo=0, lo_open=True),
                        parse_exact(fields.get("shift", 1), "shift", lo=-MAX_SHIFT, hi=MAX_SHIFT))
    return ApproxDP(parse_exact(fields["epsilon"], "epsilon", lo=0),
                    parse_exact(fields.get("delta", 0), "delta", lo=0, hi=1, hi_open=True))


# ----------------------------------------------------------------------------- short forms
_SEPARATORS = {"x": "count", "@": "shift"}


def _split_spec(flag: str, spec: str, example: str) -> tuple[str, dict]:
    """``"5/2x3@2"`` → ``("5/2", {"count": "3", "shift": "2"})`` (each suffix at most once,
    in either order)."""
    text = str(spec).strip(" \t")  # ASCII blanks only, as --sigma2
    parts = re.split(r"([x@])", text)
    value, extra = parts[0], {}
    for sep, tail in zip(parts[1::2], parts[2::2]):
        name = _SEPARATORS[sep]
        if name in extra:
            raise InputError(flag, spec, f"names a {name} twice ('{sep}'), e.g. {example}")
        if not tail.strip():
            raise InputError(flag, spec, f"a {name} must follow '{sep}', e.g. {example}")
        extra[name] = tail
    if not value.strip():
        raise InputError(flag, spec, f"the parameters must come first, e.g. {example}")
    return value, extra


def _short_fields(flag: str, spec: str) -> dict:
    kind = KIND_FLAGS[flag][0]
    example = {"--dlaplace": "5/2x3@2", "--rr": "1/2:3x10", "--approx": "1,1e-9x2", "--gaussian": "4x10@1/2",
               "--laplace": "2x10@1/2"}[flag]
    value, extra = _split_spec(flag, spec, example)
    fields: dict = {"kind": kind, "count": extra.get("count", 1)}
    if "shift" in extra:
        if kind not in ("discrete_laplace", "gaussian", "laplace"):
            raise InputError(flag, spec, f"takes no '@SHIFT' (a {kind} mechanism has no sensitivity parameter)")
        fields["shift"] = extra["shift"]
    if kind in ("discrete_laplace", "laplace"):
        fields["scale"] = value
    elif kind == "gaussian":
        fields["sigma2"] = value
    elif kind == "randomized_response":
        eps, sep, k = value.partition(":")
        if sep and not k.strip():
            raise InputError(flag, spec, f"a number of categories must follow ':', e.g. {example}")
        fields.update(epsilon=eps, **({"k": k} if sep else {}))
    else:
        eps, sep, delta = value.partition(",")
        if sep and not delta.strip():
            raise InputError(flag, spec, f"a δ must follow ',', e.g. {example}")
        fields.update(epsilon=eps, **({"delta": delta} if sep else {}))
    return fields


def parse_kind_specs(flag: str, specs) -> list:
    """The ``(mechanism, count)`` groups of the short forms of one flag (:data:`KIND_FLAGS`);
    an error names the flag (``--dlaplace count`` for the count) and the text as typed."""
    groups = []
    for spec in specs:
        fields = _short_fields(flag, spec)
        try:
            groups.append(group_from_fields(fields, ""))
        except InputError as exc:
            field = flag if exc.field in ("scale", "epsilon", "sigma2") else f"{flag} {exc.field}"
            raise InputError(field, spec, exc.reason) from None
    return groups


# ----------------------------------------------------------------------------- the envelope
def describe_groups(groups) -> list[dict]:
    """Each ``(mechanism, count)`` as ``{"kind", <its parameters>, "count"}`` with exact
    rationals as ``"p/q"`` text (the fields of a mechanism file)."""
    out = []
    for mech, count in groups:
        kind = getattr(mech, "kind", "") or DEFAULT_KIND
        if isinstance(mech, DiscreteGaussian):
            params: dict = {"sigma2": fraction_str(mech.sigma2), "shift": mech.shift}
        elif kind == "discrete_laplace":
            params = {"scale": fraction_str(mech.scale), "shift": mech.shift}
        elif kind == "randomized_response":
            params = {"epsilon": fraction_str(mech.epsilon), "k": mech.k}
        elif kind == "gaussian":
            params = {"sigma2": fraction_str(mech.sigma2), "shift": fraction_str(mech.shift)}
        elif kind == "laplace":
            params = {"scale": fraction_str(mech.scale), "shift": fraction_str(mech.shift)}
        else:
            params = {"epsilon": fraction_str(mech.epsilon), "delta": fraction_str(mech.delta)}
        out.append({"kind": kind, **params, "count": count})
    return out
