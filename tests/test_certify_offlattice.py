"""The meet-in-the-middle certificate (designs off any small lattice) against brute force.

The reference is written here: every configuration of a small box enumerated in 60-digit
mpmath (normalisers summed over a far wider box), the privacy loss of each configuration
computed from its exact rationals, δ(ε) = Σ P(x)(1 − e^{ε−L(x)})_+ and the trade-off
β(α) from the Neyman–Pearson vertices of the sorted losses.  Nothing of the engine or of
the certificate is used.  The box drops mass below ``e^{-BOX_NATS}``; the reference's
error bound says so.

Also: the engine's brackets and the lattice certificate (where it fits) agree with the
enclosures, and ``certify_points`` detects a deliberately wrong value.
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest

from exactdp.certify import Certifier, certifier_for, certify_points
from exactdp.certify.offlattice import METHOD, MitmCertifier
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError

DPS = 60
BOX_NATS = 110


def _design(mechs) -> Composition:
    return Composition.of(DiscreteGaussian(Fraction(s2), d) for s2, d, m in mechs for _ in range(m))


class Brute:
    """Every configuration of the box ``|x_i| ≤ W_i`` (one coordinate per mechanism)."""

    def __init__(self, mechs):
        with mpmath.workdps(DPS):
            coords = []
            self.dropped = mpmath.mpf(0)
            self.floor = mpmath.exp(-BOX_NATS - 20)
            for s2, d, m in mechs:
                s2 = Fraction(s2)
                sm = mpmath.mpf(s2.numerator) / s2.denominator
                W = abs(d) + int(math.ceil(math.sqrt(2 * float(s2) * BOX_NATS))) + 1
                big = W + abs(d) + int(math.ceil(math.sqrt(2 * float(s2) * 400))) + 5
                Z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x * x) / (2 * sm)) for x in range(-big, big + 1))
                pmf = [(x, mpmath.exp(-mpmath.mpf(x * x) / (2 * sm)) / Z) for x in range(-W, W + 1)]
                # P(|X| > W) and Q(|X − d| ... ) ≤ P(|X| > W − |d|): a generous bound of the dropped mass
                out = 2 * mpmath.exp(-mpmath.mpf((W - abs(d) + 1) ** 2) / (2 * sm)) / Z * 2
                for _ in range(m):
                    coords.append((s2, d, pmf))
                    self.dropped += out
            # per coordinate: (loss, P, Q) at 60 digits (a tie with ε contributes 0 either way)
            per = []
            for s2, d, pmf in coords:
                rows = []
                for x, px in pmf:
                    loss = _mpf(Fraction(d * d - 2 * d * x) / (2 * s2))  # log N(0,s2)(x)/N(d,s2)(x)
                    rows.append((loss, px, px * mpmath.exp(-loss)))
                per.append(rows)
            atoms = [(mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1))]
            pruned = 0
            for rows in per:
                n = len(atoms) * len(rows)
                atoms = [(la + lb, pa * pb, qa * qb) for la, pa, qa in atoms for lb, pb, qb in rows
                         if pa * pb > self.floor or qa * qb > self.floor]
                pruned += n - len(atoms)
            self.atoms = sorted(atoms, key=lambda t: t[0])
            self.dropped += 2 * self.floor * pruned  # each pruned product: P and Q below the floor

    def delta(self, eps: Fraction):
        """(value, error bound) of δ(ε)."""
        with mpmath.workdps(DPS):
            e = _mpf(eps)
            v = mpmath.fsum(p - mpmath.exp(e) * q for loss, p, q in self.atoms if loss > e)
            return v, self.dropped

    def beta(self, alpha: Fraction):
        """(value, error bound) of f(α): tests reject P on small losses first."""
        with mpmath.workdps(DPS):
            a = _mpf(alpha)
            acc_p, acc_q = mpmath.mpf(0), mpmath.mpf(0)
            total_q = mpmath.fsum(q for _, _, q in self.atoms)
            for _, p, q in self.atoms:
                if acc_p + p >= a:
                    t = (a - acc_p) / p
                    return total_q - acc_q - t * q, self.dropped
                acc_p += p
                acc_q += q
            return mpmath.mpf(0), self.dropped


def _q(x) -> Fraction:
    """An mpmath number exactly."""
    m, e = mpmath.mpf(x).man_exp
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _mpf(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


def _agrees(enc, ref) -> bool:
    """The enclosure and the reference interval [v − err, v + err] intersect."""
    v, err = ref
    with mpmath.workdps(DPS):
        return _mpf(enc.lower_exact) <= v + err + mpmath.mpf(10) ** (-DPS + 5) and \
            v - err - mpmath.mpf(10) ** (-DPS + 5) <= _mpf(enc.upper_exact)


# off-lattice designs: decimal variances, a tiny variance beside large ones, negative and large shifts
DESIGNS = {
    "decimals": [("2.51", 1, 1), ("3.07", 1, 1), ("4.4", 1, 1)],
    "tiny-beside-large": [("1/1000", 1, 1), ("2.51", 1, 1), ("7.3", 2, 1)],
    "negative-shift": [("3.07", -1, 1), ("4.4", 3, 1)],
    "large-shift": [("2.51", 12, 1), ("3.07", 1, 1)],
    "counts": [("0.53", 1, 2), ("1.7", 1, 1)],
}
_BRUTE: dict = {}


def _brute(name) -> Brute:
    if name not in _BRUTE:
        _BRUTE[name] = Brute(DESIGNS[name])
    return _BRUTE[name]


@pytest.mark.parametrize("name", sorted(DESIGNS))
@pytest.mark.parametrize("eps", ["0", "1", "7/2"])
def test_delta_encloses_brute_force(name, eps):
    comp = _design(DESIGNS[name])
    enc = MitmCertifier(comp).delta(eps)
    assert enc.method == METHOD
    ref = _brute(name).delta(Fraction(eps))
    assert _agrees(enc, ref), (enc.decimal(25), ref)
    assert enc.relative_width < 1e-15


@pytest.mark.parametrize("name", ["decimals", "large-shift"])
def test_delta_at_huge_epsilon(name):
    """δ far below 1 (ε ≫ ρ): the truncation deepens until the left-out mass is small beside δ."""
    comp = _design(DESIGNS[name])
    eps = Fraction(8) if name == "decimals" else Fraction(90)
    enc = MitmCertifier(comp).delta(eps)
    v, err = _brute(name).delta(eps)
    assert v > 0 and err < v * 1e-20
    assert _agrees(enc, (v, err))
    assert 0 < enc.lower_exact and enc.relative_width < 1e-15


@pytest.mark.parametrize("name", ["decimals", "tiny-beside-large", "negative-shift"])
@pytest.mark.parametrize("alpha", ["1/10", "1/1000", "9/10"])
def test_tradeoff_encloses_brute_force(name, alpha):
    comp = _design(DESIGNS[name])
    enc = MitmCertifier(comp).tradeoff(alpha)
    assert _agrees(enc, _brute(name).beta(Fraction(alpha))), enc.decimal(25)
    assert enc.relative_width < 1e-12


@pytest.mark.parametrize("name", ["decimals", "large-shift", "counts"])
@pytest.mark.parametrize("delta", ["1/10", "1e-6"])
def test_epsilon_brackets_brute_force(name, delta):
    """ε(δ) is enclosed: δ(lower) ≥ target ≥ δ(upper) by the brute-force reference."""
    comp = _design(DESIGNS[name])
    d = Fraction(delta) if "e" not in delta else Fraction(1, 10**6)
    enc = MitmCertifier(comp).epsilon(d)
    brute = _brute(name)
    v_lo, err = brute.delta(enc.lower_exact)
    v_hi, _ = brute.delta(enc.upper_exact)
    with mpmath.workdps(DPS):
        assert v_lo + err >= _mpf(d) >= v_hi - err
    assert enc.relative_width < 1e-15


@pytest.mark.parametrize("eps", ["20", "40"])
def test_huge_epsilon_by_the_tilt(eps):
    """δ(20) ≈ 9e-91 and δ(40) ≈ 7e-361 (beyond the brute-force box): the tilted truncation
    keeps a few hundred atoms per half; the lattice certificate, an independent method,
    agrees."""
    comp = _design(DESIGNS["decimals"])
    a, b = MitmCertifier(comp).delta(eps), Certifier(comp).delta(eps)
    assert a.lower_exact <= b.upper_exact and b.lower_exact <= a.upper_exact
    assert 0 < a.lower_exact and a.relative_width < 1e-14
    assert max(a.params["atoms_per_half"]) < 5000


def test_agrees_with_the_lattice_certificate():
    """Where both fit (three decimal variances), the two independent enclosures intersect."""
    comp = _design(DESIGNS["decimals"])
    mitm, lat = MitmCertifier(comp), Certifier(comp)
    for e in ("0", "1", "3"):
        a, b = mitm.delta(e), lat.delta(e)
        assert a.lower_exact <= b.upper_exact and b.lower_exact <= a.upper_exact
    a, b = mitm.tradeoff("1/10"), lat.tradeoff("1/10")
    assert a.lower_exact <= b.upper_exact and b.lower_exact <= a.upper_exact
    a, b = mitm.epsilon(Fraction(1, 10**6)), lat.epsilon(Fraction(1, 10**6))
    assert a.lower_exact <= b.upper_exact and b.lower_exact <= a.upper_exact


EIGHT = "2.51 2.77 3.07 3.33 3.61 3.89 4.13 4.4".split()
FIVE = "2.513 3.071 4.407 3.331 3.617".split()


def test_off_lattice_designs_get_the_enumeration():
    assert isinstance(certifier_for(Composition.from_sigma2(EIGHT)), MitmCertifier)
    assert isinstance(certifier_for(Composition.from_sigma2(FIVE)), MitmCertifier)
    assert isinstance(certifier_for(Composition.from_sigma2(["10000/11"] * 20)), Certifier)


def test_engine_brackets_and_certificate_agree_off_lattice():
    """The lattice-free engine's brackets contain the enclosures (both contain the truth,
    the enclosure is far narrower), and its conservative values pass the check."""
    from exactdp.accounting.accountant import ExactAccountant, delta, epsilon, tradeoff

    comp = Composition.from_sigma2(FIVE)
    acc = ExactAccountant(comp)
    cert = certifier_for(comp)
    assert isinstance(cert, MitmCertifier)
    eps = [Fraction(0), Fraction(1), Fraction(6)]
    pts = delta(acc, eps).points
    for p, enc in zip(pts, certify_points(comp, "delta", eps, pts, cert)):
        assert enc.method == METHOD
        assert _q(p.lower) <= enc.lower_exact <= enc.upper_exact <= _q(p.value)
    ds = [Fraction(1, 10**6)]
    pts = epsilon(comp, ds).points
    for p, enc in zip(pts, certify_points(comp, "epsilon", ds, pts, cert)):
        assert enc.upper_exact <= _q(p.upper) and _q(p.lower) <= enc.upper_exact
    al = [Fraction(1, 10)]
    pts = tradeoff(comp, al).points
    for p, enc in zip(pts, certify_points(comp, "tradeoff", al, pts, cert)):
        assert _q(p.value) <= enc.lower_exact


def test_a_wrong_bracket_is_detected():
    """A fast δ a hair below the enclosure (or a β above it) is refused, not passed."""
    comp = Composition.from_sigma2(FIVE)
    cert = MitmCertifier(comp)
    enc = cert.delta(1)
    low = mpmath.mpf(float(enc.lower_exact)) * (1 - mpmath.mpf(1e-12))
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(comp, "delta", [Fraction(1)], [SimpleNamespace(value=low, piece=None)], cert)
    ok = mpmath.mpf(float(enc.upper_exact)) * (1 + mpmath.mpf(1e-12))
    assert certify_points(comp, "delta", [Fraction(1)], [SimpleNamespace(value=ok, piece=None)], cert)
    b = cert.tradeoff(Fraction(1, 10))
    high = mpmath.mpf(float(b.upper_exact)) * (1 + mpmath.mpf(1e-12))
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(comp, "tradeoff", [Fraction(1, 10)], [SimpleNamespace(value=high, threshold=None)], cert)


def test_beyond_reach_is_refused_with_a_remedy():
    comp = Composition.from_sigma2([f"{40 + k}.{k + 1}" for k in range(14)])
    with pytest.raises(UncertifiedError, match="without --certify"):
        certify_points(comp, "delta", [Fraction(1)], [SimpleNamespace(value=mpmath.mpf(1), piece=None)])


def test_cli_certifies_an_off_lattice_design(capsys):
    """``exactdp delta --certify`` on distinct three-decimal variances: an enclosure by meet in
    the middle, named in the JSON, the fast value on its conservative side."""
    import json

    from exactdp.cli import main

    argv = ["delta", *(a for v in FIVE for a in ("--sigma2", v)), "--eps", "0", "--eps", "2", "--certify", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    for p in out["points"]:
        assert p["certificate_method"] == METHOD
        lo, hi = (mpmath.mpf(x) for x in p["enclosure"])
        assert lo <= hi <= mpmath.mpf(p["delta"])
