"""The discrete part of a mixed design as exact loss atoms in balls, written from each kind's outputs.

For a :class:`~exactdp.kinds.Mixture` the privacy loss ``L = log dP/dQ`` of the composition is
the sum of independent per-mechanism losses.  Here every group is turned, from its *output*
distributions, into the atoms of its loss under P on its own rational grid
``c_u + s_u·i`` (``i = 0, 1, …``), its count taken by an Arb polynomial power:

* discrete Laplace ``b``, shift ``m = |s|`` (pmf ``tanh(1/2b)·r^{|x|}``, ``r = e^{−1/b}``): the
  outputs ``x ≤ 0`` (loss ``m/b``, mass ``Σ_{x≤0} = 1/(1+r)``), ``0 < x < m`` (loss ``(m − 2x)/b``,
  mass ``(1−r)/(1+r)·r^x``) and ``x ≥ m`` (loss ``−m/b``, mass ``r^m/(1+r)``), each a geometric
  series summed in closed form — nothing is truncated;
* randomized response (ε, k): output = the true category (loss ε, mass ``e^ε/(e^ε+k−1)``), the
  neighbour's (loss −ε, ``1/(e^ε+k−1)``), any other (loss 0, ``(k−2)/(e^ε+k−1)``);
* (ε, δ) blocks: their four-point dominating pair is ``δ``·(an output only P has) +
  ``(1−δ)``·(binary randomized response with ε) + ``δ``·(an output only Q has); the outputs only
  one side has are taken out of the design as a whole (:func:`infinite_split`: ``κ = Π(1−δ)^n``
  is the chance that no block emits one), the rest is the binary randomized response;
* discrete Gaussian ``N_Z(0, σ²)`` against ``N_Z(s, σ²)``: the pmf on ``|x| ≤ W`` from Arb's theta
  function (:class:`~exactdp.certify.dgball.DGBall`), loss ``(s² − 2sx)/(2σ²)``; the P-mass beyond
  the window (``count·P(|X| > W)``, union bound) is *left out* and bounded.

The groups' grids are put on one grid ``C + g·K`` (``g`` the gcd of the steps, K an integer, so
equal losses are compared exactly as integers): by one Arb polynomial product when the grid is
short (:data:`MAX_GRID`) and not mostly empty (:data:`SPARSE_GAIN`), else by a sparse merge of the
groups' atoms (:data:`MAX_PRODUCTS`); beyond both the full enumeration is refused, and the
certificate meets two halves in the middle instead (:mod:`.kinds_mitm`), or refuses the design
(:class:`~exactdp.numerics.errors.UncertifiedError`, exit 3).
The Q-mass of an atom is ``e^{−v}·P`` (the likelihood ratio).  Nothing here is shared with the
engine (:mod:`exactdp.engine.finite_loss`) or the kinds' own ``loss_atoms``.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

from flint import arb, arb_poly

from exactdp.certify.balls import ball, prefix_sums, suffix_sums
from exactdp.certify.dgball import DGBall
from exactdp.mechanisms import DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError

__all__ = ["Atoms", "GroupAtoms", "group_atoms", "compose", "grid_gcd", "infinite_split", "size_bound", "fits",
           "MAX_GRID", "MAX_ATOMS", "MAX_PRODUCTS", "SPARSE_GAIN", "REMEDY"]

#: longest common grid multiplied as one Arb polynomial
MAX_GRID = 4_000_000
#: most atoms of the composed discrete part (and of one group)
MAX_ATOMS = 2_000_000
#: most products of atoms weighed by the sparse merge
MAX_PRODUCTS = 3_000_000
#: the sparse merge is taken over a grid this many times longer than its products (one product in
#: Python costs about as much as one coefficient of the Arb polynomial product and its reading)
SPARSE_GAIN = 1
REMEDY = ("run the command without --certify: the mixed route's numbers are certified Arb-ball brackets "
          "already (route 'mixed' in the --json diagnostics)")


class GroupAtoms:
    """One group's loss atoms under P: values ``c + s·i`` with P-mass ``coeffs[i]`` (balls).

    Attributes
    ----------
    c, s : Fraction
        Offset and step (s > 0) of the group's grid.
    coeffs : list of arb
    lost : arb
        A ball whose upper end bounds the P-mass left out (0 when the atoms are complete).
    """

    def __init__(self, c: Fraction, s: Fraction, coeffs: list, lost: arb | None = None):
        self.c, self.s, self.coeffs = Fraction(c), Fraction(s), list(coeffs)
        self.lost = arb(0) if lost is None else lost

    def times(self, other: GroupAtoms, tau: arb) -> GroupAtoms:
        """The atoms of the sum of two independent losses on the same step, trimmed at ``tau``."""
        p = arb_poly(self.coeffs) * arb_poly(other.coeffs)
        start, kept, dropped = trim([p[i] for i in range(p.degree() + 1)], tau)
        return GroupAtoms(self.c + other.c + self.s * start, self.s, kept, self.lost + other.lost + dropped)

    def power(self, n: int, tau: arb) -> GroupAtoms:
        """The loss atoms of ``n`` independent copies (binary powering, each product trimmed at
        ``tau``: a configuration left out of a factor is left out of the product, union bound)."""
        if n == 1:
            return self
        if (len(self.coeffs) - 1) * n + 1 > 16 * MAX_ATOMS:
            raise UncertifiedError(f"--certify: {n} copies of one mechanism have {(len(self.coeffs) - 1) * n + 1:.3g} "
                                   f"loss atoms (at most {16 * MAX_ATOMS:.3g} before trimming); {REMEDY}")
        out: GroupAtoms | None = None
        base: GroupAtoms = self
        while n:
            if n & 1:
                out = base if out is None else out.times(base, tau)
            n >>= 1
            if n:
                base = base.times(base, tau)
        assert out is not None
        if len(out.coeffs) > MAX_ATOMS:
            raise UncertifiedError(f"--certify: copies of one mechanism keep {len(out.coeffs):.3g} loss atoms (at most "
                                   f"{MAX_ATOMS:.3g}); {REMEDY}")
        return out


def trim(coeffs: list, tau: arb) -> tuple[int, list, arb]:
    """``(start, kept, dropped)``: the coefficients with those at either end whose ball is
    certainly below ``tau`` removed (the first kept is at ``start``), and a ball above their sum."""
    lo, hi = 0, len(coeffs)
    while hi - lo > 1 and coeffs[lo] < tau:
        lo += 1
    while hi - lo > 1 and coeffs[hi - 1] < tau:
        hi -= 1
    dropped = arb(0)
    for x in coeffs[:lo] + coeffs[hi:]:
        dropped += x.upper()
    return lo, coeffs[lo:hi], dropped


def _exp_q(q: Fraction) -> arb:
    return ball(q).exp()


def _dlaplace(scale: Fraction, shift: int) -> GroupAtoms | None:
    m = abs(int(shift))
    if m == 0:
        return None
    b = Fraction(scale)
    r = _exp_q(-1 / b)
    c = (1 - r) / (1 + r)  # = tanh(1/(2b)), the pmf's normaliser
    left = c / (1 - r)  # Σ_{x ≤ 0} c r^{-x}: loss +m/b
    right = c * r**m / (1 - r)  # Σ_{x ≥ m} c r^x: loss −m/b
    # ascending loss: index i ↔ output x = m − i for 0 < i < m (loss (2i − m)/b)
    inner = [c * r ** (m - i) for i in range(1, m)]
    return GroupAtoms(Fraction(-m) / b, Fraction(2) / b, [right, *inner, left])


def _rr(eps: Fraction, k: int) -> GroupAtoms | None:
    e = Fraction(eps)
    if e == 0:
        return None
    ee = _exp_q(e)
    z = ee + (k - 1)
    if k == 2:
        return GroupAtoms(-e, 2 * e, [1 / z, ee / z])
    return GroupAtoms(-e, e, [1 / z, arb(k - 2) / z, ee / z])


def _dgauss(sigma2: Fraction, shift: int, count: int, nats: float) -> GroupAtoms | None:
    s = abs(int(shift))
    if s == 0:
        return None
    dg = DGBall(Fraction(sigma2))
    W = dg.width(nats + math.log(max(count, 1)))
    if 2 * W + 1 > MAX_ATOMS:
        raise UncertifiedError(f"--certify: a discrete Gaussian of σ² = {float(sigma2):.4g} needs {2 * W + 1:.3g} "
                               f"loss atoms at this depth (at most {MAX_ATOMS:.3g}); {REMEDY}")
    poly = dg.pmf_poly(W)
    s2 = Fraction(sigma2)
    # ascending loss (s² − 2|s|x)/(2σ²) ↔ x = W − i, and the pmf is even: coefficient i of the poly
    return GroupAtoms(Fraction(s * s - 2 * s * W) / (2 * s2), Fraction(s) / s2,
                      [poly[i] for i in range(2 * W + 1)], dg.outside_mass(W))


def level(nats: float) -> arb:
    """The trimming level of a window depth: ``e^{−nats−24}`` (the trims' total stays near ``e^{−nats}``)."""
    return (-arb(nats + 24)).exp()


def group_atoms(mech, count: int, nats: float) -> GroupAtoms | None:
    """The loss atoms of ``count`` copies of one mechanism (None: the loss is 0), their tails
    below :func:`level` left out.

    Raises
    ------
    UncertifiedError
        For a kind this certificate does not enumerate, or beyond the budgets.
    """
    name = type(mech).__name__
    if isinstance(mech, DiscreteGaussian):
        one = _dgauss(mech.sigma2, mech.shift, count, nats)
    elif name == "DiscreteLaplace":
        one = _dlaplace(mech.scale, mech.shift)
    elif name == "RandomizedResponse" and isinstance(getattr(mech, "epsilon", None), (Fraction, int)):
        one = _rr(mech.epsilon, mech.k)
    elif name == "ApproxDP":
        one = _rr(mech.epsilon, 2)  # (its one-sided outputs: infinite_split)
    elif name == "RandomizedResponseNoise":
        raise UncertifiedError(f"--certify: no independent certificate for randomized response by its noise parameter "
                               f"(p = {mech.p}, k = {mech.k}): its loss ±log {mech.ratio} is irrational, and this "
                               f"certificate enumerates exact rational losses only; what would work: "
                               f"RandomizedResponse with its exact ε where one is meant, or: {REMEDY}")
    elif name == "Laplace":
        raise UncertifiedError("--certify: no independent certificate for the continuous Laplace ('laplace'): its loss "
                               "has a density, and this certificate enumerates atoms (it has no closed form of its own "
                               f"for that density yet); what would work: a discrete Laplace, or: {REMEDY}")
    else:
        raise UncertifiedError(f"--certify: no independent certificate for the mechanism kind "
                               f"{getattr(mech, 'kind', name)!r} (as given: an exact rational loss is needed) yet; "
                               f"{REMEDY}")
    return None if one is None else one.power(int(count), level(nats))


def infinite_split(groups) -> tuple[arb, arb]:
    """``(κ, p∞)``: the chance ``Π(1 − δ)^n`` that no (ε, δ) block emits an output only P has
    (equally: only Q has), and ``1 − κ``, as balls (log1p/expm1: no cancellation)."""
    s = arb(0)
    for mech, count in groups:
        if type(mech).__name__ == "ApproxDP" and mech.delta:
            s += int(count) * (-ball(mech.delta)).log1p()
    return s.exp(), -s.expm1()


def grid_gcd(a: Fraction, b: Fraction) -> Fraction:
    """The largest rational step g with a/g and b/g integers."""
    den = a.denominator * b.denominator // math.gcd(a.denominator, b.denominator)
    return Fraction(math.gcd(a.numerator * (den // a.denominator), b.numerator * (den // b.denominator)), den)


class Atoms:
    """The composed discrete part: distinct loss values ``C + g·K`` (``keys`` K ascending) with
    P- and Q-mass balls, their suffix and prefix sums, and the left-out P-mass ``lost``."""

    def __init__(self, C: Fraction, g: Fraction, keys: list, P: list, lost: arb):
        self.C, self.g, self.keys, self.P = Fraction(C), Fraction(g), keys, P
        self.lost = lost
        self.lost_up = lost.upper()
        cb, gb = ball(self.C), ball(self.g)
        self.Q = [p * (-(cb + gb * k)).exp() for p, k in zip(P, keys)]
        self.SP, self.SQ = suffix_sums(P), suffix_sums(self.Q)
        self.PP = prefix_sums(P)

    def __len__(self) -> int:
        return len(self.keys)

    def value(self, i: int) -> Fraction:
        return self.C + self.g * self.keys[i]

    def vball(self, i: int) -> arb:
        return ball(self.C) + ball(self.g) * self.keys[i]

    def above(self, t: Fraction) -> int:
        """The first index whose value is > t."""
        return bisect.bisect_right(self.keys, math.floor((Fraction(t) - self.C) / self.g))

    def at_least(self, t: Fraction) -> int:
        """The first index whose value is ≥ t."""
        return bisect.bisect_left(self.keys, math.ceil((Fraction(t) - self.C) / self.g))


def _span(parts: list) -> int:
    g = parts[0].s
    for p in parts[1:]:
        g = grid_gcd(g, p.s)
    return sum(int(p.s / g) * (len(p.coeffs) - 1) for p in parts) + 1


def size_bound(parts: list) -> int:
    """An upper bound of the number of distinct loss atoms of the sum of the groups ``parts``:
    the length of their common grid, or the product of their atom counts."""
    if not parts:
        return 1
    return min(_span(parts), math.prod(len(p.coeffs) for p in parts))


def _weight(parts: list) -> int:
    """An upper bound of the products of atoms the sparse merge weighs (0: beyond its budgets)."""
    acc, weighed = 1, 0
    for n in sorted(len(p.coeffs) for p in parts):
        weighed += acc * n
        acc *= n
    return weighed if weighed <= MAX_PRODUCTS and acc <= MAX_ATOMS else 0


def fits(parts: list) -> bool:
    """Whether :func:`compose` is certainly within its budgets on ``parts`` (a short common grid,
    or a sparse merge whose products, bounded by the atom counts, stay within :data:`MAX_PRODUCTS`)."""
    return not parts or _span(parts) <= MAX_GRID or _weight(parts) > 0


def compose(parts: list, tau: arb | None = None) -> Atoms:
    """The atoms of the sum of independent groups (:class:`GroupAtoms`) on one exact grid
    (atoms certainly below ``tau`` at the ends of the grid, or anywhere in the sparse merge, left out)."""
    tau = arb(0) if tau is None else tau
    if not parts:
        return Atoms(Fraction(0), Fraction(1), [0], [arb(1)], arb(0))
    g = parts[0].s
    for p in parts[1:]:
        g = grid_gcd(g, p.s)
    C = sum((p.c for p in parts), Fraction(0))
    lost = sum((p.lost for p in parts), arb(0))
    strides = [int(p.s / g) for p in parts]
    span = sum(m * (len(p.coeffs) - 1) for m, p in zip(strides, parts))
    weight = _weight(parts)
    if span + 1 <= MAX_GRID and not 0 < SPARSE_GAIN * weight <= span:  # (a mostly empty grid: merge)
        # coarse steps first: the product stays on a coarse grid (short) as long as it can
        poly, gp, first = arb_poly([1]), Fraction(0), 0
        for p in sorted(parts, key=lambda q: -q.s):
            gn = p.s if gp == 0 else grid_gcd(gp, p.s)
            if gp:
                f = int(gp / gn)
                poly, first = _stretch([poly[i] for i in range(poly.degree() + 1)], f), first * f
            poly = poly * _stretch(p.coeffs, int(p.s / gn))
            start, kept, dropped = trim([poly[i] for i in range(poly.degree() + 1)], tau)
            poly, first, gp = arb_poly(kept), first + start, gn
            lost += dropped
        keys, P = [], []
        for k in range(poly.degree() + 1):
            x = poly[k]
            if x.is_zero():
                continue
            keys.append(first + k)
            P.append(x if x > 0 else x.nonnegative_part())
        if len(keys) > MAX_ATOMS:
            raise UncertifiedError(f"--certify: the mixed design has {len(keys):.3g} distinct loss atoms (at most "
                                   f"{MAX_ATOMS:.3g}); {REMEDY}")
        return Atoms(C, g, keys, P, lost)
    acc: dict = {0: arb(1)}
    weighed = 0
    for m, p in sorted(zip(strides, parts), key=lambda mp: len(mp[1].coeffs)):
        weighed += len(acc) * len(p.coeffs)
        if weighed > MAX_PRODUCTS or len(acc) * len(p.coeffs) > 4 * MAX_ATOMS:
            raise UncertifiedError(f"--certify: the mixed design's loss values share no short grid and their "
                                   f"enumeration weighs more than {MAX_PRODUCTS:.3g} products of atoms; {REMEDY}")
        new: dict = {}
        for k, x in acc.items():
            for i, y in enumerate(p.coeffs):
                key = k + m * i
                got = new.get(key)
                new[key] = x * y if got is None else got + x * y
        acc = {}
        for key, x in new.items():
            if x < tau:
                lost += x.upper()
            else:
                acc[key] = x
    if len(acc) > MAX_ATOMS:
        raise UncertifiedError(f"--certify: the mixed design has {len(acc):.3g} distinct loss atoms (at most "
                               f"{MAX_ATOMS:.3g}); {REMEDY}")
    keys = sorted(acc)
    return Atoms(C, g, keys, [acc[k] for k in keys], lost)


def _stretch(coeffs: list, m: int) -> arb_poly:
    """The polynomial ``Σ coeffs[i] t^{m·i}``."""
    if m == 1:
        return arb_poly(coeffs)
    co = [arb(0)] * (m * (len(coeffs) - 1) + 1)
    for i, x in enumerate(coeffs):
        co[m * i] = x
    return arb_poly(co)
