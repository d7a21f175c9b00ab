"""exactdp as a dp_accounting ``PrivacyAccountant``.

Google's `dp_accounting <https://pypi.org/project/dp-accounting/>`_ describes a release
as a tree of ``DpEvent`` objects and asks a ``PrivacyAccountant`` for ``get_epsilon`` /
``get_delta``.  This module speaks that idiom (``pip install 'exactdp[dp-accounting]'``):

* :class:`ExactDiscreteGaussianDpEvent` — one discrete Gaussian mechanism with an exact
  rational variance σ² and an integer sensitivity;
* :class:`ExactMechanismDpEvent` — any exactdp mechanism kind (``DiscreteLaplace``,
  ``RandomizedResponse``, ``ApproxDP``, ``DiscreteGaussian``) with its exact parameters;
* :class:`ExactDiscreteGaussianAccountant` — composes those, dp_accounting's
  ``SelfComposedDpEvent``, ``ComposedDpEvent``, ``NoOpDpEvent``, ``NonPrivateDpEvent``,
  its ``DiscreteLaplaceDpEvent`` (noise parameter a: exactdp's scale 1/a, its float a taken
  exactly), its ``GaussianDpEvent`` (the continuous Gaussian with σ = noise multiplier, σ²
  exactly the float squared), its ``LaplaceDpEvent`` (the continuous Laplace of scale = noise
  multiplier at sensitivity 1, the float taken exactly; :class:`~exactdp.kinds.laplace.Laplace`,
  within its envelope: one scale per ledger, at most 256 of them) and (where the installed
  dp_accounting has it) its own ``DiscreteGaussianDpEvent``, and answers with exactdp's
  certified values (a ledger mixing kinds is accounted as a :class:`~exactdp.kinds.Mixture`,
  route ``"mixed"``), and its ``RandomizedResponseDpEvent`` (noise parameter p taken exactly:
  :class:`~exactdp.kinds.RandomizedResponseNoise`, whose irrational ε = log(1 + k(1−p)/p) the
  mixed route keeps exact by conditioning on the ±ε steps; δ, ε and β).  Every other event (Poisson or
  other subsampling, ...) is refused through ``supports()`` / ``UnsupportedEventError`` —
  never approximated.

It works unchanged with ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism``:
floats handed over by dp_accounting (a σ², a noise multiplier, a target δ) are taken
exactly, as the binary rationals they are.  Constructors for the usual parametrisations:
:meth:`ExactDiscreteGaussianDpEvent.from_rho`, :meth:`~ExactDiscreteGaussianDpEvent.from_sigma`,
:meth:`~ExactDiscreteGaussianDpEvent.from_noise_multiplier`.

>>> from fractions import Fraction
>>> import dp_accounting
>>> from exactdp.interop.dp_accounting import ExactDiscreteGaussianAccountant, ExactDiscreteGaussianDpEvent
>>> acc = ExactDiscreteGaussianAccountant()
>>> _ = acc.compose(ExactDiscreteGaussianDpEvent("10000/11"), 20)
>>> 0 < acc.get_delta(5) < 1e-14
True
>>> acc.supports(dp_accounting.PoissonSampledDpEvent(0.01, ExactDiscreteGaussianDpEvent(4)))
False

A year of daily counts with discrete Laplace noise beside the same release:

>>> from dp_accounting.dp_event import DiscreteLaplaceDpEvent
>>> _ = acc.compose(DiscreteLaplaceDpEvent(0.5, 1), 365)
>>> acc.composition.size, acc.composition.pure_epsilon is None
(385, True)
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import attr
from dp_accounting import dp_event, privacy_accountant

from exactdp.interop.profile import CertifiedProfile, exact_real
from exactdp.kinds import Gaussian, LossGroup, Mixture, RandomizedResponseNoise
from exactdp.kinds.discrete_laplace import DiscreteLaplace
from exactdp.kinds.laplace import Laplace
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, to_int

__all__ = ["ExactDiscreteGaussianDpEvent", "ExactDiscreteGaussianAccountant", "ExactMechanismDpEvent",
           "NeighboringRelation"]

NeighboringRelation = privacy_accountant.NeighboringRelation
_Details = privacy_accountant.PrivacyAccountant.CompositionErrorDetails
_NO_OP = "no-op"
_NON_PRIVATE = "non-private"


def _boundary_exact(value, field: str) -> Fraction:
    """An exact rational from a value handed over by dp_accounting: a binary float is
    taken exactly, as the binary rational it is (``63.0`` is 63, ``0.1`` is
    3602879701896397/36028797018963968); NaN and infinities are refused; every other
    type goes through :func:`~exactdp.numerics.exact.to_fraction` (decimal strings digit
    for digit)."""
    real = exact_real(value, field)
    if not isinstance(real, Fraction):
        raise InputError(field, value, "must be finite")
    return real


def _sigma2(value) -> Fraction:
    s2 = _boundary_exact(value, "sigma2")
    if s2 < 0:
        raise InputError("sigma2", value, "must be >= 0 (0: no noise, a non-private release)")
    return s2


def _sensitivity(value) -> int:
    if isinstance(value, float):  # dp_accounting writes sensitivities as floats: 2.0 is 2
        frac = _boundary_exact(value, "sensitivity")
        if frac.denominator != 1:
            raise InputError("sensitivity", value, "must be an integer (the discrete Gaussian's integer shift)")
        value = int(frac)
    s = to_int(value, "sensitivity")
    if s < 0:
        raise InputError("sensitivity", value, "must be >= 0 (a bound on |f(x) − f(x')|)")
    return s


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ExactDiscreteGaussianDpEvent(dp_event.DpEvent):
    """One discrete Gaussian mechanism with an exact variance.

    For an integer-valued query f whose value changes by at most ``sensitivity`` between
    neighbouring datasets, the mechanism releases f(x) + Z with Z ~ N_Z(0, σ²),
    ``Pr[Z = z] ∝ exp(−z²/(2σ²))``.

    Parameters
    ----------
    sigma2 : float, str, Fraction, int, gmpy2.mpq or decimal.Decimal
        The variance parameter σ² ≥ 0 (``"10000/11"``, ``"2.5025"``, ``63.0``); 0 means no
        noise, a non-private release (as ``GaussianDpEvent(0)`` in dp_accounting).  At
        this boundary a float is taken **exactly**, as the binary rational it is: ``63.0``
        is 63, and ``0.1`` is 3602879701896397/36028797018963968, not one tenth — which is
        what dp_accounting's own float parameters mean, and what a calibration search
        (``calibrate_dp_mechanism``) hands over.  To mean a decimal exactly, pass it as a
        string (``"0.1"``) or a Fraction.  (exactdp's own API and CLI refuse floats where
        a decimal is surely meant.)
    sensitivity : int
        The integer bound on |f(x) − f(x')| under the accountant's neighbouring relation
        (default 1; 0 means the query does not depend on the record).

    Notes
    -----
    The neighbouring pair accounted is the one in which the query moves by exactly
    ``sensitivity``; that pair is the worst case (see
    :class:`ExactDiscreteGaussianAccountant`).  Reference: Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020).
    """

    sigma2: Fraction = attr.ib(converter=_sigma2)
    sensitivity: int = attr.ib(default=1, converter=_sensitivity)

    @classmethod
    def from_rho(cls, rho, sensitivity=1) -> ExactDiscreteGaussianDpEvent:
        """The mechanism whose zCDP is ``rho``: σ² = Δ²/(2ρ), exactly (Δ = ``sensitivity``;
        a float ρ is taken exactly).  The 2020 Census budgets are stated this way."""
        r = _boundary_exact(rho, "rho")
        if r <= 0:
            raise InputError("rho", rho, "must be > 0")
        sens = _sensitivity(sensitivity)
        return cls(Fraction(sens * sens) / (2 * r), sens)

    @classmethod
    def from_sigma(cls, sigma, sensitivity=1) -> ExactDiscreteGaussianDpEvent:
        """The mechanism with scale σ: σ² = σ·σ, exactly (a float σ is taken exactly and
        squared exactly, as for dp_accounting's ``DiscreteGaussianDpEvent(sigma)``)."""
        sig = _boundary_exact(sigma, "sigma")
        if sig < 0:
            raise InputError("sigma", sigma, "must be >= 0")
        return cls(sig * sig, sensitivity)

    @classmethod
    def from_noise_multiplier(cls, noise_multiplier, sensitivity=1) -> ExactDiscreteGaussianDpEvent:
        """dp_accounting's ``GaussianDpEvent(noise_multiplier)`` idiom with discrete noise:
        σ = noise_multiplier · Δ, so σ² = (noise_multiplier·Δ)², exactly (a float taken
        exactly).  Sensitivity 1 (the default) makes σ the noise multiplier itself."""
        nm = _boundary_exact(noise_multiplier, "noise_multiplier")
        if nm < 0:
            raise InputError("noise_multiplier", noise_multiplier, "must be >= 0")
        sens = _sensitivity(sensitivity)
        return cls((nm * sens) ** 2, sens)


def _mechanism(value):
    if not isinstance(value, (DiscreteGaussian, LossGroup, Gaussian, Laplace)):
        raise InputError("mechanism", value, "expected an exactdp mechanism: DiscreteGaussian, DiscreteLaplace, "
                                             "RandomizedResponse, ApproxDP, Gaussian or Laplace")
    return value


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ExactMechanismDpEvent(dp_event.DpEvent):
    """One exactdp mechanism of any kind, with its exact parameters, as a dp_accounting event.

    ``ExactMechanismDpEvent(DiscreteLaplace("5/2", shift=1))``,
    ``ExactMechanismDpEvent(RandomizedResponse("1/2", k=4))``,
    ``ExactMechanismDpEvent(ApproxDP("1", "1e-9"))`` (any (ε, δ)-DP step through its exact
    dominating pair), ``ExactMechanismDpEvent(DiscreteGaussian("10000/11"))``.

    Parameters
    ----------
    mechanism : DiscreteGaussian, DiscreteLaplace, RandomizedResponse or ApproxDP
        The mechanism; its ``shift`` is its sensitivity under the accountant's
        neighbouring relation (the worst case, as for :class:`ExactDiscreteGaussianDpEvent`).
    """

    mechanism: object = attr.ib(converter=_mechanism)


def _from_dp_accounting_dlap(event):
    """dp_accounting's ``DiscreteLaplaceDpEvent(noise_parameter a, sensitivity)``: the pmf
    ∝ exp(−a|x|), exactdp's ``DiscreteLaplace(1/a, sensitivity)`` with the float a taken
    exactly; or an error message."""
    try:
        a = Fraction(event.noise_parameter)
        sens = Fraction(event.sensitivity)
    except (TypeError, ValueError, OverflowError):
        return (f"noise_parameter={event.noise_parameter!r} and sensitivity={event.sensitivity!r} must be finite "
                "numbers")
    if a < 0 or sens < 0:
        return f"noise_parameter={event.noise_parameter!r} and sensitivity={event.sensitivity!r} must be >= 0"
    if sens.denominator != 1:
        return (f"sensitivity={event.sensitivity!r}: the discrete Laplace adds integer noise to an integer query, "
                "whose sensitivity is an integer")
    if sens == 0:
        return _NO_OP
    if a == 0:
        return _NON_PRIVATE  # a = 0: no decay, no noise distribution at all (dp_accounting: ε = ∞)
    try:
        return DiscreteLaplace(1 / a, int(sens))
    except InputError as exc:
        return f"{exc.field}={exc.value!r}: {exc.reason}"


def _from_dp_accounting_gaussian(event):
    """dp_accounting's ``GaussianDpEvent(noise_multiplier)``: the continuous Gaussian with
    σ = noise multiplier at sensitivity 1, exactdp's ``Gaussian(σ², 1)`` with the float
    squared exactly; or an error message."""
    nm = _noise_multiplier(event)
    return nm if isinstance(nm, str) else _NON_PRIVATE if nm == 0 else Gaussian(nm * nm, 1)


def _from_dp_accounting_laplace(event):
    """dp_accounting's ``LaplaceDpEvent(noise_multiplier)``: the continuous Laplace of scale
    s = noise multiplier at sensitivity 1, exactdp's ``Laplace(s, 1)`` with the float taken
    exactly; or an error message."""
    nm = _noise_multiplier(event)
    return nm if isinstance(nm, str) else _NON_PRIVATE if nm == 0 else Laplace(nm, 1)


def _from_dp_accounting_rr(event):
    """dp_accounting's ``RandomizedResponseDpEvent(noise_parameter p, num_buckets k)``: exactdp's
    :class:`~exactdp.kinds.RandomizedResponseNoise` ``(p, k)`` with the float p taken exactly (its
    ε = log(1 + k(1−p)/p) is irrational: the mixed route conditions on the ±log R steps); or
    an error message."""
    try:
        p = Fraction(event.noise_parameter)
    except (TypeError, ValueError, OverflowError):
        return f"noise_parameter={event.noise_parameter!r} must be a finite number"
    k = event.num_buckets
    if not 0 <= p <= 1 or isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return (f"noise_parameter={event.noise_parameter!r} must lie in [0, 1] and num_buckets="
                f"{event.num_buckets!r} be an integer >= 1")
    if p == 1 or k == 1:
        return _NO_OP  # (the output ignores the input)
    if p == 0:
        return _NON_PRIVATE  # (the true bucket is released: dp_accounting's ε = ∞)
    try:
        return RandomizedResponseNoise(p, k)
    except InputError as exc:
        return f"{exc.field}={exc.value!r}: {exc.reason}"


def _noise_multiplier(event) -> Fraction | str:
    """The event's ``noise_multiplier`` as the exact rational of its float, or an error message."""
    try:
        nm = Fraction(event.noise_multiplier)
    except (TypeError, ValueError, OverflowError):
        return f"noise_multiplier={event.noise_multiplier!r} must be a finite number"
    return f"noise_multiplier={event.noise_multiplier!r} must be >= 0" if nm < 0 else nm


def _refusal(event) -> str:
    """Why an event is not accounted (one sentence naming what to use instead)."""
    name = type(event).__name__
    sub = "; subsampled mechanisms are not covered by exact accounting" if "Sampled" in name else ""
    return (f"{name} is not supported: exactdp accounts compositions of discrete Gaussian, discrete Laplace, "
            f"randomized response and (ε, δ) mechanisms exactly and refuses every other event rather than "
            f"approximate it{sub} (use dp_accounting's PLDAccountant or RdpAccountant for it)")


def _from_dp_accounting_dg(event):
    """dp_accounting's ``DiscreteGaussianDpEvent(sigma, sensitivity, dimension)`` as a
    mechanism, its float σ taken exactly; or an error message."""
    sigma, sens, dim = event.sigma, event.sensitivity, getattr(event, "dimension", 1)
    try:
        sigma = Fraction(sigma)
        sens = Fraction(sens)
    except (TypeError, ValueError, OverflowError):
        return f"sigma={event.sigma!r} and sensitivity={event.sensitivity!r} must be finite numbers"
    if sigma < 0 or sens < 0:
        return f"sigma={event.sigma!r} and sensitivity={event.sensitivity!r} must be >= 0"
    if sens.denominator != 1:
        return (f"sensitivity={event.sensitivity!r}: the discrete Gaussian adds integer noise to an integer "
                "query, whose sensitivity is an integer; pass its integer bound")
    if sens == 0:
        return _NO_OP
    if sigma == 0:
        return _NON_PRIVATE
    if sens > 1 and dim != 1:
        return (f"dimension={dim!r} with sensitivity={event.sensitivity!r}: a multivariate discrete Gaussian with "
                "L2 sensitivity > 1 has no single worst-case neighbouring pair; exactdp accounts it exactly only "
                "with dimension=1 (or sensitivity 1) — compose one event per coordinate with its integer sensitivity")
    # sigma**2 is exact: the binary rational sigma, squared
    return DiscreteGaussian(sigma * sigma, int(sens))


def _as_mechanism(event):
    """A mechanism (DiscreteGaussian or a loss-group kind), ``_NO_OP``, ``_NON_PRIVATE``, or
    an error message (str)."""
    if isinstance(event, ExactDiscreteGaussianDpEvent):
        if event.sensitivity == 0:
            return _NO_OP
        return _NON_PRIVATE if event.sigma2 == 0 else DiscreteGaussian(event.sigma2, event.sensitivity)
    if isinstance(event, ExactMechanismDpEvent):
        return _NO_OP if getattr(event.mechanism, "shift", 1) == 0 else event.mechanism
    dp_accounting_dg = getattr(dp_event, "DiscreteGaussianDpEvent", None)  # newer dp_accounting releases only
    if dp_accounting_dg is not None and isinstance(event, dp_accounting_dg):
        return _from_dp_accounting_dg(event)
    if isinstance(event, dp_event.GaussianDpEvent):
        return _from_dp_accounting_gaussian(event)
    if isinstance(event, dp_event.LaplaceDpEvent):
        return _from_dp_accounting_laplace(event)
    dp_accounting_dlap = getattr(dp_event, "DiscreteLaplaceDpEvent", None)
    if dp_accounting_dlap is not None and isinstance(event, dp_accounting_dlap):
        return _from_dp_accounting_dlap(event)
    dp_accounting_rr = getattr(dp_event, "RandomizedResponseDpEvent", None)
    if dp_accounting_rr is not None and isinstance(event, dp_accounting_rr):
        return _from_dp_accounting_rr(event)
    return _refusal(event)


class ExactDiscreteGaussianAccountant(privacy_accountant.PrivacyAccountant):
    """A dp_accounting ``PrivacyAccountant`` with exactdp's certified numbers.

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation
        Default ``ADD_OR_REMOVE_ONE``.  Every relation is accepted: the discrete Gaussian
        is symmetric, so both directions of the privacy loss have the same profile, and
        each event's ``sensitivity`` is its bound under the relation chosen.
    rel_tol : float
        Certified relative accuracy of each tail (default 1e-10).

    Notes
    -----
    Method: the ledger is flattened into an exactdp
    :class:`~exactdp.mechanisms.Composition` (multiplicities of ``SelfComposedDpEvent``
    multiplied out exactly; a :class:`~exactdp.kinds.Mixture` when it holds other kinds)
    and accounted by :class:`exactdp.ExactAccountant` for the
    pair in which every query moves by exactly its sensitivity.  That pair is the worst
    case: the discrete Gaussian and discrete Laplace families (log-concave) have a monotone
    likelihood ratio, so for a larger
    shift every Neyman–Pearson test has the same type-I error and a smaller type-II error
    (the trade-off curve is pointwise lower), and the tensor product of trade-off
    functions is monotone in each factor (Dong, Roth & Su 2022); a negative shift is the
    mirror image.

    Error bound: ``get_delta(ε)`` is the certified upper bound on the exact δ(ε) and
    ``get_epsilon(δ)`` the certified upper bound on the smallest ε with δ(ε) ≤ δ, each
    rounded outward (up) to a float, so the floats returned are themselves certified.
    An incoming float (``target_delta``, ``target_epsilon``, dp_accounting's σ) is taken
    exactly as the binary rational it is; exact values (``"1e-10"``, ``Fraction``) are
    accepted as well.  ``NonPrivateDpEvent`` gives ε = ∞ and δ = 1, as dp_accounting
    specifies.  Reference: Su, Su & Wang, exact privacy accounting for the 2020 Census
    (the method); Canonne, Kamath & Steinke (2020) (the discrete Gaussian).
    """

    def __init__(self, neighboring_relation: privacy_accountant.NeighboringRelation =
                 NeighboringRelation.ADD_OR_REMOVE_ONE, *,
                 rel_tol: float = 1e-10):
        if not isinstance(neighboring_relation, NeighboringRelation):
            raise InputError("neighboring_relation", neighboring_relation,
                             "expected a dp_accounting.NeighboringRelation")
        super().__init__(neighboring_relation)
        self._rel_tol = rel_tol
        self._counts: Counter = Counter()
        self._non_private = False
        self._profile: CertifiedProfile | None = None

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> privacy_accountant.PrivacyAccountant.CompositionErrorDetails | None:
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            if isinstance(event.count, bool) or not isinstance(event.count, int) or event.count < 0:
                return _Details(event, f"count={event.count!r} must be a non-negative integer")
            return self._maybe_compose(event.event, count * event.count, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for sub in event.events:
                error = self._maybe_compose(sub, count, do_compose)
                if error is not None:
                    return error
            return None
        rr = getattr(dp_event, "RandomizedResponseDpEvent", None)
        if (rr is not None and isinstance(event, rr)
                and self.neighboring_relation not in (NeighboringRelation.REPLACE_ONE,
                                                      NeighboringRelation.REPLACE_SPECIAL)):
            return _Details(event, "randomized response is defined for neighboring_relation=REPLACE_ONE or "
                                   "REPLACE_SPECIAL (its swap-the-bucket pair), as in dp_accounting; under "
                                   f"{self.neighboring_relation.name} its worst pair is not that one")
        mech = _NON_PRIVATE if isinstance(event, dp_event.NonPrivateDpEvent) else _as_mechanism(event)
        if isinstance(mech, str) and mech not in (_NO_OP, _NON_PRIVATE):
            return _Details(event, mech)
        if do_compose and count > 0 and mech != _NO_OP:
            if mech == _NON_PRIVATE:
                self._non_private = True
            else:
                self._counts[mech] += count
            self._profile = None
        return None

    @property
    def composition(self) -> Composition | Mixture | None:
        """The exactdp design of the ledger (None if empty): a
        :class:`~exactdp.mechanisms.Composition` when every event is a discrete Gaussian, else
        a :class:`~exactdp.kinds.Mixture`; e.g. for the trade-off curve:
        ``exactdp.tradeoff(acc.composition, ["0.05"])``."""
        if not self._counts:
            return None
        groups = tuple(self._counts.items())
        if all(isinstance(m, DiscreteGaussian) for m, _ in groups):
            return Composition(groups)
        return Mixture(groups)

    def _current(self) -> CertifiedProfile:
        if self._profile is None:
            self._profile = CertifiedProfile(self.composition, rel_tol=self._rel_tol)
        return self._profile

    def get_epsilon(self, target_delta: float) -> float:
        """Certified ε at ``target_delta``: an upper bound on the smallest ε ≥ 0 with
        δ(ε) ≤ target, as a float rounded up (``inf`` for δ = 0 or a non-private event)."""
        if self._non_private:
            return 0.0 if exact_real(target_delta, "target_delta") >= 1 else math.inf
        return self._current().epsilon(target_delta)

    def get_delta(self, target_epsilon: float) -> float:
        """Certified δ at ``target_epsilon``: an upper bound on the exact δ(ε), as a float
        rounded up (1 with a non-private event)."""
        delta = self._current().delta(target_epsilon)
        return 1.0 if self._non_private else delta
