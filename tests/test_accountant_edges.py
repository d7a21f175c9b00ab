"""The accountant at the edges of its domain — deep ε(δ), δ beyond float64, ε up to 1e19,
nearly deterministic noise, α near 1 — and its input handling, against exact
references of tests/harness.py (integer/mpmath enumeration, closed forms; nothing of
exactdp).  Each certified answer must contain the truth on the conservative side and be
≤ 1e-9 relative wide, or be a one-line refusal."""

import json
from fractions import Fraction as F

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.cli import main
from exactdp.cli._designs import parse_sigma2_specs
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError

from harness import BruteDesign, mp, single_delta

REL = mpmath.mpf("1e-9")


def _acc(*specs):
    return ExactAccountant(parse_sigma2_specs(list(specs)))


def _mechs(*specs):
    out = []
    for spec in specs:
        v, _, n = spec.partition("x")
        out.append((F(v), 1, int(n or 1)))
    return out


def check_delta(pt, ref):
    """The certified δ bracket contains the reference bracket's centre and is tight."""
    val, err = ref
    assert err <= val * mpmath.mpf("1e-20")
    assert pt.lower <= val <= pt.upper, (pt.lower, val, pt.upper)
    assert pt.upper - pt.lower <= 2 * REL * val


def check_epsilon(pt, target, ref_delta):
    """δ(upper) ≤ target (the conservative claim) and δ(lower) ≥ target, by the reference."""
    t = mpmath.mpf(target.numerator) / target.denominator
    hi_v, hi_e = ref_delta(pt.upper)
    lo_v, lo_e = ref_delta(pt.lower)
    assert hi_v - hi_e <= t, ("δ(upper) > target", hi_v, t)
    assert lo_v + lo_e >= t, ("δ(lower) < target", lo_v, t)
    assert pt.upper - pt.lower <= REL * abs(pt.upper)


@pytest.mark.parametrize("spec, target, truth", [
    ("1", "1e-300", "37.4953"),
    ("1/2", "1e-150", "36.99999999909"),
    ("1/3", "1e-150", None),
    ("2/5", "1e-150", None),
    ("2", "1e-600", None),
    ("1x2", "1e-600", None),
])
def test_epsilon_deep_delta_was_on_the_unsafe_side(spec, target, truth):
    """was 32.5 for σ² = 1 at 1e-300 (δ(32.5) = 8.5e-238): the piece was chosen on δ
    estimates that cancel completely."""
    pt = _acc(spec).epsilon([target])[0]
    ref = BruteDesign(_mechs(spec))
    check_epsilon(pt, F(target), lambda e: ref.delta(e))
    if truth:
        assert abs(pt.value - mpmath.mpf(truth)) < mpmath.mpf(10) ** -(len(truth) - 3)


@pytest.mark.parametrize("target", ["1e-302", "1e-305", "1e-320", "1e-400"])
def test_epsilon_two_groups_beyond_float64(target):
    """was 56.0714285714 with error bound 0.0 at 1e-302 (truth 56.0092), NaN at 1e-400."""
    acc = _acc("7/3x3", "11/5x2")
    pt = acc.epsilon([target])[0]
    ref = BruteDesign(_mechs("7/3x3", "11/5x2"))
    check_epsilon(pt, F(target), lambda e: ref.delta(e))


def test_delta_two_groups_at_eps_56_was_nan():
    pt = _acc("7/3x3", "11/5x2").delta(["56"])[0]
    check_delta(pt, BruteDesign(_mechs("7/3x3", "11/5x2")).delta(F(56)))
    assert abs(pt.value / mpmath.mpf("1.558e-302") - 1) < 1e-3


@pytest.mark.parametrize("eps", [10**9, 10**30])
def test_delta_at_huge_eps_carries_the_exponent_exactly(eps):
    """was 4.3e-434294481903251880 at 1e9 (float64 log P off by ~100 nats; truth 1.39e-…829);
    at 1e30, e^ε is beyond MPFR's exponent range (the profile's arithmetic falls back)."""
    pt = _acc("2").delta([str(eps)])[0]
    truth = single_delta(2, 1, eps, dps=40)
    assert pt.lower <= truth <= pt.upper
    assert pt.upper - pt.lower <= 2 * REL * truth


def test_delta_at_eps_1e19_and_huge_shift():
    pt = _acc("2").delta(["1e19"])[0]
    truth = single_delta(2, 1, 10**19, dps=40)
    assert pt.lower <= truth <= pt.upper and pt.upper - pt.lower <= 2 * REL * truth
    acc = ExactAccountant(Composition.of([DiscreteGaussian(2, 10**11)]))
    pt = acc.delta(["1"])[0]
    truth = single_delta(2, 10**11, 1, dps=40)
    assert pt.lower <= truth <= pt.upper


@pytest.mark.parametrize("spec, eps, approx", [
    (["1/100"], 49, "0.632"),
    (["1/1000"], 1, None),
    (["1/1000"], 0, None),
    (["1/10x20"], 100, None),
    (["1/20x5"], 50, "2.27e-4"),
    (["0.1"], 1, None),
])
def test_nearly_deterministic_noise_was_nan_or_refused(spec, eps, approx):
    pt = _acc(*spec).delta([str(eps)])[0]
    check_delta(pt, BruteDesign(_mechs(*spec)).delta(F(eps)))
    if approx:
        assert abs(pt.value / mpmath.mpf(approx) - 1) < 5e-3


@pytest.mark.parametrize("eps", ["0", "1/1000000"])
def test_small_eps_is_cancellation_free(eps):
    """σ² = 10⁶ at ε ≈ 0: δ ≈ 4e-4 was a difference of two tails ≈ 0.5 (6e-8 bound)."""
    pt = _acc("1000000").delta([eps])[0]
    check_delta(pt, BruteDesign(_mechs("1000000")).delta(F(eps)))
    assert pt.relative_error < 1e-11


def _tradeoff_ref(acc, ref, pt, alpha):
    """The reference β at α on the segment the engine names, the segment itself checked
    by the reference: α ∈ [P[W > v], P[W ≥ v]], v = (k − 1)/scale, and
    β = P_Q[W < v] + e^{v − c}(P_P[W ≥ v] − α) (computed through 1 − α near 1)."""
    lat = acc.lattice
    v = F(pt.threshold - 1) / lat.scale
    a = F(alpha)
    with mpmath.workdps(110):
        if a > F(1, 2):
            abar = mp(1 - a)
            le, le_err = ref.lower_tail(v)  # 1 − P[W ≥ v]
            lt, lt_err = ref.tail(-v)  # 1 − P[W > v] = P[W ≤ v] = P[W ≥ −v]
            assert le - le_err <= abar <= lt + lt_err
            gap = abar - le
        else:
            am = mp(a)
            hi, _ = ref.tail(v)
            lo, _ = ref.tail(v, strict=True)
            assert lo <= am <= hi
            gap = hi - am
        bq, _ = ref.lower_tail(v - 2 * lat.c)
        return bq + mpmath.exp(mp(v) - mp(lat.c)) * gap


@pytest.mark.parametrize("alpha", ["0.99999999999999999999", "0.99999999999999", "0.05", "1e-400"])
def test_tradeoff_near_one_uses_lower_tails(alpha):
    """DHC 13-13 at α = 1 − 1e-20 gave β ≥ 1.276e-30 (truth 1.116e-35); α was located on
    float64 complements.  Same design family: 10000/11 × 20, against the reference."""
    acc = _acc("10000/11x20")
    pt = acc.tradeoff([alpha])[0]
    ref = BruteDesign(_mechs("10000/11x20"))
    beta = _tradeoff_ref(acc, ref, pt, alpha)
    assert pt.lower <= beta <= pt.upper
    assert pt.upper - pt.lower <= 2 * REL * beta


def test_tradeoff_dhc_full_chain_near_one():
    from exactdp.census.allocations import load_allocation

    comp = Composition.from_rhos(load_allocation("dhc-persons-2020").pair_rhos(13, 13))
    acc = ExactAccountant(comp)
    a, b = acc.tradeoff(["0.99999999999999999999", "0.99999999999999"])
    assert abs(a.value / mpmath.mpf("1.116e-35") - 1) < 1e-3  # the truth
    assert abs(b.value / mpmath.mpf("1.70368e-27") - 1) < 1e-5


def test_two_groups_tradeoff_at_alpha_1e_400():
    acc = _acc("7/3x3", "11/5x2")
    pt = acc.tradeoff(["1e-400"])[0]
    beta = _tradeoff_ref(acc, BruteDesign(_mechs("7/3x3", "11/5x2")), pt, "1e-400")
    assert pt.lower <= beta <= pt.upper and pt.upper - pt.lower <= 2 * REL * beta


def test_alpha_and_delta_fifty_nines_finish():
    """tradeoff --alpha 0.(50 nines) looped forever; epsilon --delta 0.(50 nines) ended in
    a MemoryError."""
    nines = "0." + "9" * 50
    acc = _acc("2")
    pt = acc.tradeoff([nines])[0]
    beta = _tradeoff_ref(acc, BruteDesign(_mechs("2")), pt, nines)
    assert pt.lower <= beta <= pt.upper
    ep = acc.epsilon([nines])[0]
    ref = BruteDesign(_mechs("2"))

    def comp(e):  # 1 − δ(ε) = e^ε (1 − δ(−ε)) for ε < 0
        v, err = ref.delta(-e)
        return mpmath.exp(e) * (1 - v), mpmath.exp(e) * err

    c_hi, _ = comp(ep.upper)
    c_lo, _ = comp(ep.lower)
    t = mpmath.mpf(10) ** -50
    assert c_hi >= t >= c_lo  # δ(upper) ≤ 1 − 1e-50 ≤ δ(lower)
    assert ep.upper - ep.lower <= REL * abs(ep.upper)


def test_negative_eps():
    acc = _acc("3x2")
    ref = BruteDesign(_mechs("3x2"))
    for e in ("-1/2", "-7"):
        pt = acc.delta([e])[0]
        v, err = ref.delta(-F(e))
        with mpmath.workdps(60):
            ee = mpmath.exp(mpmath.mpf(F(e).numerator) / F(e).denominator)
            truth = 1 - ee + ee * v
        assert pt.lower <= truth <= pt.upper


# ---------------------------------------------------------------- input handling
def test_python_api_refuses_a_lone_string():
    acc = _acc("2")
    for call in (acc.delta, acc.epsilon, acc.tradeoff):
        with pytest.raises(InputError, match="sequence"):
            call("10")


def test_diagnostics_name_the_method_that_answered():
    assert _acc("1/1000x2", "20x3").diagnostics().method != "tilted-trapezoid"
    assert _acc("10000/11x20").diagnostics().method == "tilted-trapezoid"


@pytest.mark.parametrize("argv, needle", [
    (["delta", "--sigma2", "2x", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e-400", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "1e400", "--eps", "1"], "--sigma2"),
    (["delta", "--sigma2", "2", "--eps", "1", "--rel-tol", "0"], "--rel-tol"),
    (["delta", "--sigma2", "2", "--eps", "1", "--rel-tol", "-1"], "--rel-tol"),
    (["delta", "--sigma2", "2", "--eps", "1", "--rel-tol", "inf"], "--rel-tol"),
])
def test_cli_bad_input_exit_2_one_line(capsys, argv, needle):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err and len(err) < 300


def test_cli_prints_no_nan(capsys):
    assert main(["delta", "--sigma2", "1/100", "--eps", "49", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "nan" not in json.dumps(out).lower()


def test_cli_uncertifiable_is_exit_3_with_advice(capsys, monkeypatch):
    import exactdp.accounting.accountant as acc_mod

    def boom(self, *a, **k):
        raise UncertifiedError("δ could not be certified; try --rel-tol")

    monkeypatch.setattr(acc_mod.ExactAccountant, "delta", boom)
    assert main(["delta", "--sigma2", "2", "--eps", "1"]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--rel-tol" in err


# ---------------------------------------------------------------- determinism
def _numbers(pts):
    return [tuple(str(getattr(p, f)) for f in ("estimate", "error_bound", "lower", "upper")) for p in pts]


@pytest.mark.parametrize("specs", [("10000/11x20", "2.5025"), ("7/3x3", "11/5x2")])
def test_results_do_not_depend_on_query_history(specs):
    """Every number is a function of (design, query, rel_tol): the same queries on a fresh
    accountant and after others (deep ε(δ), α near 1, far tails — the ones that raise the
    sieve level or fall back to other methods) give identical output.  The trade-off
    bounds of 10000/11x20 + 2.5025 used to tighten after earlier queries."""
    comp = parse_sigma2_specs(list(specs))
    queries = [("tradeoff", ["0.99999999999999999999", "1/2"]), ("delta", ["1", "0", "-2"])]
    fresh = [_numbers(getattr(ExactAccountant(comp), k)(a)) for k, a in queries]
    used = ExactAccountant(comp)
    used.epsilon(["1e-300", "3/10"])
    used.tradeoff(["1e-400", "0.99999999999999999999", "1/2"])
    used.delta(["100", "1/3"])
    assert [_numbers(getattr(used, k)(a)) for k, a in queries] == fresh


# ---------------------------------------------------------------- |ε| beyond 1e50 in the API
@pytest.mark.parametrize("e", ["1e200", "-1e60", F(10**51)])
def test_python_api_refuses_huge_epsilon_like_the_cli(e):
    """δ(ε = 1e200) used to raise a raw OverflowError from the quadrature; the API now
    refuses |ε| > 1e50 with the CLI's one-line InputError (naming the value as given)."""
    for comp in (Composition.from_sigma2(["2"]), Composition.from_sigma2(["121/100", "12148/25", "121481/100"])):
        with pytest.raises(InputError, match=r"above 1e50 is not supported"):
            ExactAccountant(comp).delta([e])
