"""One bracket type across the package (issue "One core that can grow", item 4).

Every class that carries a certified number — ``lower``/``upper`` ends or an
``error_bound`` — is a :class:`exactdp.numerics.bracket.Bracket` (one vocabulary: lower,
upper, estimate, value = the reported side, error_bound ≥ |estimate − truth|), or is one of
the few documented records below.  Real computed instances of each kind are checked for the
vocabulary's invariants, and where a truth is cheap to get independently (exact enumeration
in ``harness``, the closed-form Bun–Steinke conversion in mpmath) it must lie in the
bracket.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from fractions import Fraction as F

import mpmath
import pytest

import exactdp
from exactdp.numerics.bracket import Bracket

from harness import delta_brute

#: classes with bracket-like fields that are not one number's bracket, and why
RECORDS = {
    "exactdp.calibration.deploy.Calibration": "one σ² per cell to deploy; its bracket is .scale (a Bracket)",
    "exactdp.countdep.constants.CStarBracket": "two analytic bounds on a constant, each a LimitValue with its error",
    "exactdp.dgauss.sums.SumPMF": "an array pmf with one error bound for every entry",
    "exactdp.risk._hengine.RowResult": "arrays of log-odds with an array of error bounds (internal)",
}


def _classes():
    for m in pkgutil.walk_packages(exactdp.__path__, "exactdp."):
        if m.name.startswith("exactdp.cli") or m.name.endswith("__main__"):
            continue
        mod = importlib.import_module(m.name)
        for name, cls in vars(mod).items():
            if inspect.isclass(cls) and cls.__module__ == mod.__name__ and not issubclass(cls, (str, BaseException)):
                names = set(dir(cls))
                if dataclasses.is_dataclass(cls):
                    names |= {f.name for f in dataclasses.fields(cls)}
                if {"lower", "upper"} <= names or "error_bound" in names:
                    yield f"{cls.__module__}.{name}", cls


def test_every_bracket_like_class_is_a_bracket_or_a_documented_record():
    found = dict(_classes())
    assert len(found) >= 25  # the scan sees the package (δ/ε/β points, certificates, risk rows, ...)
    strays = sorted(k for k, c in found.items() if not issubclass(c, Bracket) and k not in RECORDS)
    assert not strays, f"bracket-like classes outside the one Bracket type: {strays}"
    assert set(RECORDS) <= set(found), "a documented record is gone: drop it from RECORDS"


def _exact(x) -> F:
    from exactdp.numerics.directed import exact_ratio

    return F(*exact_ratio(x))


def check_bracket(b: Bracket, truth=None) -> None:
    """The vocabulary's invariants on one instance, exactly (no rounding in the checks)."""
    lo, est, up = _exact(b.lower), _exact(b.estimate), _exact(b.upper)
    assert lo <= est <= up, (type(b).__name__, lo, est, up)
    assert b.reported_side in ("upper", "lower")
    assert _exact(b.value) == _exact(getattr(b, b.reported_side))
    assert _exact(b.error_bound) >= _exact(b.half_width) >= 0
    assert _exact(b.width) == up - lo
    assert b.contains(b.estimate) and b.contains(b.lower) and b.contains(b.upper)
    f = F(float(b))  # outward: still on the conservative side of the value
    assert f >= _exact(b.value) if b.reported_side == "upper" else f <= _exact(b.value)
    d = F(str(b.to_decimal(6)))
    assert d >= _exact(b.value) if b.reported_side == "upper" else d <= _exact(b.value)
    row = b.as_row()
    assert row["lower"] <= row["estimate"] <= row["upper"]
    assert b._repr_markdown_() and b._repr_html_()
    if truth is not None:
        t = _exact(truth)
        assert lo <= t <= up, (type(b).__name__, float(lo), float(t), float(up))
        assert abs(est - t) <= _exact(b.error_bound)


MECHS = [(F(3), 1), (F(7, 3), 2)]


def _comp():
    from exactdp.mechanisms import Composition, DiscreteGaussian

    return Composition.of(DiscreteGaussian(s, d) for s, d in MECHS)


def _bs_epsilon(rho: F, delta: F):
    with mpmath.workdps(60):
        r = mpmath.mpf(rho.numerator) / rho.denominator
        return r + 2 * mpmath.sqrt(r * mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator))


def test_certificates_are_brackets_around_the_brute_force_truth():
    from exactdp.certify.queries import certify_delta

    enc = certify_delta(_comp(), "1")
    check_bracket(enc, delta_brute(MECHS, F(1)))
    assert enc.reported_side == "upper"


def test_conversions_are_brackets_of_their_closed_form():
    from exactdp.conversions.bounds import bun_steinke_eps
    from exactdp.countdep.conversion import zcdp_to_dp

    comp = _comp()
    rho = F(comp.rho)
    pt = bun_steinke_eps(comp, "1e-6")
    check_bracket(pt, _bs_epsilon(rho, F(1, 10**6)))
    a = zcdp_to_dp(F(1, 2), F(1, 10**6), method="bun-steinke")
    check_bracket(a, _bs_epsilon(F(1, 2), F(1, 10**6)))


def test_the_recomputation_and_the_tuner_report_brackets_around_the_truth():
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.accounting.verification import verify_delta
    from exactdp.tune.evaluate import Target, delta_bound
    from exactdp.tune.run import TuneResult

    truth = delta_brute(MECHS, F(1))
    check_bracket(verify_delta(ExactAccountant(_comp()), "1"), truth)
    rhos = [F(1, 3), F(3, 7)]
    db = delta_bound(rhos, Target(F(1, 10**6), F(1)))
    check_bracket(db, delta_brute([(1 / r, 1) for r in rhos], F(1)))
    # the tuner's result reports its δ bracket with error_bound the half-width — the larger
    # side, even when the estimate sits near the upper end (upper − estimate was reported)
    skew = type(db)(F(1, 100), F(3, 100), F(29, 1000))
    res = TuneResult(None, None, None, F(1), F(1), skew, skew, (1, 1), (1, 1), None, {})
    check_bracket(res)
    assert res.error_bound == F(19, 1000)


def test_product_rows_headline_brackets_and_calibrations_are_brackets():
    from exactdp.calibration.calibrate import calibrate_design
    from exactdp.census.product_accounting import FamilyRow, TradeoffRow
    from exactdp.certify.headline import PairBracket

    check_bracket(PairBracket((1, 1), F(1, 10), F(3, 10), F(1, 4)))
    m = mpmath.mpf
    row = FamilyRow(F(1, 10**9), F(1), m(10), m(9), m("8.25"), m("8.5"), 1, m("1e-12"), m("2e-12"), 1, "bracket")
    check_bracket(row)
    tr = TradeoffRow(F(1, 10), m("0.25"), m("0.5"), 1)
    check_bracket(tr)
    assert tr.reported_side == "lower" and float(tr) == 0.25
    cal = calibrate_design(_comp(), "1e-6", "2")
    check_bracket(cal)


@pytest.mark.parametrize("kind", ["posterior", "expected_risk", "decision", "uniqueness"])
def test_risk_records_are_brackets_on_their_number(kind):
    from exactdp.risk import single, uniqueness

    if kind == "posterior":
        b = single.posterior(1, "1/10", "1/2")
    elif kind == "expected_risk":
        b = single.expected_risk("1/10", "1/2")
    elif kind == "decision":
        b = single.decision("1/10", "1/2")
    else:
        b = uniqueness.uniqueness_attack("1/10", ["1/2", "1/4"])
    check_bracket(b)
    assert b.reported_side == "upper"  # an attacker's probability: larger is worse
