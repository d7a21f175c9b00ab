"""The exact composition of finite, symmetric privacy-loss distributions, in ball arithmetic.

Every loss group of :mod:`exactdp.kinds` has finitely many rational loss values under P and
possibly an atom at +∞.  The sum of independent such losses lives on one rational grid
``v_i = offset + step·i`` (``step`` the gcd of the groups' grid steps): its P-masses are the
coefficients of the product of the groups' generating polynomials, each raised to its count
(:class:`flint.arb_poly`: balls with relative error bounds for coefficients of any
magnitude, no underflow), and ``P[L = +∞] = 1 − Π(1 − δ_g)^{n_g}``.

Every group is symmetric, so the grid is symmetric about 0 and ``Q[L = v] = P[L = −v]``:

    δ(ε) = P[L = ∞] + Σ_{v_i > ε} p_i (1 − e^{ε − v_i})
         = P[L = ∞] + Σ_{near} p_i·(−expm1(ε − v_i)) + P[L ≥ v_k] − e^ε P[L ≤ −v_k]

with the atoms just above ε taken one by one (no cancellation as ε approaches an atom) and
the rest from prefix sums.  Reference: Meiser & Mohammadi (2018), Koskela et al. (2020)
for privacy-loss distributions; here without discretisation: the grid is exact.

A grid of more than :data:`MAX_ATOMS` points (or far more points than atoms) is held sparsely
(:class:`_SparseTables`): each group's power is a ball polynomial on the group's own sub-grid,
the groups are convolved atom by atom (sums of products of balls: the same certified model),
and the tables are views over the sorted atoms (prefix and suffix sums of positive terms).
"""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction

import flint
import numpy

from exactdp.engine import float_conv
from exactdp.kinds.protocol import LossGroup, grid_step
from exactdp.numerics.errors import UncertifiedError

__all__ = ["FiniteLoss", "MAX_ATOMS", "MAX_SPARSE", "prec_ctx"]

#: the largest grid the composition enumerates densely (grid points of the summed loss)
MAX_ATOMS = 4_000_000
#: the largest number of atoms (a bound: the product of the groups' own atom counts) the sparse
#: composition takes on, beyond the dense grid's limit or where it is :data:`_SPARSE_GAIN` times smaller
MAX_SPARSE = 400_000
_SPARSE_GAIN = 64
#: beyond the float tables (precision above :data:`FLOAT_PREC`) the sparse composition is taken
#: already where the atoms are this many times fewer than the grid points: a dense ball power of
#: a grid of 10^5 points at 256 bits takes minutes (coefficients of wildly different magnitudes),
#: the sparse one at most ~2 products per atom bound (:meth:`FiniteLoss.sparse_bound`)
_SPARSE_GAIN_BALLS = 4
#: ... or where the sparse composition forms at most this many products of atoms (~1 s)
_SPARSE_PAIRS = 2_000_000
#: atoms above ε taken one by one before the prefix sums (at least; see :meth:`FiniteLoss.near`)
_NEAR = 4
#: the atoms taken one by one reach this far above ε (the prefix sums' difference then cancels
#: at most a factor (1 + e^{−1/2})/(1 − e^{−1/2}) ≈ 4.1), up to :data:`_NEAR_MAX` atoms
_NEAR_GAP = Fraction(1, 2)
_NEAR_MAX = 256
#: the float64 tables (:mod:`exactdp.engine.float_conv`) answer at precisions up to this
FLOAT_PREC = 128
#: groups with at most this many grid positions are raised to their count in balls
_SHORT = 16


class prec_ctx:
    """``with prec_ctx(bits):`` flint's working precision for the block."""

    def __init__(self, bits: int):
        self.bits = bits

    def __enter__(self):
        self.old, flint.ctx.prec = flint.ctx.prec, self.bits

    def __exit__(self, *exc):
        flint.ctx.prec = self.old


def _arb(q: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _cumulative(xs: list) -> list:
    """``[0, x0, x0 + x1, …]`` (balls)."""
    out = [flint.arb(0)]
    s = flint.arb(0)
    for x in xs:
        s += x
        out.append(s)
    return out


class _Lazy:
    """A read-only sequence of balls made on first use (``make(i)``)."""

    def __init__(self, n: int, make, owner=None):
        self.n, self.make, self.owner = n, make, owner
        self.got: dict = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> flint.arb:
        b = self.got.get(i)
        if b is None:
            if not 0 <= i < self.n:
                raise IndexError(i)
            b = self.got[i] = self.make(i)
        return b

    def __iter__(self):
        return (self[i] for i in range(self.n))


class _FloatTables:
    """The masses, prefix and suffix sums of a :class:`~exactdp.engine.float_conv.FVec` as balls:
    the float values summed exactly (integers), each ball widened by the vector's error model
    (a sum of k true masses is within ``R·S + k·A`` of the sum of the k float values)."""

    def __init__(self, vec, size: int, lattice: int, prec: int):
        if vec.length != size:
            raise UncertifiedError("internal: the float composition's length is off the grid")
        self.size, self.lattice, self.prec = size, lattice, prec
        self.x = numpy.zeros(size)
        self.x[vec.start:vec.start + len(vec.x)] = vec.x
        one_minus = 1 - vec.R
        self.r = float(vec.R / one_minus) * (1 + 2.0 ** -40)
        self.a = float(vec.A / one_minus) * (1 + 2.0 ** -40)
        ints = [int(v) for v in (vec.x * 2.0 ** float_conv.SCALE_BITS).tolist()]
        lo, hi = vec.start, vec.start + len(vec.x)
        self.pre = [0] * (lo + 1) + list(itertools.accumulate(ints))  # pre[i] = Σ_{j<i} x̂_j, i ≤ hi
        self.lo, self.hi = lo, hi
        self.top = self.pre[-1]
        self.scale = flint.arb(2) ** -float_conv.SCALE_BITS

    def _sum(self, k: int) -> int:
        """``Σ_{j<k} x̂_j · 2**SCALE_BITS`` (an integer)."""
        return self.pre[min(max(k, self.lo), self.hi)]

    def mass(self, i: int) -> flint.arb:
        if i % self.lattice if self.lattice else i:  # off the lattice of positive masses: exactly 0
            return flint.arb(0)
        return float_conv.ball(float(self.x[i]), self.r, self.a)

    def _ball_of_sum(self, s: int, k: int) -> flint.arb:
        """The ball of a sum of k true masses whose float values sum to ``s·2**−SCALE_BITS``."""
        if k <= 0:
            return flint.arb(0)
        with prec_ctx(self.prec):
            mid = flint.arb(s) * self.scale
        return mid + flint.arb(0, (self.r * float(mid.mid()) + k * self.a) * (1 + 2.0 ** -40))

    def prefix(self, i: int) -> flint.arb:
        return self._ball_of_sum(self._sum(i), i)

    def suffix(self, i: int) -> flint.arb:
        return self._ball_of_sum(self.top - self._sum(i), self.size - i)

    def candidates(self) -> list:
        """The positions whose ball is not exactly 0."""
        if self.a > 0:
            return list(range(0, self.size, self.lattice or 1))
        return [int(i) for i in numpy.flatnonzero(self.x)]

    def sequences(self) -> tuple:
        n = self.size
        return _Lazy(n, self.mass, self), _Lazy(n + 1, self.prefix), _Lazy(n + 1, self.suffix)


class _SparseTables:
    """The masses, prefix and suffix sums of sparse atoms ``{grid index: ball}`` as views on
    the grid: ``prefix[i]`` and ``suffix[i]`` are sums of the atoms below / at or above i
    (each a cumulative sum of positive balls over the sorted atoms, no subtraction)."""

    def __init__(self, atoms: dict, size: int, prec: int):
        del prec
        self.size = size
        self.idx = sorted(atoms)
        self.got = atoms
        self.pre = _cumulative([atoms[i] for i in self.idx])  # pre[j] = Σ of the first j atoms
        self.suf = _cumulative([atoms[i] for i in self.idx[::-1]])[::-1]  # suf[j] = Σ of atoms j, j+1, …

    def mass(self, i: int) -> flint.arb:
        got = self.got.get(i)
        return flint.arb(0) if got is None else got

    def prefix(self, i: int) -> flint.arb:
        return self.pre[bisect.bisect_left(self.idx, i)]

    def suffix(self, i: int) -> flint.arb:
        return self.suf[bisect.bisect_left(self.idx, i)]

    def candidates(self) -> list:
        return list(self.idx)

    def sequences(self) -> tuple:
        n = self.size
        return _Lazy(n, self.mass, self), _Lazy(n + 1, self.prefix), _Lazy(n + 1, self.suffix)


class FiniteLoss:
    """The summed loss of ``(LossGroup, count)`` groups under P (see the module docstring).

    Attributes
    ----------
    step, offset : Fraction
        The grid ``v_i = offset + step·i``, ``i = 0 … size − 1`` (symmetric: offset = −v_max).
    size : int
        Number of grid points.
    """

    def __init__(self, groups: tuple):
        self.groups = tuple(groups)
        for g, _ in self.groups:
            if not isinstance(g, LossGroup):
                raise TypeError(f"not a loss group: {g!r}")
        steps = [g.lattice_weight for g, _ in self.groups]
        self.step = grid_step([Fraction(0), *steps])
        self.offset = sum((min(g.loss_values) * c for g, c in self.groups), Fraction(0))
        top = sum((max(g.loss_values) * c for g, c in self.groups), Fraction(0))
        if top != -self.offset:
            raise UncertifiedError("the loss groups are not symmetric (internal)")
        self.size = 1 if self.step == 0 else int((top - self.offset) / self.step) + 1
        bound = self.sparse_bound()
        #: whether the atoms are held sparsely (:class:`_SparseTables`)
        self.sparse = bound <= MAX_SPARSE and (self.size > MAX_ATOMS or bound * _SPARSE_GAIN <= self.size)
        if self.size > MAX_ATOMS and not self.sparse:
            raise UncertifiedError(f"the composed loss of the non-Gaussian mechanisms has {self.size:.3g} grid atoms "
                                   f"(up to {bound:.3g} of positive mass), more than exactdp enumerates "
                                   f"({MAX_ATOMS:.0e} grid points, or {MAX_SPARSE:.0e} atoms sparsely); use fewer "
                                   f"distinct ε/scale denominators (a coarser common grid) or smaller counts")
        self.has_infinite_mass = any(g.has_infinite_mass for g, _ in self.groups)
        self._cache: dict = {}

    def _sub_grid(self, g: LossGroup) -> tuple:
        """``(n, stride)``: the group's span in grid steps plus one, and the gcd of its values'
        positions (its own sub-grid)."""
        low = min(g.loss_values)
        if not self.step:
            return 1, 0
        n = int((max(g.loss_values) - low) / self.step) + 1
        return n, math.gcd(*(int((v - low) / self.step) for v in g.loss_values))

    def sparse_bound(self) -> int:
        """An upper bound on the number of atoms of positive mass: the product over the groups
        of their power's positions on their own sub-grids (capped by the grid's size)."""
        out = 1
        for g, c in self.groups:
            n, stride = self._sub_grid(g)
            out *= c * ((n - 1) // max(stride, 1)) + 1
            if out > self.size:
                return self.size
        return out

    def floor_exact(self) -> Fraction | None:
        """``P[L = +∞] = 1 − Π(1 − δ_g)^{n_g}`` exactly (None when the rational would pass
        10^5 digits: compare the balls of :meth:`tables` then)."""
        keep = Fraction(1)
        for g, c in self.groups:
            d = getattr(g, "delta", Fraction(0)) if g.has_infinite_mass else Fraction(0)
            if d:
                if c * (d.denominator.bit_length() + d.numerator.bit_length()) > 300_000:
                    return None
                keep *= (1 - d) ** c
        return 1 - keep

    def deficit(self, prec: int) -> flint.arb:
        """A ball ``[0, D]`` above the P-mass the groups' atoms leave out (windows of
        discrete Gaussians): every δ lies in ``[δ_kept, δ_kept + D]``."""
        got = self._cache.get(("deficit", prec))
        if got is None:
            with prec_ctx(prec):
                d = sum((g.deficit(prec) * c for g, c in self.groups), flint.arb(0))
                got = self._cache[("deficit", prec)] = flint.arb(0).union(d.upper()) if not d.is_zero() else d
        return got

    def value(self, i: int) -> Fraction:
        return self.offset + self.step * i

    # ------------------------------------------------------------------ the masses
    def tables(self, prec: int) -> tuple:
        """``(masses, prefix, suffix, p_inf)`` at ``prec`` bits: the P-mass of every grid atom,
        its prefix and suffix sums (``prefix[i] = Σ_{j<i} masses[j]``, ``suffix[i] = Σ_{j≥i}
        masses[j]``, each a sum of positive terms) and ``P[L = +∞]`` (balls)."""
        got = self._cache.get(prec)
        if got is None and self.sparse:
            got = self._cache[prec] = self._build_sparse(prec)
        if got is None:
            got = self._build_float(prec) if prec <= FLOAT_PREC else None
            if got is None and prec > FLOAT_PREC and self._sparse_pays():
                got = self._build_sparse(prec)
            got = self._cache[prec] = got if got is not None else self._build(prec)
        return got

    def _sparse_pays(self) -> bool:
        """Whether the ball tables beyond the float ones are built sparsely although the grid
        fits densely (:data:`_SPARSE_GAIN_BALLS`, or at most :data:`_SPARSE_PAIRS` products of
        atoms: two discrete-Gaussian windows on coprime sub-grids fill a grid of 57,415 points,
        whose dense ball power takes 14 s at 256 bits, by 403,000 products in 0.2 s)."""
        bound = self.sparse_bound()
        return bound <= MAX_SPARSE and (bound * _SPARSE_GAIN_BALLS <= self.size or
                                        self._sparse_products() <= _SPARSE_PAIRS)

    def _sparse_products(self) -> int:
        """An upper bound on the products of atoms :meth:`_build_sparse` forms: for each group,
        the atoms so far (at most the grid's size) times the positions of its power."""
        total, atoms = 0, 1
        for g, c in self.groups:
            n, stride = self._sub_grid(g)
            positions = c * ((n - 1) // max(stride, 1)) + 1
            total += atoms * positions
            atoms = min(atoms * positions, self.size)
        return total

    def _group_coeffs(self, g: LossGroup) -> list:
        """The generating polynomial of one group on the grid (balls at the context's precision)."""
        values, masses = g.loss_atoms(flint.ctx.prec)
        v0 = values[0]
        pos = [0 if self.step == 0 else (v - v0) / self.step for v in values]
        if any(q.denominator != 1 for q in pos):  # every value must lie on the grid, exactly
            raise UncertifiedError(f"internal: a loss value of {g!r} is off the composed grid")
        coeffs: list = [flint.arb(0)] * (int(pos[-1]) + 1)
        for i, m in zip(pos, masses):
            coeffs[int(i)] += m
        return coeffs

    def _p_inf(self) -> flint.arb:
        """``P[L = +∞] = 1 − Π(1 − δ_g)^{n_g}`` at the context's precision, computed directly as
        ``−expm1(Σ n_g log1p(−δ_g))``: relative accuracy for any δ_g (the complement of the
        product would carry an absolute error of 2^−prec, and a floor of 1e-300 would be lost)."""
        s = flint.arb(0)
        for g, c in self.groups:
            if g.has_infinite_mass:
                s += (-g.infinite_mass(flint.ctx.prec)).log1p() * c
        if s.is_zero():
            return flint.arb(0)
        out = -(s.expm1())
        return out if out.lower() >= 0 else flint.arb(0).union(out.upper())

    def _build_float(self, prec: int) -> tuple | None:
        """The tables from float64 convolutions (:mod:`exactdp.engine.float_conv`), or None
        when they do not apply (over budget, or a mass without a relative bound)."""
        ops, acc = 0, (1, 1, 0)
        for g, c in self.groups:
            low = min(g.loss_values)
            n = int((max(g.loss_values) - low) / self.step) + 1 if self.step else 1
            stride = math.gcd(*(int((v - low) / self.step) for v in g.loss_values)) if self.step else 0
            got, shape = float_conv.power_ops(n, c, len(g.loss_values), max(stride, 1))
            ops += (got if n > _SHORT else 0) + float_conv.conv_ops(acc, shape)
            acc = float_conv.product_shape(acc, shape) if acc[2] else shape
        if ops > float_conv.OPS_BUDGET or not self.groups:
            return None
        with prec_ctx(prec + 2 * max(8, int(math.log2(self.size + 1)))):
            total = None
            lattice = 0  # every position of a positive mass is a multiple of this
            for g, c in self.groups:
                coeffs = self._group_coeffs(g)
                for i, m in enumerate(coeffs):
                    if i and not m.is_zero():
                        lattice = math.gcd(lattice, i)
                if len(coeffs) <= _SHORT:
                    vec = float_conv.from_balls((flint.arb_poly(coeffs) ** c).coeffs())
                else:
                    one = float_conv.from_balls(coeffs)
                    vec = None if one is None else float_conv.power(one, c)
                if vec is None:
                    return None
                vec.length = c * (len(coeffs) - 1) + 1
                total = vec if total is None else float_conv.conv(total, vec)
            assert total is not None
            p_inf = self._p_inf()
        return (*_FloatTables(total, self.size, lattice, prec).sequences(), p_inf)

    def _build_sparse(self, prec: int) -> tuple:
        """The tables from the atoms alone: each group's power on its own sub-grid (ball
        polynomials), then the groups convolved atom by atom."""
        with prec_ctx(prec + 2 * max(8, int(math.log2(self.size + 1)))):
            acc = {0: flint.arb(1)}
            for g, c in self.groups:
                values, masses = g.loss_atoms(flint.ctx.prec)
                _, stride = self._sub_grid(g)
                stride = max(stride, 1)
                pos = [0 if not self.step else (v - values[0]) / (self.step * stride) for v in values]
                if any(q.denominator != 1 for q in pos):
                    raise UncertifiedError(f"internal: a loss value of {g!r} is off the composed grid")
                coeffs: list = [flint.arb(0)] * (int(pos[-1]) + 1)
                for q, m in zip(pos, masses):
                    coeffs[int(q)] += m
                power = (flint.arb_poly(coeffs) ** c).coeffs()
                out: dict = {}
                for i, m in acc.items():
                    for j, w in enumerate(power):
                        if not w.is_zero():
                            k = i + j * stride
                            got = out.get(k)
                            out[k] = m * w if got is None else got + m * w
                acc = out
            p_inf = self._p_inf()
            return (*_SparseTables(acc, self.size, prec).sequences(), p_inf)

    def _build(self, prec: int) -> tuple:
        with prec_ctx(prec + 2 * max(8, int(math.log2(self.size + 1)))):
            total = flint.arb_poly([1])
            for g, c in self.groups:
                total *= flint.arb_poly(self._group_coeffs(g)) ** c
            masses = total.coeffs()
            masses += [flint.arb(0)] * (self.size - len(masses))
            return masses, _cumulative(masses), _cumulative(masses[::-1])[::-1], self._p_inf()

    # ------------------------------------------------------------------ δ(ε)
    def first_above(self, e: Fraction) -> int:
        """The first grid index i with ``v_i > e`` (clamped to [0, size])."""
        if self.step == 0:
            return 0 if self.offset > e else self.size
        return min(max(math.floor((e - self.offset) / self.step) + 1, 0), self.size)

    def delta(self, e_lo: Fraction, e_hi: Fraction, e_ball: flint.arb, prec: int, kept: bool = False) -> flint.arb:
        """A ball containing δ(ε) for every ε in ``[e_lo, e_hi]`` (``e_ball`` ⊇ that interval);
        ``kept``: the δ of the kept atoms alone (without the :meth:`deficit`)."""
        masses, prefix, suffix, p_inf = self.tables(prec)
        with prec_ctx(prec):
            i0, i1 = self.first_above(e_lo), self.first_above(e_hi)
            out = p_inf + 0
            for i in range(i0, i1):  # atoms inside [e_lo, e_hi]: their term lies in [0, p_i(1 − e^{e_lo − v_i})]
                hi = masses[i] * -(_arb(e_lo - self.value(i))).expm1()
                out += flint.arb(0).union(hi.upper())
            k = min(i1 + self.near, self.size)
            for i in range(i1, k):
                m = masses[i]
                if not m.is_zero():
                    out += m * -(e_ball - _arb(self.value(i))).expm1()
            if k < self.size:  # P[L ≥ v_k] − e^ε P[L ≤ −v_k]; v_k − ε ≥ near·step: little cancellation
                out += suffix[k] - e_ball.exp() * prefix[self.size - k]
            out = out.nonnegative_part() if out.lower() < 0 < out.upper() else out
            return out if kept else out + self.deficit(prec)

    @property
    def near(self) -> int:
        """How many atoms above ε :meth:`delta` takes one by one (:data:`_NEAR_GAP`)."""
        if self.step == 0:
            return _NEAR
        return min(_NEAR_MAX, max(_NEAR, math.ceil(_NEAR_GAP / self.step)))

    def atoms(self, prec: int) -> tuple:
        """``(indices, masses)`` of the grid atoms of positive mass (masses as balls)."""
        got = self._cache.get(("atoms", prec))
        if got is None:
            masses = self.tables(prec)[0]
            owner = getattr(masses, "owner", None)
            idx = owner.candidates() if owner is not None else [i for i, m in enumerate(masses) if not m.is_zero()]
            got = self._cache[("atoms", prec)] = (idx, [masses[i] for i in idx])
        return got
