"""Continuous Laplaces beside discrete Gaussians alone: the Gaussians' atoms against the Laplaces' closed form.

Without a continuous Gaussian nothing smooths the Laplaces' atoms in a Fourier inversion
(:mod:`~exactdp.accounting.laplace_beside`), and discrete Gaussians too fine for exact windows
have no common grid.  Their joint loss atoms, though, are few when the Gaussians are few and
clumpy (the discrete Gaussians' own route is then the atom sum): with ``W`` the discrete
Gaussians' centred loss noise (atoms ``a``, P-masses ``p_a``, :func:`~exactdp.engine.coarse_split.coarse_atoms`)
and ``L`` the continuous Laplaces' composed loss, independent,

    δ(ε) = E(1 − e^{θ − W − L})₊ = Σ_a p_a · D_L(θ − a),   θ = ε − ρ_G,

``D_L`` the Laplaces' exact hockey-stick (:class:`~exactdp.kinds.laplace.LaplaceLoss`, balls).
``D_L(x) = 1 − e^x`` for ``x ≤ −mμ`` (L ≥ −mμ, ``E_P e^{−L} = 1``) and 0 for ``x ≥ mμ``: only
the atoms within ``mμ`` of θ need the closed form.  For those, a certified piecewise Taylor
model of ``D_L`` (:class:`~exactdp.accounting.laplace_taylor.LaplaceTaylor`, built once,
vectorised: ~1e-13 relative) brackets every term; the terms of the widest brackets (an atom off
the model's cells, or near the top knot where D_L → 0) are then evaluated exactly in balls (in
batches) until the brackets left are below :data:`REFINE_REL` of the sum's lower end; an atom
whose float threshold is still too loose (within ~1e-7 of a knot) is evaluated at its exact
value (:meth:`LaplaceAtomsProfile._lattice_point`).  The atoms' omitted mass (the enumeration's
depth: 200, 800, 3000 nats, deeper only when needed; from 80 or 40 nats first where 200 nats
hold more than :data:`~exactdp.engine.coarse_split.MAX_ATOMS` atoms) is added to the upper end.

Error bound: every term is ``[p_lo·D_lo, p_hi·D_hi]`` (p within the enumeration's certified log
error; D a ball or the Taylor model's bracket, float ends rounded outward); the sums are ``math.fsum``
of nonnegative floats, widened by ``(n + 4)·2^{−52}`` relative.

Beside a continuous Gaussian of tiny ρ_N next to a huge ``mμ`` (``mμ ≥`` :data:`GAUSS_RATIO` sd of its
loss), the smoothed inversion (:mod:`~exactdp.accounting.laplace_beside`) cancels by ~1e7 and
refuses; when the discrete Gaussians' atoms are few (:data:`GAUSS_MAX_ATOMS`) the same sum is taken
with ``D`` the exact kernel of the Laplaces and the continuous Gaussians together
(:class:`~exactdp.kinds.laplace_gauss.LaplaceGaussLoss`, Arb quadrature), ``θ = ε − ρ_G``.  Each
term's first bracket is ``[max(0, 1 − e^x), min(1, ½erfc((x − mμ − ρ_N)/(2√ρ_N)),
1 − e^x + e^x·½erfc((−x − mμ − ρ_N)/(2√ρ_N)))]`` (``D(x) ≤ P(N > x − mμ)`` as ``L ≤ mμ``;
``D(x) = 1 − e^x + e^x E_Q(1 − e^{Z−x})₊ ≤ 1 − e^x + e^x Q(N < x + mμ)`` as ``L ≥ −mμ``, N's
Q-law ``N(−ρ_N, 2ρ_N)``; ``erfc z ≤ e^{−z²} min(1, 1/(z√π))`` for z > 0), the widest then
evaluated exactly at both float ends of ``θ − a`` (D is nonincreasing).

References: Balle & Wang (2018) and Canonne, Kamath & Steinke (2020) for the losses; the
conditioning identity as in :mod:`exactdp.engine.conditioned_profile`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import flint
import numpy as np

from exactdp.accounting.gaussian_beside import gaussian_oracle
from exactdp.accounting.laplace_beside import LAPLACE_REMEDY, LaplaceFactor
from exactdp.accounting.laplace_taylor import LaplaceTaylor
from exactdp.accounting.lattice_free import DesignTooCostly, LatticeFreeAccountant
from exactdp.engine.coarse_split import MAX_ATOMS, coarse_atoms, group_pmf, joint_atom_count
from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import complement_from_delta
from exactdp.engine.smoothed_profile import float_enclosure
from exactdp.kinds.laplace import LaplaceLoss
from exactdp.kinds.laplace_gauss import MAX_COUNT_BESIDE_GAUSS, LaplaceGaussLoss
from exactdp.mechanisms import Composition
from exactdp.numerics.exact import InputError
from exactdp.numerics.precision import EPS64

__all__ = ["LaplaceAtomsProfile", "LaplaceAtomsAccountant", "laplace_atoms_oracle", "continuous_oracle", "ROUTE",
           "DEPTHS", "GAUSS_ROUTE", "GAUSS_RATIO", "GAUSS_MAX_ATOMS",
           "atoms_beside_gauss"]

#: the oracle's route name (``MixedAccountant.gauss_route``)
ROUTE = "dg-atoms-laplace-closed-form"
#: the oracle's route name beside continuous Gaussians too narrow for the inversion
GAUSS_ROUTE = "dg-atoms-laplace-gaussian-quadrature"
#: beside continuous Gaussians, the atom sum is taken when ``mμ`` is at least this many sd
#: ``√(2ρ_N)`` of their loss (the inversion's node values cancel by ~``mμ/√(2ρ_N)``) ...
GAUSS_RATIO = 1000
#: ... and the discrete Gaussians' joint atoms at 200 nats are at most this many (one or two
#: quadratures of ~2–10 ms per atom near the threshold)
GAUSS_MAX_ATOMS = 5000
#: the depths (nats) of the discrete Gaussians' enumeration, tried in turn
DEPTHS = (200.0, 800.0, 3000.0)
#: shallower first depths, for discrete Gaussians of more than MAX_ATOMS joint atoms at 200 nats (the
#: omitted mass, ≲ e^{−depth} times the atoms' count, is on the upper end: enough for δ ≳ 1e-5 at 40 nats)
SHALLOW = (40.0, 80.0)
#: the refinement stops when the terms' brackets sum to at most this fraction of the lower end
REFINE_REL = 2e-12
#: the omitted mass must be below this fraction of the lower end (else the next depth)
OMIT_REL = 1e-12
#: exact evaluations per refinement batch (the first; doubling)
BATCH = 64
#: working precision (bits) of the closed form's balls
_PREC = 64


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _ends(b: flint.arb) -> tuple:
    """Float ends ``(lo, hi)`` of a ball in [0, 1], rounded outward."""
    lo = max(0.0, math.nextafter(float(b.lower()), -math.inf))
    hi = min(1.0, math.nextafter(float(b.upper()), math.inf))
    return lo, hi


class LaplaceAtomsProfile:
    """Certified log brackets of ``δ(θ) = E(1 − e^{θ−W−L})₊`` (module docstring).

    Parameters
    ----------
    groups : sequence of Group
        The discrete Gaussians' loss noise W (:func:`exactdp.engine.families.groups_of`).
    loss : LaplaceLoss or LaplaceGaussLoss
        The continuous Laplaces' composed loss L (with the continuous Gaussians' N: the kernel
        is then the quadrature's, module docstring).

    Raises
    ------
    DesignTooCostly
        When the discrete Gaussians' joint atoms at the first depth are more than
        :data:`~exactdp.engine.coarse_split.MAX_ATOMS`.
    """

    method = ROUTE

    def __init__(self, groups, loss: LaplaceLoss | LaplaceGaussLoss):
        self.groups = tuple(groups)
        self.loss = loss
        n = joint_atom_count(self.groups, DEPTHS[0])
        #: the enumeration's depths, tried in turn (a shallower first one where 200 nats are too many atoms)
        self.depths: tuple[float, ...] = DEPTHS
        if n > MAX_ATOMS:
            fit = [d for d in SHALLOW if joint_atom_count(self.groups, d) <= MAX_ATOMS]
            if not fit:
                raise DesignTooCostly(f"the discrete Gaussians' joint atoms ({n} at {DEPTHS[0]:.0f} nats, "
                                      f"{joint_atom_count(self.groups, SHALLOW[0])} at {SHALLOW[0]:.0f}) are too many "
                                      "to sum beside continuous Laplaces without a continuous Gaussian")
            self.depths = (fit[-1],) + DEPTHS
        self._atoms: dict = {}
        ext = loss.extent
        _, up = float_enclosure([ext])
        self.ext_up = float(up[0])
        self.gauss = isinstance(loss, LaplaceGaussLoss)
        self.method = GAUSS_ROUTE if self.gauss else ROUTE
        #: exact evaluations in the first refinement batch
        self.batch = 8 if self.gauss else BATCH
        self.taylor: LaplaceTaylor | None = None
        if isinstance(loss, LaplaceGaussLoss):
            _, up = float_enclosure([ext + loss.rho, loss.rho])
            self._c_up = float(up[0])  # mμ + ρ_N, rounded up
            self._r_up = 2 * math.nextafter(math.sqrt(float(up[1])), math.inf)  # 2√ρ_N, rounded up
        else:
            self.taylor = LaplaceTaylor(loss)  # (the terms' first brackets)

    @property
    def nodes_kept(self) -> int:
        return int(self._level(self.depths[0]).value_dn.size)

    def _level(self, depth: float):
        if depth not in self._atoms:
            self._atoms[depth] = coarse_atoms(self.groups, depth)
        return self._atoms[depth]

    def _exact(self, x_dn: float, x_up: float) -> tuple:
        """Float ends of D_L over ``[x_dn, x_up]`` (exact binary rationals; D is nonincreasing)."""
        lo_f, hi_f = Fraction(x_dn), Fraction(x_up)
        old = flint.ctx.prec
        try:
            flint.ctx.prec = _PREC + 16
            tb = _q(lo_f).union(_q(hi_f))
            b = self.loss.delta(lo_f, hi_f, tb, _PREC)
        finally:
            flint.ctx.prec = old
        return _ends(b)

    def _gauss_brackets(self, x_dn, x_up) -> tuple:
        """First brackets ``(lo, hi)`` of ``D_{L+N}`` over ``[x_dn, x_up]`` (module docstring),
        float ends rounded outward."""
        def erfc_half_up(z):  # ½erfc(z) ≤ ½e^{−z²}min(1, 1/(z√π)) for z > 0, else ≤ 1
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                zp = np.maximum(z, 0.0)
                b = np.exp(-(zp * zp) * (1 - 4 * EPS64)) * (1 + 8 * EPS64) / 2
                b = np.where(zp > 0, b * np.minimum(1.0, 1 / (zp * math.sqrt(math.pi)) * (1 + 8 * EPS64)), 1.0)
            return np.where(z > 0, b, 1.0)

        with np.errstate(over="ignore", invalid="ignore"):
            d_lo = np.maximum(0.0, -np.expm1(x_up) * (1 - 8 * EPS64))
            z_r = (x_dn - self._c_up) / self._r_up
            z_r = np.where(z_r > 0, z_r * (1 - 4 * EPS64), z_r)
            z_l = (-x_up - self._c_up) / self._r_up
            z_l = np.where(z_l > 0, z_l * (1 - 4 * EPS64), z_l)
            # (z_l > 0 only where x < −mμ − ρ_N < 0: there 1 − e^x > 0, rounded up)
            left = -np.expm1(x_dn) * (1 + 8 * EPS64) + np.exp(x_up) * (1 + 8 * EPS64) * erfc_half_up(z_l)
            left = np.where((z_l > 0) & np.isfinite(left), left, 1.0)
            d_hi = np.minimum(np.minimum(1.0, erfc_half_up(z_r)), left)
        return np.minimum(d_lo, d_hi), d_hi

    # ------------------------------------------------------------------ one θ
    def _one(self, th_dn: float, th_up: float, at, th_exact: Fraction | None = None, depth: float = 0.0) -> tuple:
        """``(lo, hi)``: float sums of the kept terms' ends (``th_exact``: θ exactly, inside
        ``[th_dn, th_up]``, for :meth:`_exact_values`)."""
        x_dn = np.nextafter(th_dn - at.value_up, -np.inf)
        x_up = np.nextafter(th_up - at.value_dn, np.inf)
        p_lo = np.exp(at.log_p - at.log_err) * (1 - 4 * EPS64)
        p_hi = np.exp(at.log_p + at.log_err) * (1 + 4 * EPS64)
        left = (x_up <= -self.ext_up) & (not self.gauss)  # D_L = 1 − e^x exactly (x ≤ −mμ)
        mid = np.flatnonzero(~left if self.gauss else ~left & (x_dn < self.ext_up))
        li = np.flatnonzero(left)
        with np.errstate(over="ignore"):
            d_lo = -np.expm1(x_up[li]) * (1 - 8 * EPS64)
            d_hi = np.minimum(-np.expm1(x_dn[li]) * (1 + 8 * EPS64), 1.0)
        lo_terms = [p_lo[li] * d_lo]
        hi_terms = [p_hi[li] * d_hi]
        if mid.size:
            if self.gauss:
                t_lo, t_hi = self._gauss_brackets(x_dn[mid], x_up[mid])
            else:
                assert self.taylor is not None
                t_lo, t_hi, _ = self.taylor.brackets(x_dn[mid], x_up[mid])  # ([0, 1] off the model's cells)
            w_lo = p_lo[mid] * t_lo
            w_hi = p_hi[mid] * t_hi
            order = np.argsort(-(w_hi - w_lo), kind="stable")
            base_lo = math.fsum(lo_terms[0].tolist())
            done = 0
            take = self.batch
            while done < order.size:
                rest_lo = w_lo[order[done:]]
                rest_hi = w_hi[order[done:]]
                s_lo = base_lo + math.fsum(w_lo[order[:done]].tolist()) + math.fsum(rest_lo.tolist())
                if math.fsum((rest_hi - rest_lo).tolist()) * (1 + 1e-9) <= REFINE_REL * s_lo:
                    break
                for i in order[done:done + take].tolist():
                    a = int(mid[i])
                    lo_a, hi_a = self._exact(float(x_dn[a]), float(x_up[a]))
                    w_lo[i] = p_lo[a] * lo_a
                    w_hi[i] = p_hi[a] * hi_a
                done += take
                take *= 2
            if th_exact is not None and not self.gauss:  # (D_{L+N} has no knots)
                self._exact_values(th_exact, mid, x_dn, x_up, p_lo, p_hi, w_lo, w_hi, base_lo, depth)
            lo_terms.append(w_lo)
            hi_terms.append(w_hi)
        lo_all = np.concatenate(lo_terms)
        hi_all = np.concatenate(hi_terms)
        grow = (lo_all.size + 4) * EPS64
        lo = math.fsum(lo_all.tolist()) * (1 - grow)
        hi = math.fsum(hi_all.tolist()) * (1 + grow)
        return lo, hi

    def _exact_values(self, th: Fraction, mid, x_dn, x_up, p_lo, p_hi, w_lo, w_hi, base_lo: float,
                      depth: float) -> None:
        """Narrow the widest terms (in place) whose float threshold ``θ − a`` is too loose (an
        atom within ~1e-7 of a Laplace knot: D_L's slope relative to its value is large there) at
        the exact threshold: the atom's exact value ``Σ_g w_g k_g`` recovered as the only lattice
        point of the enumerated ranges inside its float enclosure (:meth:`_lattice_point`; none
        found or not unique: the float bracket stays)."""
        for _ in range(4):
            width = w_hi - w_lo
            s_lo = base_lo + math.fsum(w_lo.tolist())
            if math.fsum(width.tolist()) * (1 + 1e-9) <= REFINE_REL * s_lo:
                return
            order = np.argsort(-width, kind="stable")[:BATCH]
            for i in order.tolist():
                a = int(mid[i])
                # (a ∈ [θ − x_up, θ − x_dn]: x_dn ≤ θ_dn − a_up and x_up ≥ θ_up − a_dn, rounded outward)
                v = self._lattice_point(th - Fraction(float(x_up[a])), th - Fraction(float(x_dn[a])), depth)
                if v is None:
                    continue
                lo_a, hi_a = _ends(self.loss.delta(th - v, th - v, None, _PREC))
                w_lo[i] = p_lo[a] * lo_a
                w_hi[i] = p_hi[a] * hi_a

    def _lattice_point(self, lo_q: Fraction, hi_q: Fraction, depth: float) -> Fraction | None:
        """The only ``Σ_g w_g k_g`` with each ``k_g`` in the group's enumerated range inside
        ``[lo_q, hi_q]``, or None (none, several, or more than 10⁶ candidates)."""
        ranges = self._ranges(depth)
        if math.prod(n for _, _, n in ranges[:-1]) > 10**6:
            return None
        w_last, off_last, n_last = ranges[-1]
        found = None
        for ks in itertools.product(*(range(off, off + n) for _, off, n in ranges[:-1])):
            part = sum((w * k for (w, _, _), k in zip(ranges, ks)), Fraction(0))
            k0 = math.floor((lo_q - part) / w_last)
            for k in (k0, k0 + 1):
                v = part + w_last * k
                if off_last <= k < off_last + n_last and lo_q <= v <= hi_q:
                    if found is not None and found != v:
                        return None
                    found = v
        return found

    def _ranges(self, depth: float) -> list:
        """Per group ``(w_g, first k, count)``: the integer sums of its enumeration at ``depth``
        (a superset of the atoms' coordinates: :func:`~exactdp.engine.coarse_split.coarse_atoms`)."""
        key = ("ranges", depth)
        if key not in self._atoms:
            self._atoms[key] = [(Fraction(g.weight), int(off), int(glp.size))
                                for g in self.groups for off, glp, _, _ in (group_pmf(g, depth),)]
        return self._atoms[key]

    def log_brackets(self, th_dn, th_up, exact=None) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(θ) for every θ in ``[th_dn, th_up]`` (floats;
        ``exact``: the exact θ of each, a Fraction inside the enclosure, or None)."""
        th_dn = np.atleast_1d(np.asarray(th_dn, dtype=float))
        th_up = np.atleast_1d(np.asarray(th_up, dtype=float))
        lo_out = np.full(th_dn.size, -np.inf)
        hi_out = np.zeros(th_dn.size)
        for i in range(th_dn.size):
            for depth in self.depths:
                if depth > self.depths[0] and joint_atom_count(self.groups, depth) > 4 * MAX_ATOMS:
                    break  # (the shallower level's omitted mass stays in the upper end)
                at = self._level(depth)
                lo, hi = self._one(float(th_dn[i]), float(th_up[i]), at, None if exact is None else exact[i], depth)
                om = math.exp(at.log_omitted) * (1 + 1e-12) if at.log_omitted > -745 else 5e-324
                hi = min(1.0, hi + om)
                if at.log_omitted == -math.inf or om <= OMIT_REL * lo or depth == self.depths[-1]:
                    break
            with np.errstate(divide="ignore"):
                lo_out[i] = math.log(lo) - 4 * EPS64 * (abs(math.log(lo)) + 1) if lo > 0 else -np.inf
                hi_out[i] = min(0.0, math.log(hi) + 4 * EPS64 * (abs(math.log(hi)) + 1))
        return np.minimum(lo_out, hi_out), hi_out

    def log_complement(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(θ)`` for every θ in ``[th_dn, th_up]`` (from δ's)."""
        th_dn = np.atleast_1d(np.asarray(th_dn, dtype=float))
        th_up = np.atleast_1d(np.asarray(th_up, dtype=float))
        n = th_dn.size
        lo, hi = self.log_brackets(np.concatenate([th_dn, th_up]), np.concatenate([th_dn, th_up]))
        c_lo, _ = complement_from_delta(lo[:n], hi[:n])  # (1 − δ is nondecreasing: its lower end at th_dn)
        _, c_hi = complement_from_delta(lo[n:], hi[n:])
        return np.minimum(c_lo, c_hi), c_hi


class LaplaceAtomsAccountant(LatticeFreeAccountant):
    """δ(ε), ε(δ), β(α) of discrete Gaussians composed with continuous Laplaces (one ``μ`` or several), no
    continuous Gaussian (the oracle of :class:`~exactdp.accounting.mixed.MixedAccountant`;
    the lattice-free accountant's queries on :class:`LaplaceAtomsProfile`).

    Parameters
    ----------
    composition : Composition
        The discrete Gaussians (at least one with a nonzero shift).
    loss : LaplaceLoss or LaplaceGaussLoss
        The continuous Laplaces (and continuous Gaussians).
    rel_tol : float
        Accepted for the common interface.

    Raises
    ------
    DesignTooCostly
        (an UncertifiedError) when the discrete Gaussians' atoms are too many.
    """

    def __init__(self, composition: Composition, loss: LaplaceLoss | LaplaceGaussLoss, rel_tol: float = 1e-10):
        # (not LatticeFreeAccountant.__init__: its profile is the discrete part's alone)
        self.composition = composition
        self.loss = loss
        #: the thresholds' centre θ = ε − ρ_G; the zCDP caps at ρ_G + m μ²/2 (pure ε-DP is ε²/2-zCDP)
        self.rho = composition.rho
        self.rho_cap = composition.rho + loss.zcdp + \
            (loss.rho if isinstance(loss, LaplaceGaussLoss) else 0)
        self.rel_tol = float(rel_tol)
        self.identical = False
        self.profile = LaplaceAtomsProfile(groups_of(composition), loss)
        dn, up = float_enclosure([self.rho])
        self._rho_dn, self._rho_up = float(dn[0]), float(up[0])

    @property
    def method(self) -> str:
        assert self.profile is not None
        return self.profile.method

    def log_delta_at(self, e_dn, e_up, exact=None) -> tuple:
        """As :meth:`LatticeFreeAccountant.log_delta_at`, the cap ``δ(ε) ≤ e^{−(ε−ρ)²/(4ρ)}``
        (ε ≥ ρ) at ``rho_cap`` (the thresholds' centre ρ_G is not the design's zCDP ρ)."""
        e_dn = np.asarray(e_dn, dtype=float)
        th_dn, th_up = self._thresholds(e_dn, np.asarray(e_up, dtype=float), exact)
        th = None if exact is None else [None if x is None else x - self.rho for x in exact]
        assert self.profile is not None
        lo, hi = self.profile.log_brackets(th_dn, th_up, th)
        _, up = float_enclosure([self.rho_cap])
        r = float(up[0])
        y = np.nextafter(e_dn - r, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(y > 0, -(y**2) / (4 * r) * (1 - 4 * EPS64) + 1e-15, 0.0)
        hi = np.minimum(hi, z)
        return np.minimum(lo, hi), hi


def laplace_atoms_oracle(moving: tuple, factor: LaplaceFactor, rel_tol: float) -> tuple:
    """``(accountant, route)``: the oracle of the discrete Gaussians ``moving`` (``(mechanism,
    count)`` pairs) composed with the continuous Laplaces of ``factor`` (one μ or several).

    Raises
    ------
    InputError
        When the discrete Gaussians' atoms are too many (naming the remedy,
        :data:`~exactdp.accounting.laplace_beside.LAPLACE_REMEDY`).
    """
    try:
        acc = LaplaceAtomsAccountant(Composition(moving), LaplaceLoss(factor.parts), rel_tol)
    except DesignTooCostly as exc:
        raise InputError("mechanisms", "laplace", f"{LAPLACE_REMEDY} ({exc})") from None
    return acc, acc.method


def continuous_oracle(moving: tuple, mu: Fraction, rel_tol: float, laplace: LaplaceFactor | None) -> tuple:
    """``(accountant, route)``: the oracle of the discrete Gaussians ``moving`` beside continuous
    Gaussians of total ρ = ``mu`` (and Laplaces in the inversion:
    :func:`~exactdp.accounting.gaussian_beside.gaussian_oracle`), or with ``mu = 0`` beside the
    continuous Laplaces alone (:func:`laplace_atoms_oracle`)."""
    if mu:
        if laplace is not None and atoms_beside_gauss(moving, mu, laplace):
            acc = LaplaceAtomsAccountant(Composition(moving), LaplaceGaussLoss(LaplaceLoss(laplace.parts), mu), rel_tol)
            return acc, acc.method
        return gaussian_oracle(moving, mu, rel_tol, laplace)
    assert laplace is not None
    return laplace_atoms_oracle(moving, laplace, rel_tol)


def atoms_beside_gauss(moving: tuple, mu: Fraction, laplace: LaplaceFactor) -> bool:
    """Whether the discrete Gaussians ``moving`` beside continuous Gaussians of total ρ = ``mu``
    and the Laplaces of ``laplace`` are summed atom by atom against the Laplace + Gaussian kernel
    (module docstring): at most :data:`~exactdp.kinds.laplace_gauss.MAX_COUNT_BESIDE_GAUSS`
    Laplaces, their largest loss ``Σ m_kμ_k ≥`` :data:`GAUSS_RATIO` ``√(2ρ)`` and at most
    :data:`GAUSS_MAX_ATOMS` joint atoms."""
    m = sum(c for _, c in laplace.parts)
    if m > MAX_COUNT_BESIDE_GAUSS or laplace.extent ** 2 < GAUSS_RATIO ** 2 * 2 * Fraction(mu):
        return False
    return joint_atom_count(groups_of(Composition(moving)), DEPTHS[0]) <= GAUSS_MAX_ATOMS
