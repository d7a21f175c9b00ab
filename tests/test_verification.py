"""The verification twin: independent of the fast path's node selection, and in
agreement with it within the fast path's certified bound (small designs, a few seconds)."""

import ast
import inspect
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting import verification
from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.verification import verify_delta
from exactdp.mechanisms import Composition, DiscreteGaussian


def test_twin_imports_nothing_of_the_fast_path_selection():
    tree = ast.parse(inspect.getsource(verification))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    banned = ("exactdp.engine.tails", "exactdp.engine.quadrature", "exactdp.engine.conditioning",
              "exactdp.engine.convolution", "exactdp.kernels")
    assert not [n for n in names if n and n.startswith(banned)]
    assert "TailEngine" not in inspect.getsource(verification)


DESIGNS = [
    Composition(((DiscreteGaussian(Fraction(3), 1), 4),)),
    Composition(((DiscreteGaussian(Fraction(10000, 11), 1), 3), (DiscreteGaussian(Fraction("2.5025"), 1), 1))),
    Composition(((DiscreteGaussian(Fraction(7, 3), 1), 3), (DiscreteGaussian(Fraction(11, 5), 2), 2))),
]


@pytest.mark.parametrize("comp", DESIGNS, ids=["3x4", "coarse+fine", "mixed-shifts"])
@pytest.mark.parametrize("eps", ["0", "1", "7"])
def test_twin_agrees_within_the_fast_certified_bound(comp, eps):
    acc = ExactAccountant(comp)
    v = verify_delta(acc, eps)
    with mpmath.workdps(40):
        assert v.value > 0 and v.error_bound < 1e-12 * v.value
        # the fast path's certified interval contains the twin's value (its bound included)
        assert abs(v.fast_value - v.value) + v.error_bound <= v.fast_error_bound
        assert v.agrees
