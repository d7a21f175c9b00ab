"""exactdp as an OpenDP measurement.

`OpenDP <https://opendp.org>`_ describes a mechanism as a *measurement*: a function from
datasets to releases, plus a *privacy map* from an input distance ``d_in`` to the
privacy loss.  :func:`make_exact_measurement` builds the measurement that adds exact
discrete Gaussian noise to a vector of integer query answers and whose privacy map, for
the smoothed max divergence, returns exactdp's certified privacy profile: ``m.map(d_in)``
is an OpenDP ``PrivacyProfile`` and ``m.map(1).delta(epsilon)`` is exactdp's certified
δ(ε) (``pip install 'exactdp[opendp]'``).

OpenDP admits a measurement written outside its own library only after the user has
enabled the features ``"contrib"`` and ``"honest-but-curious"`` — OpenDP cannot check a
privacy map written in Python, so it asks you to vouch for it.  exactdp's map is the
certified accountant whose error bound is documented in the "Method and error bound"
page of the docs::

    import re

import opendp.prelude as dp
    dp.enable_features("contrib", "honest-but-curious")
    m = make_exact_measurement(sigma2=["10000/11"] * 20 + ["2.5025"])
    m.map(1).delta(5.0)          # exactdp's certified δ at ε = 5
    m([120, 7, ...])             # one release: each answer plus exact N_Z(0, σ_i²) noise

As OpenDP's own noise measurements, :func:`make_exact_discrete_gaussian` takes the input
domain and metric of the query before it, and :func:`then_exact_discrete_gaussian` is its
partial form, so it chains with ``>>`` after ``make_count`` or ``make_count_by_categories``::

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    m = count >> then_exact_discrete_gaussian(sigma2="10000/11")
    m.map(1).delta(1.0)           # certified δ at ε = 1 of the noisy count

**Composition.**  OpenDP 0.16 composes measurements whose measure has a composition rule
(``make_composition``: pure DP, zCDP, approximate DP); it has none for
``SmoothedMaxDivergence``, the privacy-profile measure of these measurements, and refuses
them ("No match for concrete type SmoothedMaxDivergence"): a composed privacy profile is not
a function of the component profiles (it needs the mechanisms themselves), which is why
exactdp exists.  So compose *inside* exactdp, exactly — one measurement with every query's
σ² (``make_exact_measurement(sigma2=[...])``, or the vector ``make_count_by_categories``
chain) — or, to mix with other OpenDP measurements, fix δ first
(``dp.c.make_fix_delta(m, delta)``: exactdp's certified ε at that δ, an
``Approximate(MaxDivergence)`` measurement) and compose those with ``dp.c.make_composition``
— OpenDP's basic composition, which adds ε and δ and so is looser than the exact one.
"""

from __future__ import annotations

import re

import opendp.prelude as dp

from exactdp.accounting.base import sequence_values
from exactdp.dgauss.sampler import sample
from exactdp.interop.profile import CertifiedProfile
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, positive_fraction, to_int

__all__ = ["make_exact_measurement", "make_exact_discrete_gaussian", "then_exact_discrete_gaussian"]


def make_exact_measurement(sigma2, shifts=None, *, rel_tol: float = 1e-10) -> dp.Measurement:
    """An OpenDP measurement: exact discrete Gaussian noise, exact privacy profile.

    Parameters
    ----------
    sigma2 : sequence of exact rationals
        The variance σ_i² > 0 of the noise added to query i (``"10000/11"``, Fraction,
        int; a binary float is refused with a message that says how to pass it).
    shifts : sequence of int, optional
        The integer sensitivity of query i: how far its answer moves between neighbours
        at input distance 1 (default 1 for every query).
    rel_tol : float
        Certified relative accuracy of each tail (default 1e-10).

    Returns
    -------
    opendp.mod.Measurement
        Input domain: vectors of ``len(sigma2)`` integers (``i64``) — the query answers.
        Input metric: with unit shifts, OpenDP's ``linf_distance(T="i64")``: at
        distance ``d_in`` every answer moves by at most ``d_in``; with other shifts, a
        user distance ``ShiftScaledLInfDistance(shifts=...)`` under which answer i moves
        by at most ``d_in·|shifts[i]|``.  Output measure: ``smoothed_max_divergence()``.
        The function releases ``[x_i + Z_i]`` with independent exact samples
        Z_i ~ N_Z(0, σ_i²) (:func:`exactdp.dgauss.sampler.sample`, integer arithmetic).
        The privacy map sends an integer ``d_in ≥ 0`` to the privacy profile of the
        composition with shifts ``d_in·shifts`` (δ ≡ 0 for ``d_in = 0``).

    Raises
    ------
    InputError
        Bad σ², shifts of the wrong length, or (from the map) a negative ``d_in``.
    opendp.mod.OpenDPException
        When the features ``"contrib"`` and ``"honest-but-curious"`` are not enabled.

    Notes
    -----
    Method: the profile's ``delta(ε)`` is :class:`exactdp.interop.profile.CertifiedProfile`
    — a fresh :class:`exactdp.ExactAccountant` per query; the pair in which every answer
    moves by exactly ``d_in·|shift_i|`` is the worst case at distance ``d_in`` (monotone
    likelihood ratio of the discrete Gaussian; see
    :class:`exactdp.interop.dp_accounting.ExactDiscreteGaussianAccountant`).  Error bound:
    ``delta(ε)`` is the certified upper bound on the exact δ(ε), rounded up to a float,
    so it is a valid privacy profile; ``profile.epsilon(δ)`` is OpenDP's own inversion of
    that curve (use :func:`exactdp.epsilon` for exactdp's certified ε(δ) bracket).
    Reference: Canonne, Kamath & Steinke (2020) for the discrete Gaussian and its exact
    sampler; Su, Su & Wang for the exact accounting.
    """
    sigma2 = sequence_values(sigma2, "sigma2")
    variances = [positive_fraction(s, f"sigma2[{i}]") for i, s in enumerate(sigma2)]
    if not variances:
        raise InputError("sigma2", list(sigma2), "needs at least one variance")
    n = len(variances)
    if shifts is None:
        shift_list = [1] * n
    else:
        shifts = sequence_values(shifts, "shifts")
        shift_list = [to_int(s, f"shifts[{i}]") for i, s in enumerate(shifts)]
        if len(shift_list) != n:
            raise InputError("shifts", list(shifts), f"has {len(shift_list)} entries but there are {n} variances")
    unit = all(abs(s) == 1 for s in shift_list)
    metric = (dp.linf_distance(T="i64") if unit
              else dp.user_distance(f"ShiftScaledLInfDistance(shifts={[abs(s) for s in shift_list]})"))
    profiles: dict[int, CertifiedProfile] = {}

    def profile(d_in) -> CertifiedProfile:
        k = to_int(d_in, "d_in")
        if k < 0:
            raise InputError("d_in", d_in, "an input distance must be >= 0")
        if k not in profiles:
            mechs = [DiscreteGaussian(s2, k * s) for s2, s in zip(variances, shift_list) if k * s != 0]
            profiles[k] = CertifiedProfile(Composition.of(mechs) if mechs else None, rel_tol=rel_tol)
        return profiles[k]

    def privacy_map(d_in):
        curve = dp.new_privacy_profile(profile(d_in).delta)
        # OpenDP 0.16's Python layer converts a map's result to its measure's distance
        # type only from the underlying object pointer, not from the PrivacyProfile
        # wrapper that new_privacy_profile returns: hand over the pointer.
        return getattr(curve, "curve", curve)

    def release(x):
        values = list(x)
        if len(values) != n:
            raise InputError("x", f"<{len(values)} values>", f"expected {n} integer query answers")
        return [to_int(v, f"x[{i}]") + sample(s2, 1)[0] for i, (v, s2) in enumerate(zip(values, variances))]

    return dp.m.make_user_measurement(
        dp.vector_domain(dp.atom_domain(T="i64"), size=n), metric, dp.smoothed_max_divergence(),
        function=release, privacy_map=privacy_map, TO="Vec<i64>")


# ----------------------------------------------------------------------------- OpenDP's idiom
#: most worst-case shift patterns a privacy map evaluates (L1/L2 input distances)
MAX_PATTERNS = 64
_METRIC = re.compile(r"(?:\w+::)*(\w+)Distance<(\w+)>")
_INTEGERS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}


def _integer_patterns(d_in: int, kind: str) -> list[tuple[int, ...]]:
    """The worst-case shift patterns at input distance ``d_in``: multisets of positive
    integer shifts with sum ``d_in`` (L1) or sum of squares ``d_in²`` (L2).  Shift vectors
    inside the ball but not on its boundary are dominated (a larger shift, or one more
    shifted coordinate, makes every trade-off pointwise lower), so these suffice."""
    target = d_in if kind == "L1" else d_in * d_in
    out: list = []

    def grow(prefix, left, largest):
        if left == 0:
            out.append(tuple(prefix))
            if len(out) > MAX_PATTERNS:
                raise InputError("d_in", d_in, f"has more than {MAX_PATTERNS} worst-case shift patterns under "
                                               f"{kind}Distance; exactdp accounts each exactly, so use a smaller d_in")
            return
        for part in range(min(largest, left if kind == "L1" else int(left ** 0.5) + 1), 0, -1):
            cost = part if kind == "L1" else part * part
            if cost <= left:
                grow(prefix + [part], left - cost, part)

    grow([], target, target)
    return out


def _space(input_domain, input_metric) -> tuple[str, str, int | None]:
    """(metric kind, integer carrier, vector size or None for a scalar) of a supported
    input space, else an InputError that names what is supported."""
    m = _METRIC.fullmatch(str(input_metric.type))
    vector = str(input_domain.type).startswith("VectorDomain")
    atom = str(input_domain.element_domain.carrier_type if vector else input_domain.carrier_type)
    kinds = {False: ("Absolute",), True: ("L1", "L2", "LInf")}[vector]
    if m is None or m.group(1) not in kinds or atom not in _INTEGERS or m.group(2) != atom:
        raise InputError("input_metric", f"{input_domain} with {input_metric}",
                         "the exact discrete Gaussian adds integer noise to integer queries: use an integer "
                         "atom_domain with absolute_distance (e.g. after make_count), or an integer vector_domain with "
                         "l1_distance, l2_distance or linf_distance (e.g. after make_count_by_categories)")
    return m.group(1), atom, (input_domain.size if vector else None)


def make_exact_discrete_gaussian(input_domain, input_metric, sigma2, *, rel_tol: float = 1e-10) -> dp.Measurement:
    """Exact discrete Gaussian noise on an integer query, in OpenDP's constructor idiom.

    Parameters
    ----------
    input_domain : opendp.mod.Domain
        An integer ``atom_domain`` (a scalar count: the output of ``make_count``) or an
        integer ``vector_domain`` (counts: the output of ``make_count_by_categories``).
    input_metric : opendp.mod.Metric
        ``absolute_distance`` for a scalar; ``l1_distance``, ``l2_distance`` or
        ``linf_distance`` for a vector — of the same integer type as the domain.
    sigma2 : exact rational
        The variance σ² > 0 of the noise on each coordinate (``"10000/11"``, Fraction;
        a binary float is refused — at exactdp's own API a decimal is surely meant).
    rel_tol : float
        Certified relative accuracy of each tail.

    Returns
    -------
    opendp.mod.Measurement
        Releases the query plus independent exact N_Z(0, σ²) noise on each coordinate;
        output measure ``smoothed_max_divergence()``; ``m.map(d_in)`` is exactdp's
        certified privacy profile at integer input distance ``d_in``.

    Notes
    -----
    Method: at distance ``d_in`` the worst neighbouring pair moves the query by the
    largest shift the metric allows — ``d_in`` for a scalar and for L∞ (every coordinate);
    for L1 and L2 the map takes the pointwise maximum of the certified profiles of every
    multiset of integer shifts with L1 norm ``d_in`` (L2: squared norm ``d_in²``), at most
    :data:`MAX_PATTERNS` of them (for ``d_in = 1``: one coordinate moved by 1).  Monotone
    likelihood ratio of the discrete Gaussian and monotonicity of the tensor product of
    trade-off functions (Dong, Roth & Su 2022) make those the worst cases.  Error bound:
    each δ is the certified upper bound rounded up to a float.  Reference: Canonne,
    Kamath & Steinke (2020).
    """
    kind, atom, size = _space(input_domain, input_metric)
    s2 = positive_fraction(sigma2, "sigma2")
    profiles: dict = {}

    def compositions(k: int):
        if kind in ("L1", "L2"):
            return [Composition.of([DiscreteGaussian(s2, s) for s in pattern])
                    for pattern in _integer_patterns(k, kind)]
        n = 1 if size is None or kind == "Absolute" else size
        if kind == "LInf" and size is None:
            raise InputError("input_domain", str(input_domain), "linf_distance needs a vector_domain of known size "
                                                                 "(every coordinate may move)")
        return [Composition.of([DiscreteGaussian(s2, k)] * n)]

    def delta(k: int, eps) -> float:
        return max(p.delta(eps) for p in profiles[k])

    def privacy_map(d_in):
        k = to_int(d_in, "d_in")
        if k < 0:
            raise InputError("d_in", d_in, "an input distance must be >= 0")
        if k not in profiles:
            profiles[k] = ([CertifiedProfile(None)] if k == 0 else
                           [CertifiedProfile(c, rel_tol=rel_tol) for c in compositions(k)])
        curve = dp.new_privacy_profile(lambda eps: delta(k, eps))
        return getattr(curve, "curve", curve)  # the FFI pointer (see make_exact_measurement)

    def release(x):
        if size is None and kind == "Absolute":
            return to_int(x, "x") + sample(s2, 1)[0]
        values = [to_int(v, f"x[{i}]") for i, v in enumerate(x)]
        return [v + z for v, z in zip(values, sample(s2, len(values)))]

    return dp.m.make_user_measurement(input_domain, input_metric, dp.smoothed_max_divergence(), function=release,
                                      privacy_map=privacy_map, TO=atom if kind == "Absolute" else f"Vec<{atom}>")


def then_exact_discrete_gaussian(sigma2, *, rel_tol: float = 1e-10):
    """Partial form of :func:`make_exact_discrete_gaussian`, for OpenDP's ``>>`` chains:
    ``make_count(...) >> then_exact_discrete_gaussian(sigma2="10000/11")``.

    Parameters
    ----------
    sigma2 : exact rational
        The variance σ² > 0 of the noise.
    rel_tol : float
        Certified relative accuracy of each tail.

    Returns
    -------
    OpenDP's partial constructor (as its own ``then_gaussian`` returns): the input domain
    and metric are those of the transformation it is chained after.
    """
    s2 = positive_fraction(sigma2, "sigma2")
    # OpenDP's own then_* functions return this class; Transformation.__rshift__ accepts
    # nothing else as a partial measurement (opendp is pinned to 0.16 for this reason too)
    from opendp.mod import _PartialConstructor

    return _PartialConstructor(lambda domain, metric: make_exact_discrete_gaussian(domain, metric, s2, rel_tol=rel_tol))
