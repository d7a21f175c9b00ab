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

    import opendp.prelude as dp
    dp.enable_features("contrib", "honest-but-curious")
    m = make_exact_measurement(sigma2=["10000/11"] * 20 + ["2.5025"])
    m.map(1).delta(5.0)          # exactdp's certified δ at ε = 5
    m([120, 7, ...])             # one release: each answer plus exact N_Z(0, σ_i²) noise
"""

from __future__ import annotations

import opendp.prelude as dp

from exactdp.accounting.base import sequence_values
from exactdp.dgauss.sampler import sample
from exactdp.interop.profile import CertifiedProfile
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, positive_fraction, to_int

__all__ = ["make_exact_measurement"]


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
