"""``exactdp.sweep.float_offsets.offsets_by_float``: the trade-off threshold offsets decided in
float64 equal mpmath's ``nint(U·m/half)`` at 30 digits (the definition), exact ties and
neighbours of half-integers included, and the exact operations are asked only where the
float pass cannot decide."""

from __future__ import annotations

from fractions import Fraction

import mpmath
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.sweep.float_offsets import offsets_by_float


def _ref_value(u, m: int, half: int) -> int:
    """mpmath's nint of U·m/half at 30 digits (independent of MPFR and of the module)."""
    with mpmath.workdps(30):
        return int(mpmath.nint(u * m / half))


def _run(u, half):
    calls = []

    def exact(m):
        calls.append(m)
        return _ref_value(u, m, half)

    got = offsets_by_float(float(u), half, exact)
    with mpmath.workdps(30):
        want = sorted({_ref_value(u, m, half) for m in range(half + 1)})
    return got, want, calls


def test_ties_and_their_neighbours_go_to_the_exact_operations():
    """U·m/half on n + 1/2 exactly and 2^-90 relative either side: the float pass leaves
    those m to ``exact`` (their rounding differs from float64's), decides the rest."""
    with mpmath.workdps(30):
        for half in (2, 3, 400, 401):
            for n in (0, 1, 7, 123456):
                base = (mpmath.mpf(n) + mpmath.mpf(1) / 2) * 2  # m = half/… : U·m/half = n + 1/2 at m = half/2
                base = base * half / (2 * max(1, half // 2))
                for U in (base, base * (1 + mpmath.mpf(2) ** -90), base * (1 - mpmath.mpf(2) ** -90), -base):
                    got, want, calls = _run(U, half)
                    assert got == want, (half, n, U)
                    assert max(1, half // 2) in calls  # the tie's m was not decided in float64
                    assert len(calls) <= half // 2 + 1


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.one_of(st.integers(-10**7, 10**7).map(lambda k: Fraction(k, 8)),
                 st.integers(1, 10**30).map(lambda k: Fraction(k, 2**80)),
                 st.floats(-1e6, 1e6)),
       st.integers(2, 500))
def test_random_offsets_equal_the_definition(u, half):
    with mpmath.workdps(30):
        U = mpmath.mpf(u) if isinstance(u, float) else mpmath.mpf(u.numerator) / u.denominator
    got, want, calls = _run(U, half)
    assert got == want


def test_out_of_range_takes_the_exact_path_everywhere():
    with mpmath.workdps(30):
        U = mpmath.mpf(2) ** 45 + mpmath.mpf(1) / 3
    got, want, calls = _run(U, 5)
    assert got == want and sorted(calls) == list(range(6))
