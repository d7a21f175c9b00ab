import mpmath

from exactdp.numerics.precision import backend, workdps


def test_mpmath_uses_gmpy2_backend():
    # gmpy2 is a hard dependency: the multiprecision twin must run on it
    assert backend() == "gmpy"


def test_workdps_restores_precision_even_on_error():
    before = mpmath.mp.dps
    try:
        with workdps(80):
            assert mpmath.mp.dps == 80
            raise RuntimeError
    except RuntimeError:
        pass
    assert mpmath.mp.dps == before
