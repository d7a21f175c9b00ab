"""Documented checks of the boundary statements: the endpoint r = 1 (Proposition 2.3) and
the impossibility of the literal relative-error target at count zero (Proposition 2.2).
Everything here is exact rational arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.countdep.params import ShiftedLogParams, validate_count, validate_r

__all__ = ["EndpointRow", "EndpointCheck", "endpoint_r1_check", "ZeroCountCheck", "zero_count_check"]


@dataclass(frozen=True)
class EndpointRow:
    """One count of the r = 1 check: |1/2 − n| against max(n, 1)."""

    n: int
    error: Fraction
    target: Fraction
    strict: bool


@dataclass(frozen=True)
class EndpointCheck:
    """Proposition 2.3: the constant release 1/2 meets (2) strictly at r = 1 with v ≡ 0.

    Attributes
    ----------
    rows : tuple of EndpointRow
    all_strict : bool
    budget : Fraction
        0: the output law does not depend on the data, so every Rényi divergence is 0.
    """

    rows: tuple
    all_strict: bool
    budget: Fraction


def endpoint_r1_check(ns) -> EndpointCheck:
    """Check Proposition 2.3 at the given counts (exact).

    Notes
    -----
    The release x̂ = 1/2 is deterministic, so E|x̂ − n| = |1/2 − n|: 1/2 < 1 at n = 0 and
    n − 1/2 < n for n ≥ 1.  Reference: Fitzsimons (2026), Proposition 2.3.
    """
    rows = []
    for n in ns:
        n = validate_count(n)
        err = abs(Fraction(1, 2) - n)
        tgt = Fraction(max(n, 1))
        rows.append(EndpointRow(n, err, tgt, err < tgt))
    return EndpointCheck(tuple(rows), all(r.strict for r in rows), Fraction(0))


@dataclass(frozen=True)
class ZeroCountCheck:
    """Proposition 2.2 made concrete.

    Attributes
    ----------
    r : Fraction
    literal_feasible_at_zero : bool
        False: (1) at n = 0 demands E|x̂| < 0.
    weak_forced_error_at_one : Fraction
        1: under the weak version (≤), finite Rényi divergence across 0 ↔ 1 forces the
        count-one law to be δ_0 too, whose error at count one is 1.
    weak_version_contradiction : bool
        Whether 1 > r (true for every r < 1): the weak repair fails.
    mechanism_error_at_zero : Fraction or None
        The shifted-log mechanism's pre-clipping bound c·r0/(1+c) at n = 0, which is > 0
        (so it violates (1) at zero) yet < r (so it meets the repaired target (2)).
    explanation : str
    """

    r: Fraction
    literal_feasible_at_zero: bool
    weak_forced_error_at_one: Fraction
    weak_version_contradiction: bool
    mechanism_error_at_zero: Fraction | None
    explanation: str


def zero_count_check(r, params: ShiftedLogParams | None = None) -> ZeroCountCheck:
    """Document Proposition 2.2 for a tolerance r (and optionally a mechanism).

    Notes
    -----
    Exact: E|x̂ − 0| ≥ 0 for every random variable, so ``E|x̂| < 0`` is infeasible.  With
    ≤ instead, x̂ = 0 a.s. at count 0 (P_0 = δ_0); finite D_α(P_1‖P_0) for any α > 1
    requires P_1 ≪ δ_0, hence P_1 = δ_0 and E_1|x̂ − 1| = 1 > r when r < 1.
    Reference: Fitzsimons (2026), Proposition 2.2.
    """
    r = validate_r(r)
    mech = None
    if params is not None:
        mech = params.c * params.r0 / (1 + params.c)
    text = (
        "At n = 0 the literal target E|x - 0| < r*0 = 0 is impossible. With <= the release at 0 must be "
        "delta_0; finite Renyi divergence across 0<->1 then forces delta_0 at 1 too, with error 1 > r. "
        "The repaired target (2) allows error < r at n = 0."
    )
    return ZeroCountCheck(r, False, Fraction(1), Fraction(1) > r, mech, text)
