"""OpenDP's own noise measurements, read back exactly and composed exactly.

OpenDP composes a pure-DP discrete Laplace and a zCDP discrete Gaussian only after
converting both to one measure and adding the bounds.  Every OpenDP measurement remembers
the constructor that built it and its arguments; this module reads them back and accounts
the measurements exactly (``pip install 'exactdp[opendp]'``):

* :func:`designs_of` / :func:`design_of` — the exactdp design (a
  :class:`~exactdp.mechanisms.Composition` or a :class:`~exactdp.kinds.Mixture`) of one
  measurement or a list of them at an input distance: ``make_laplace`` / ``make_geometric``
  on integers → ``DiscreteLaplace(scale, shift)`` (OpenDP's scale b, pmf ∝ e^{−|x|/b}, is
  exactdp's scale; its float taken exactly), ``make_gaussian`` on integers →
  ``DiscreteGaussian(scale², shift)``; the shift is what the measurement's input metric
  allows at the distance (after a ``make_count``-style transformation: its stability map);
  ``make_chain_mt``, ``make_chain_pm`` (post-processing) and ``make_composition`` are
  walked through;
* :func:`make_exact_composition` — one OpenDP measurement releasing every given
  measurement, whose privacy map (smoothed max divergence) is exactdp's certified profile of
  their exact composition.

* ``make_laplace`` / ``make_gaussian`` on a float query (``atom_domain(T=float)`` with
  ``absolute_distance``; the Gaussian also on float vectors with ``l2_distance``) →
  exactdp's continuous :class:`~exactdp.kinds.laplace.Laplace` (scale b) /
  :class:`~exactdp.kinds.gaussian.Gaussian` (σ² = b²), the shift the input distance (all
  taken exactly, floats as the binary rationals they are).  OpenDP samples these as a
  discrete Laplace / Gaussian on the grid 2^k (k = −1074 for f64 with ``k=None``) after
  rounding the input to it; exactdp accounts the continuous mechanism of that scale, the
  one OpenDP's privacy map states (ε = d_in/b for the Laplace, ρ = d_in²/(2b²) for the
  Gaussian: exactly its ``map``), not the grid's O(2^k/b) difference.  With an explicit
  ``k`` (a float atom_domain with absolute_distance) the noise is the discrete one on the grid
  2^k, read back exactly: ``DiscreteLaplace(b/2^k, Δ)`` / ``DiscreteGaussian((b/2^k)², Δ)``,
  Δ = ⌊(d + 2^k − 2^k_min)/2^k⌋ the largest whole number of grid steps OpenDP's own stability
  map allows the rounded input to move (2^k_min the float's least spacing).  On float vectors
  of known size n with an explicit ``k`` (the Laplace with ``l1_distance``, the Gaussian with
  ``l2_distance``; OpenDP refuses other metrics and unknown sizes): the rounded query, in grid
  steps, is an integer vector r of ℓp norm at most B = (d + n^{1/p}(2^k − 2^k_min))/2^k (OpenDP's
  stability map).  For the Laplace (ℓ1) one coordinate moved by ⌊B⌋ steps dominates every such
  r, alone and beside other mechanisms (:mod:`~exactdp.interop.opendp_laplace_ball`: a garbling
  argument, no enumeration, no limit); the same holds for ``make_laplace`` / ``make_geometric``
  on integer vectors with ``l1_distance`` and, with ``k=None``, for the continuous Laplace on
  float vectors with ``l1_distance`` (``Laplace(b, d)``, the convention above).  For the Gaussian
  (ℓ2) one coordinate moved by the whole norm is not the worst case (the discrete Gaussian with
  shifts (4, 3) has a larger δ(2) than with 5), so the profile is the pointwise maximum over the
  maximal such r (the multisets with Σ r_i² ≤ ⌊B²⌋ to which no unit can be added), at most
  :data:`MAX_PATTERNS` of them, else refused naming ``k``.

* ``make_randomized_response(categories, prob)`` / ``make_randomized_response_bool(prob)``
  → :class:`~exactdp.kinds.RandomizedResponseNoise` ``(k(1 − prob)/(k − 1), k)``, k the
  number of categories (2 for the bool one), the float prob taken exactly: the same output
  distributions (the true category with prob, each other with (1 − prob)/(k − 1)); one event
  at any input distance ≥ 1 (the discrete metric).

Refused, each with a message naming what to use: a discrete Gaussian vector (an explicit ``k``
on float vectors, or integer vectors with ``l1_distance`` / ``l2_distance``) whose ball admits more
than :data:`MAX_PATTERNS` worst-case shift patterns (no certified profile without accounting each), and a
randomized response whose prob lies outside [1/k, 1) (naming ``prob``).

>>> import opendp.prelude as dp
>>> from exactdp.interop.opendp_measurements import design_of
>>> dp.enable_features("contrib")
>>> count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
>>> design_of(count >> dp.m.then_laplace(scale=2.5))
Mixture(groups=((DiscreteLaplace(scale=Fraction(5, 2), shift=1), 1),))
>>> dp.disable_features("contrib")
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import opendp.prelude as dp

from exactdp.interop.opendp import MAX_PATTERNS, _integer_patterns
from exactdp.interop.opendp_laplace_ball import LAPLACE_NOISE, l1_worst_shifts
from exactdp.interop.profile import CertifiedProfile
from exactdp.kinds import DiscreteLaplace, Gaussian, Laplace, Mixture, RandomizedResponseNoise
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, to_int

__all__ = ["designs_of", "design_of", "make_exact_composition"]

_FLOATS = {"f32", "f64"}
_INTEGERS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}


def _recipe(measurement) -> tuple[str, dict]:
    """``(constructor name, its arguments)`` that OpenDP keeps on a measurement."""
    info = getattr(measurement, "__dict__", {}).get("__opendp_dict__")
    if not isinstance(info, dict) or "__function__" not in info:
        raise InputError("measurement", _short(measurement), "is not a measurement built by an OpenDP constructor "
                                                             "(its recipe cannot be read back)")
    return str(info["__function__"]), dict(info.get("__kwargs__") or {})


def _short(obj) -> str:
    return " ".join(str(obj).split())[:120]


def _exact(value, field: str) -> Fraction:
    try:
        frac = Fraction(value)  # a binary float taken exactly: OpenDP's samplers use this rational
    except (TypeError, ValueError, OverflowError):
        raise InputError(field, value, "must be a finite number") from None
    if frac <= 0:
        raise InputError(field, value, "must be > 0")
    return frac


def _continuous(name: str, kwargs: dict, d) -> list[list] | None:
    """The continuous Laplace / Gaussian of a noise measurement on floats (module docstring),
    None on other carriers."""
    domain, metric = kwargs["input_domain"], str(kwargs["input_metric"])
    vector = str(domain).startswith("VectorDomain")
    atom = str(domain.element_domain.carrier_type if vector else domain.carrier_type)
    if atom not in _FLOATS:
        return None
    scale = _exact(kwargs.get("scale"), "scale")
    if kwargs.get("k") is not None:
        return _on_grid(name, kwargs, d, scale, atom, vector, metric)
    if name == "make_gaussian" and (metric.startswith("AbsoluteDistance") and not vector or
                                    metric.startswith("L2Distance")):
        return [[(Gaussian(scale * scale, d), 1)]]  # (its loss depends on the ℓ2 norm of the shift only)
    if name == "make_laplace" and (metric.startswith("AbsoluteDistance") and not vector or
                                   metric.startswith("L1Distance") and vector):
        return [[(Laplace(scale, d), 1)]]  # (on vectors: one coordinate moved by d, opendp_laplace_ball)
    raise InputError("measurement", f"{name} on {domain} with {metric}",
                     "exactdp reads back OpenDP's float Laplace with absolute_distance or on vectors with "
                     "l1_distance, and its float Gaussian with absolute_distance or on vectors with l2_distance")


def _on_grid(name: str, kwargs: dict, d, scale: Fraction, atom: str, vector: bool, metric: str) -> list[list]:
    """A float Laplace / Gaussian with an explicit ``k`` (module docstring): the input rounded to
    the nearest multiple of 2^k (OpenDP 0.16 rounds a tie up), a discrete Laplace / Gaussian of scale ``scale/2^k``
    added on that grid, the result times 2^k (post-processing).  OpenDP's stability map bounds
    the rounded shift by ``d + 2^k − 2^k_min`` (2^k_min the float's least spacing); the largest
    whole number of grid steps within that bound is the shift (attained by x = 2^(k−1), a tie
    rounded up, and x' = x − d where that is a float; an upper bound of the shift otherwise)."""
    try:
        k = to_int(kwargs["k"], "k")
    except InputError:
        raise InputError("k", kwargs["k"], f"{name}: k must be an integer (the noise grid 2^k)") from None
    k_min = -1074 if atom == "f64" else -149  # (OpenDP's get_min_k: −bias − mantissa bits + 1)
    if k < k_min:
        raise InputError("k", k, f"{name}: k must be at least {k_min} for {atom}")
    grid = Fraction(2) ** k
    noise = scale / grid

    def mech(steps: int):
        return DiscreteGaussian(noise * noise, steps) if name == "make_gaussian" else DiscreteLaplace(noise, steps)

    if vector:
        return [[(mech(s), c) for s, c in sorted(Counter(pattern).items(), reverse=True)]
                for pattern in _grid_patterns(name, kwargs["input_domain"], metric, Fraction(d), k, k_min)]
    if not metric.startswith("AbsoluteDistance"):
        raise InputError("input_metric", metric, f"{name} with an explicit k: exactdp reads back absolute_distance")
    steps = math.floor((Fraction(d) + grid - Fraction(2) ** k_min) / grid)
    return [[(mech(steps), 1)]]


def _grid_patterns(name: str, domain, metric: str, d: Fraction, k: int, k_min: int) -> list[tuple[int, ...]]:
    """The maximal integer shift vectors (in grid steps, as descending tuples of the moved
    coordinates) of a float vector query rounded to the grid 2^k: ℓp norm at most
    B = (d + n^{1/p}(2^k − 2^k_min))/2^k (OpenDP's stability map of the rounding: each
    coordinate's two rounding errors differ by less than one step, by a whole number of
    2^k_min), at most n coordinates moved."""
    kind = "L1" if metric.startswith("L1Distance") else "L2" if metric.startswith("L2Distance") else None
    size = domain.size
    if kind is None or not size:
        raise InputError("input_metric", f"{domain} with {metric}",
                         f"{name} on float vectors with an explicit k: exactdp reads back a vector_domain of known "
                         "size with l1_distance or l2_distance")
    n = int(size)
    D = d / Fraction(2) ** k
    c = 1 - Fraction(2) ** (k_min - k)  # (2^k − 2^k_min)/2^k
    if kind == "L1":
        budget = math.floor(D + n * c)
    else:  # ⌊(D + √n·c)²⌋ = ⌊X + √Z⌋ exactly, X = D² + n c², Z = 4 D² c² n
        x, z = D * D + n * c * c, 4 * D * D * c * c * n
        budget = math.floor(x) + math.isqrt(math.floor(z))
        while budget + 1 <= x or (budget + 1 - x) ** 2 <= z:
            budget += 1
        while budget > x and (budget - x) ** 2 > z:
            budget -= 1
    if kind == "L1" and name in LAPLACE_NOISE:
        return l1_worst_shifts(budget)  # (dominates every vector of the ball: opendp_laplace_ball)
    out: list[tuple[int, ...]] = []

    def add(pattern: tuple[int, ...]) -> None:
        out.append(pattern)
        if len(out) > MAX_PATTERNS:
            raise InputError("k", k, f"{name} on float vectors of size {n}: the grid 2^{k} lets the rounded query move "
                                     f"by up to {budget} {'steps in ℓ1' if kind == 'L1' else 'squared steps in ℓ2'}, "
                                     f"more than {MAX_PATTERNS} worst-case shift patterns (each accounted exactly); "
                                     "use a larger k, or k=None")

    def grow(prefix: tuple[int, ...], left: int, largest: int) -> None:
        room = len(prefix) < n
        if kind == "L1":
            if left == 0 or not room:
                if left == 0:
                    add(prefix)
                return
        elif not room or left == 0:  # ℓ2: maximal when no coordinate can take one more step
            if left == 0 or (prefix and left < 2 * prefix[-1] + 1):
                add(prefix)
            return
        slots = n - len(prefix)
        for part in range(min(largest, left if kind == "L1" else math.isqrt(left)), 0, -1):
            # (descending: once the slots left cannot use up the budget, no smaller part can)
            if (slots * part < left) if kind == "L1" else (left - slots * part * part >= 2 * part + 1):
                break
            grow(prefix + (part,), left - (part if kind == "L1" else part * part), part)

    grow((), budget, budget)
    return out or [()]


def _shift_patterns(domain, metric, d: int, name: str) -> list[tuple[int, ...]]:
    """The worst-case integer shifts of the coordinates at distance ``d`` under the metric
    (one coordinate list per pattern; coordinates that do not move are left out)."""
    metric_text, domain_text = str(metric), str(domain)
    vector = domain_text.startswith("VectorDomain")
    atom = str(domain.element_domain.carrier_type if vector else domain.carrier_type)
    if atom not in _INTEGERS:
        raise InputError("measurement", f"{name} on {domain_text}",
                         "adds noise to a real-valued query, which OpenDP samples on a 2^k grid of its own; exactdp "
                         "reads back integer queries (on an integer domain OpenDP adds discrete Laplace / discrete "
                         "Gaussian noise, accounted exactly)")
    if d == 0:
        return [()]
    if not vector and metric_text.startswith("AbsoluteDistance"):
        return [(d,)]
    if metric_text.startswith("L1Distance") and name in LAPLACE_NOISE:
        return l1_worst_shifts(d)  # (dominates every vector of the ball: opendp_laplace_ball)
    for kind in ("L1", "L2"):
        if metric_text.startswith(f"{kind}Distance"):
            return _integer_patterns(d, kind)
    if metric_text.startswith("LInfDistance") and vector and domain.size:
        return [(d,) * int(domain.size)]
    raise InputError("input_metric", metric_text, f"{name}: exactdp reads back absolute_distance on an integer atom "
                                                  "domain and l1_distance / l2_distance on integer vectors")


def _leaf(name: str, kwargs: dict, d) -> list[list]:
    """The worst-case group lists of one noise measurement at distance ``d``."""
    if name in ("make_laplace", "make_gaussian"):
        continuous = _continuous(name, kwargs, d)
        if continuous is not None:
            return continuous
    if name in ("make_laplace", "make_geometric", "make_gaussian"):
        scale = _exact(kwargs.get("scale"), "scale")
        if not isinstance(d, int):
            raise InputError("d_in", d, f"{name} on integers: the input distance must be an integer")
        patterns = _shift_patterns(kwargs["input_domain"], kwargs["input_metric"], d, name)

        def mech(shift: int):
            return DiscreteGaussian(scale * scale, shift) if name == "make_gaussian" else DiscreteLaplace(scale, shift)

        return [[(mech(s), 1) for s in pattern] for pattern in patterns]
    if name in ("make_randomized_response", "make_randomized_response_bool"):
        return _randomized_response(name, kwargs, d)
    raise InputError("measurement", name, "is not one exactdp reads back: it takes OpenDP's make_laplace / "
                                          "make_geometric / make_gaussian on integers (the Laplace and Gaussian on "
                                          "floats too), chained after transformations "
                                          "(>>), post-processed, or in make_composition")


def _randomized_response(name: str, kwargs: dict, d) -> list[list]:
    """OpenDP's randomized response: the true category with probability ``prob``, each of the
    other k − 1 with ``(1 − prob)/(k − 1)`` (k = 2 for the bool one; k the number of
    ``categories``), as exactdp's :class:`~exactdp.kinds.RandomizedResponseNoise` with noise
    parameter ``p = k(1 − prob)/(k − 1)`` (the same output distributions), the float ``prob``
    taken exactly; one event at any input distance ≥ 1 (OpenDP's discrete metric), none at 0."""
    if name == "make_randomized_response":
        cats = kwargs.get("categories")
        try:
            k = len(set(cats))  # type: ignore[arg-type]  # (None and other non-iterables: TypeError)
        except TypeError:
            raise InputError("categories", _short(cats), f"{name}: the categories are not a readable list") from None
    else:
        k = 2
    raw = kwargs.get("prob")
    prob = _exact(raw, "prob")
    if not Fraction(1, k) <= prob < 1:
        raise InputError("prob", raw, f"{name}: prob must lie in [1/{k}, 1) (prob = 1 releases the true category: "
                                      "no finite ε)")
    if isinstance(d, Fraction) or to_int(d, "d_in") < 0:
        raise InputError("d_in", d, f"{name}: the input distance (discrete metric) must be an integer ≥ 0")
    if d == 0:
        return [[]]
    return [[(RandomizedResponseNoise(k * (1 - prob) / (k - 1), k), 1)]]


def _walk(measurement, d) -> list[list]:
    """Every worst-case list of ``(mechanism, count)`` groups of ``measurement`` at ``d``."""
    name, kwargs = _recipe(measurement)
    if name == "make_chain_mt":
        d_mid = kwargs["transformation0"].map(d)
        return _walk(kwargs["measurement1"], _distance(d_mid, "d_mid"))
    if name == "make_chain_pm":  # post-processing costs no privacy
        return _walk(kwargs["measurement0"], d)
    if name in ("make_composition", "make_basic_composition"):
        return _product([_walk(m, d) for m in kwargs["measurements"]])
    return _leaf(name, kwargs, d)


def _product(parts: list[list[list]]) -> list[list]:
    """The joint worst cases of independent parts: each choice of one pattern per part
    (at most :data:`MAX_PATTERNS`)."""
    total = 1
    for p in parts:
        total *= len(p)
    if total > MAX_PATTERNS:
        raise InputError("d_in", None, f"the composition has {total} worst-case shift patterns (more than "
                                       f"{MAX_PATTERNS}); use a smaller input distance")
    return [[g for groups in combo for g in groups] for combo in itertools.product(*parts)]


def _distance(d, field: str) -> int | Fraction:
    """An input distance, exactly: an int, or (for float queries) a float or Fraction taken as
    the rational it is."""
    if isinstance(d, (float, Fraction)):  # (a float chain's stability map gives a float, e.g. 10.000000000000002)
        q = _exact(d, field) if d != 0 else Fraction(0)
        k: int | Fraction = int(q) if q.denominator == 1 else q
    else:
        k = to_int(d, field)
    if k < 0:
        raise InputError(field, d, "an input distance must be >= 0")
    return k


def _as_design(groups: list):
    groups = [(m, c) for m, c in groups if getattr(m, "shift", 1) != 0]
    if not groups:
        return None
    if all(isinstance(m, DiscreteGaussian) for m, _ in groups):
        return Composition(tuple(groups))
    return Mixture(tuple(groups))


def designs_of(measurements, d_in=1) -> tuple:
    """The exactdp designs of one OpenDP measurement (or a list, composed) at input
    distance ``d_in``: one per worst-case pattern of shifts (usually one), each a
    :class:`~exactdp.mechanisms.Composition` or :class:`~exactdp.kinds.Mixture`, ``None``
    for no privacy loss.

    Parameters
    ----------
    measurements : opendp.mod.Measurement or sequence of them
        Built by OpenDP's constructors (module docstring); a list is composed.
    d_in : int
        The input distance (default 1).

    Raises
    ------
    InputError
        A measurement exactdp does not read back (a user measurement, a metric it does not
        take), or a discrete Gaussian vector with more than MAX_PATTERNS worst-case
        patterns, naming it.
    """
    d = _distance(d_in, "d_in")
    items = list(measurements) if isinstance(measurements, (list, tuple)) else [measurements]
    if not items:
        raise InputError("measurements", [], "needs at least one measurement")
    return tuple(_as_design(groups) for groups in _product([_walk(m, d) for m in items]))


def design_of(measurements, d_in=1):
    """The one exactdp design of :func:`designs_of` (an InputError when the metric allows
    several worst-case patterns at ``d_in``: then use :func:`designs_of`)."""
    designs = designs_of(measurements, d_in)
    if len(designs) != 1:
        raise InputError("d_in", d_in, f"has {len(designs)} worst-case shift patterns here; designs_of lists them "
                                       "(the privacy profile is their pointwise maximum)")
    return designs[0]


def make_exact_composition(measurements, *, rel_tol: float = 1e-10) -> dp.Measurement:
    """One OpenDP measurement that runs each of ``measurements`` on the same input and
    releases their outputs as a list, with exactdp's certified profile of their exact
    composition as its privacy map.

    Parameters
    ----------
    measurements : sequence of opendp.mod.Measurement
        OpenDP noise measurements (:func:`designs_of`) on one input domain and metric,
        whatever their output measures (pure DP, zCDP).
    rel_tol : float
        Certified relative accuracy of each tail.

    Returns
    -------
    opendp.mod.Measurement
        Output measure ``smoothed_max_divergence()``; ``m.map(d_in).delta(ε)`` is the
        certified upper bound on the exact δ(ε) of the composition at distance ``d_in``
        (the largest over the worst-case patterns), rounded up to a float.

    Notes
    -----
    Needs the OpenDP features ``"contrib"`` and ``"honest-but-curious"`` (a privacy map
    written in Python).  Method: :func:`designs_of` and
    :class:`exactdp.interop.profile.CertifiedProfile` (route ``"mixed"`` when the kinds
    differ).
    """
    items = list(measurements)
    if not items:
        raise InputError("measurements", [], "needs at least one measurement")
    first = items[0]
    for i, m in enumerate(items[1:], start=1):
        if str(m.input_domain) != str(first.input_domain) or str(m.input_metric) != str(first.input_metric):
            raise InputError(f"measurements[{i}]", f"{m.input_domain} with {m.input_metric}",
                             f"every measurement must take the same input as the first ({first.input_domain} with "
                             f"{first.input_metric})")
    designs_of(items, 1)  # refuse what cannot be read back now, not at the first map
    profiles: dict[int, list[CertifiedProfile]] = {}

    def privacy_map(d_in):
        k = _distance(d_in, "d_in")
        if k not in profiles:
            profiles[k] = [CertifiedProfile(design, rel_tol=rel_tol) for design in designs_of(items, k)]
        curve = dp.new_privacy_profile(lambda eps: max(p.delta(eps) for p in profiles[k]))
        return getattr(curve, "curve", curve)  # the FFI pointer (see exactdp.interop.opendp)

    return dp.m.make_user_measurement(first.input_domain, first.input_metric, dp.smoothed_max_divergence(),
                                      function=lambda x: [m(x) for m in items], privacy_map=privacy_map,
                                      TO="ExtrinsicObject")
