"""``verify_delta`` / ``exactdp delta --verify``: the multiprecision recomputation of δ(ε).

* independent of the fast path: it imports nothing of the engine but the lattice mapping,
  no kernel, no certificate, no float64 or extended-precision sum;
* right: on small designs (coarse and fine groups, σ² below the direct/Poisson switch,
  shifts ±1 and 2, ε of both signs and 0) its value is within its own bound of the
  brute-force enumeration of tests/harness.py, and that bound is ≤ 1e-18 relative — by
  the full rule and by the exact conditioning on the groups that never decay;
* a check that can fail: a fast value moved by 1e-9 relative is reported as disagreeing
  (exit 3 in the CLI); ``--verify`` on ``epsilon``/``tradeoff`` is refused in one line.
"""

import ast
import inspect
import json
from fractions import Fraction as F

import mpmath
import pytest

from exactdp.accounting import verification
from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.verification import verify_delta
from exactdp.cli import main
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BruteDesign


def test_imports_nothing_of_the_fast_path_or_the_certificate():
    tree = ast.parse(inspect.getsource(verification))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    engine = {n for n in names if n and n.startswith("exactdp.engine")}
    assert engine <= {"exactdp.engine.lattice", "exactdp.engine.lattice.LatticeSum"}, engine
    banned = ("exactdp.kernels", "exactdp.certify", "exactdp.conversions", "numba", "flint")
    assert not [n for n in names if n and n.startswith(banned)]
    source = inspect.getsource(verification)
    assert "TailEngine" not in source and "longdouble" not in source and "float128" not in source


#: (σ², shift, count) per group, the ε checked and whether the exact conditioning route is
#: taken: coarse + fine (the σ² = 2.5025 group never decays: conditioned on), mixed shifts,
#: groups below σ² = 1 (the direct series), σ² = 1 and 1.12 (the Poisson series' k = ±2
#: terms), a single group
DESIGNS = {
    "3x4": ([(F(3), 1, 4)], ("0", "7", "-1/2"), False),
    "coarse+fine": ([(F(10000, 11), 1, 3), (F("2.5025"), 1, 1)], ("1",), True),
    "mixed-shifts": ([(F(7, 3), 1, 1), (F(11, 5), 2, 1), (F(5), -1, 1)], ("7",), False),
    "small-sigma2": ([(F(1, 3), 1, 3), (F(2, 5), 1, 2), (F(2), 1, 1)], ("1/3",), False),
    "near-the-switch": ([(F(1), 1, 2), (F(28, 25), 1, 1)], ("1/2",), False),
}


def _comp(mechs):
    return Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in mechs))


def _check(v, ref):
    val, ref_err = ref
    with mpmath.workdps(40):
        assert abs(v.estimate - val) <= v.error_bound + ref_err, (v.estimate, val, v.error_bound)
        assert v.error_bound <= abs(val) * mpmath.mpf(10) ** -18
        assert v.agrees and abs(v.fast_value - v.estimate) <= v.fast_error_bound + v.error_bound


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_against_brute_force(name):
    mechs, epsilons, conditioned = DESIGNS[name]
    acc = ExactAccountant(_comp(mechs))
    ref = BruteDesign(mechs)
    for eps in epsilons:
        _check(verify_delta(acc, eps), ref.delta(F(eps)) if F(eps) >= 0 else _negative(ref, F(eps)))
    assert bool(verification._twin(acc.engine, verification.VERIFY_DPS).coarse) == conditioned  # the route


def _negative(ref, e):
    """δ(ε) for ε < 0: 1 − e^ε + e^ε δ(−ε) (the P/Q symmetry of these designs)."""
    v, err = ref.delta(-e)
    with mpmath.workdps(60):
        ee = mpmath.exp(mpmath.mpf(e.numerator) / e.denominator)
        return 1 - ee + ee * v, ee * err


def test_a_wrong_fast_value_is_caught(monkeypatch, capsys):
    acc = ExactAccountant(_comp(DESIGNS["3x4"][0]))
    good = acc.delta(["1"])[0]
    real = ExactAccountant.delta

    def off(self, epsilons):  # the fast path 1e-9 relative off (far beyond its certified bound)
        return tuple(type(p)(**{**p.__dict__, "estimate": p.estimate * (1 + mpmath.mpf(10) ** -9)})
                     for p in real(self, epsilons))

    monkeypatch.setattr(ExactAccountant, "delta", off)
    v = verify_delta(ExactAccountant(_comp(DESIGNS["3x4"][0])), "1")
    assert not v.agrees and v.disagreement > good.error_bound
    assert main(["delta", "--sigma2", "3x4", "--eps", "1", "--verify"]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--verify" in err and "disagrees" in err


def test_cli_verify_reports_and_refuses_in_one_line(capsys):
    assert main(["delta", "--sigma2", "3x4", "--eps", "1", "--eps", "0", "--verify", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert [p["agrees"] for p in pts] == [True, True]
    assert all(float(p["verify_error_bound"]) < 1e-18 * float(p["verified_delta"]) for p in pts)
    for cmd, flag, value in (("epsilon", "--delta", "1e-6"), ("tradeoff", "--alpha", "0.1")):
        assert main([cmd, "--sigma2", "2", flag, value, "--verify"]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "--verify" in err and "--certify" in err
