"""The accountant of a :class:`~exactdp.kinds.Mixture`: discrete Gaussians beside other kinds.

The non-Gaussian groups have a finite loss distribution under P on an exact rational grid
(:class:`exactdp.engine.finite_loss.FiniteLoss`: atoms ``(v_i, p_i)`` and ``p_∞``); the
discrete-Gaussian part is answered by the planner's own route (lattice or lattice-free),
whose certified δ_G is the oracle.  By independence and symmetry of every part,

    δ(ε) = p_∞ + Σ_i p_i · δ_G(ε − v_i)

(δ_G at a negative argument is the Gaussian route's own answer there, ``1 − e^t + e^t
δ_G(−t)``; below t = −ρ, where the zCDP bound of ``e^t δ_G(−t)`` is under 1e-15 of ``1 − e^t``,
that bound is the bracket and the oracle is not asked).  The oracle is the lattice-free route
where the lattice engine's estimate per value is far above it; beside continuous Gaussians it is
δ of the discrete Gaussians and those together (:mod:`~exactdp.accounting.gaussian_beside`); the
near-deterministic ones are windows of the finite part instead (:func:`_split`).  Atoms are taken in
decreasing order of the bound ``p_i·min(1, e^{−(t−ρ)²/(4ρ)})`` (the zCDP bound of δ_G at
t = ε − v_i ≥ ρ); the rest is bounded by the sum of those bounds (certified once per ε, in
balls) and added to the upper end once it is below a thousandth of the width aimed at.  With no
Gaussian part δ(ε) is the finite sum itself.  Randomized responses by noise parameter are
summed over their net counts outside all this (:mod:`~exactdp.accounting.mixed_rr`); beside
the Gaussian oracle the irrational thresholds ``ε − b log R`` are bracketed by exact dyadic
ends, δ being nonincreasing (:meth:`MixedAccountant._rest_at`).  Every number is a ball
(:mod:`flint`), refined in precision until it is 1e-11 relative or below 1e-4000.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy

from exactdp.accounting import mixed_balls
from exactdp.accounting.base import Accountant, check_epsilon_range, sequence_values
from exactdp.accounting.laplace_atoms import continuous_oracle
from exactdp.accounting.laplace_beside import few_windows, laplace_factor
from exactdp.accounting.mixed_balls import FLOOR, PRECS, WIDTH, to_mpf
from exactdp.accounting.mixed_extremes import check_float_range
from exactdp.accounting.mixed_rr import rr_part
from exactdp.accounting.results import BracketedDelta, Diagnostics, centred
from exactdp.engine.finite_loss import FiniteLoss, prec_ctx
from exactdp.kinds.dgauss_window import GaussianWindow
from exactdp.kinds.laplace import LaplaceLoss, laplace_part
from exactdp.kinds.laplace_gauss import LaplaceGaussLoss
from exactdp.kinds.mixture import Mixture
from exactdp.kinds.protocol import grid_step
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, as_real

__all__ = ["MixedAccountant", "WIDTH", "to_mpf"]

_DPS = 60
#: beside continuous Gaussians, finite parts of more atoms are summed pruned (:meth:`MixedAccountant._pruned`)
_PRUNE_ABOVE = 256
#: the grain 2^100 of the thresholds at which the Gaussian oracle is asked beside randomized
#: responses (:meth:`MixedAccountant._rest_at`)
_GRAIN = 2**100
#: a discrete Gaussian whose window has at most this many outputs around each centre (2K + 1)
#: is windowed beside the oracle rather than put in it (:func:`_split`)
NEARDET_POSITIONS = 25
#: ... when the finite part then has at most this many atoms (the oracle is summed over them)
SPLIT_ATOMS = 100_000

def ball_of(e, prec: int) -> tuple:
    """``(lo, hi, ball)``: Fraction ends and an arb containing the exact real ε (a Fraction,
    or a callable ``f(dps) -> mpf`` accurate to its digits)."""
    if isinstance(e, Fraction):
        with prec_ctx(prec):
            return e, e, flint.arb(flint.fmpq(e.numerator, e.denominator))
    dps = int(prec * 0.302) + 10
    with mpmath.workdps(dps):
        x = e(dps)
        rad = abs(x) * mpmath.mpf(10) ** (8 - dps) + mpmath.mpf(10) ** (-dps)
        lo, hi = (Fraction(*map(int, (x - rad).as_integer_ratio())),
                  Fraction(*map(int, (x + rad).as_integer_ratio())))
    with prec_ctx(prec):
        return lo, hi, flint.arb(flint.fmpq(lo.numerator, lo.denominator)).union(
            flint.arb(flint.fmpq(hi.numerator, hi.denominator)))


def narrow(b: flint.arb) -> bool:
    """Whether a ball of δ (or β) is as narrow as aimed at."""
    if b.is_zero():
        return True
    hi = b.upper()
    return bool(hi < FLOOR) or bool(b.rad() <= hi * (WIDTH / 2))


class MixedAccountant(Accountant):
    """δ(ε), ε(δ) and β = f(α) of a :class:`~exactdp.kinds.Mixture` (module docstring).

    Parameters
    ----------
    mixture : Mixture
    rel_tol : float
        Passed to the discrete-Gaussian part's route.

    Attributes
    ----------
    finite : FiniteLoss
        The composed loss of the non-Gaussian groups.
    gauss : Accountant or None
        The discrete-Gaussian part's accountant (None without one).
    rho : Fraction
        The Gaussians' zCDP ρ (discrete and continuous), plus the continuous Laplaces' Σ mμ²/2
        when they are a factor of the oracle; no other kind is in it.
    """

    certification = "bracket"

    def __init__(self, mixture: Mixture, rel_tol: float = 1e-10):
        if not isinstance(mixture, Mixture):
            raise InputError("composition", mixture, "expected an exactdp.Mixture")
        from exactdp.accounting.plan import plan

        self.composition = mixture  # type: ignore[assignment]
        self.mixture = mixture
        dg = mixture.gaussians
        self.gauss = None
        self.gauss_route = ""
        moving = tuple((m, c) for m, c in (dg.groups if dg is not None else ()) if m.shift)
        #: the randomized responses by noise parameter (irrational losses: :mod:`~exactdp.accounting.mixed_rr`)
        self.rr, others = rr_part(mixture.others)
        self.mu = sum((m.rho * c for m, c in mixture.continuous), Fraction(0))  #: continuous Gaussians' ρ
        fin = _windowed(others, moving)  # (beside both Gaussians, the Laplaces are a factor of the oracle unless few)
        lap_in = laplace_factor(mixture.laplaces) if self.mu and moving and not few_windows(fin) else None
        fin = None if lap_in is not None else fin
        #: the continuous Laplaces' composed loss (closed form, :mod:`exactdp.kinds.laplace`), or None
        self.laplace: LaplaceLoss | LaplaceGaussLoss | None = None if lap_in else laplace_part(mixture.laplaces)
        #: no Gaussian, too fine for windows: the Laplaces in the oracle (:mod:`~exactdp.accounting.laplace_atoms`)
        self.lap_atoms = laplace_factor(mixture.laplaces) if self.laplace is not None and fin is None else None
        self.laplace, lap_in = (None, self.lap_atoms) if self.lap_atoms is not None else (self.laplace, lap_in)
        if self.laplace is not None and mixture.continuous:  # (their joint δ by quadrature: kinds/laplace_gauss)
            self.laplace = LaplaceGaussLoss(self.laplace, self.mu)
        #: the near-deterministic discrete Gaussians windowed beside the oracle (:func:`_split`)
        self.split: tuple = ()
        if fin is None:  # the Gaussian part's own route is the oracle of δ_G
            fin, self.split, moving = _split(others, moving)
            if self.mu or self.lap_atoms is not None:  # (beside continuous Gaussians or Laplaces: one oracle of all)
                self.gauss, self.gauss_route = continuous_oracle(moving, self.mu, rel_tol, lap_in)
            else:
                self.gauss, decision = plan(Composition(moving), rel_tol, None)
                self.gauss_route = decision.route
                self._prefer_free(moving, rel_tol)
        self.finite: FiniteLoss = fin
        #: the largest loss of the continuous Laplaces (0 without): the queries' search range
        self.extent = (Fraction(0) if self.laplace is None else self.laplace.extent) + \
            (Fraction(0) if self.rr is None else self.rr.extent) + (lap_in.extent if lap_in else Fraction(0))
        self.rho = (Fraction(0) if dg is None else dg.rho) + self.mu + (lap_in.rho if lap_in else Fraction(0))
        #: the ρ of the curve summed over the atoms (the oracle's, without the split's windows): its zCDP caps
        self.curve_rho = self.rho - sum((m.rho * c for m, c in self.split), Fraction(0))
        self.rel_tol = float(rel_tol)
        self.evaluations = 0
        self._g_cache: dict = {}  # threshold's key (see _gauss_sum) → ball of δ_G there
        self._rids: dict = {}  # r ∈ [0, step) of the thresholds r + j·step → its number
        self._f_cache: dict = {}  # prec → the atoms' indices and masses as floats (ordering only)

    def _prefer_free(self, moving: tuple, rel_tol: float) -> None:
        """The oracle answers hundreds of thresholds: where the lattice engine's estimate per value
        is above :data:`~exactdp.accounting.mixed_balls.ORACLE_FREE_RATIO` times the lattice-free
        route's (128 node-group evaluations per group and value), the lattice-free route answers
        instead (if it builds; its brackets aim at 2.5e-10 relative)."""
        from exactdp.accounting.plan import plan

        engine = getattr(self.gauss, "engine", None)
        if self.gauss_route != "lattice" or engine is None:
            return
        if engine.cost <= mixed_balls.ORACLE_FREE_RATIO * 128 * len(moving):
            return
        try:
            acc, decision = plan(Composition(moving), rel_tol, "lattice-free")
        except UncertifiedError:  # (its refusal of a design beyond its budget): the lattice route stays
            return
        self.gauss, self.gauss_route = acc, decision.route

    @property
    def smooth(self) -> bool:
        """Whether the queries search δ(ε) as a curve off a rational grid: a continuous part (Gaussian or
        Laplace) makes it smooth between atoms, randomized responses put its kinks at irrational ε."""
        return self._curved or self.rr is not None

    @property
    def _curved(self) -> bool:
        return bool(self.mu) or self.laplace is not None or self.lap_atoms is not None

    @property
    def method(self) -> str:
        if self.rr is not None:
            return "finite-loss+rr-trinomial" + (f"+{self._laplace_method}" if self.laplace is not None else
                                                  "" if self.gauss is None and not self.mu else
                                                  "+gaussian-erfc" if self.gauss is None else
                                                  f"+near-det-windows+{self.gauss_route}" if self.split else
                                                  f"+{self.gauss_route}")
        if self.laplace is not None:
            return f"finite-loss+{self._laplace_method}"
        if self.mu and self.gauss is None:
            return "finite-loss+gaussian-erfc"
        if self.split:
            return f"finite-loss+near-det-windows+{self.gauss_route}"
        return "finite-loss" if self.gauss is None else f"finite-loss+{self.gauss_route}"

    @property
    def _laplace_method(self) -> str:
        return "laplace-gaussian-quadrature" if isinstance(self.laplace, LaplaceGaussLoss) else "laplace-closed-form"

    @property
    def kinks(self) -> tuple | None:
        """``(offset, step)``: a rational grid holding every loss value of the whole design."""
        return None if self.rr is not None else self.rest_kinks

    @property
    def rest_kinks(self) -> tuple | None:
        """``(offset, step)``: a rational grid holding every loss value but the randomized
        responses' ``Σ b log R`` (None with a continuous Gaussian: δ is smooth)."""
        if self.mu or self.lap_atoms is not None:  # (a continuous part: δ is smooth)
            return None
        offset, steps = self.finite.offset, [self.finite.step]
        if self.laplace is not None:  # (δ is smooth between the kinks v_i + (2j − m)μ of the Laplaces' atoms)
            offset -= self.laplace.extent
            steps.append(2 * self.laplace.mu)
        if self.gauss is not None:
            for m, c in self.gauss.composition.groups:
                steps.append(Fraction(abs(m.shift)) / m.sigma2)
                offset += m.rho * c
        return offset, grid_step([Fraction(0), *steps])

    def diagnostics(self) -> Diagnostics:
        n = len(self.mixture.groups)
        return Diagnostics(method=self.method, nodes_kept=self.finite.size, nodes_total=self.evaluations,
                           lattice_scale=str(self.finite.step), n_groups=n, route="mixed")

    # ------------------------------------------------------------------ δ(ε) as a ball
    def delta_ball(self, e, prec: int = 128, kept: bool = False, once: bool = False) -> flint.arb:
        """A certified ball of δ(ε) (ε exact or ``f(dps)``), as narrow as :data:`WIDTH`
        (``kept``: of the finite part's kept atoms, without its window deficit; ``once``: at
        ``prec`` only, however wide — a decision's caller climbs the precisions itself)."""
        b = flint.arb(0)
        for p in PRECS:
            if p < prec or (once and p > prec):
                continue
            lo, hi, eb = ball_of(e, p)
            if self.rr is not None:  # (Σ_b P[b] δ_rest(ε − b·log R))
                b = self.rr.delta(eb, p, lambda lo_t, hi_t, tb, p=p: self._rest_at(lo_t, hi_t, tb, p, kept))
            elif self._curved and self.gauss is None:
                b = self._smooth(lo, hi, eb, p)
            else:
                b = self.finite.delta(lo, hi, eb, p, kept) if self.gauss is None else self._mixed(lo, hi, eb, e, p,
                                                                                                  kept)
            if narrow(b) or (self.gauss is not None and p >= 256):  # (the Gaussian part's width then dominates)
                return b
        return b

    def _rest_at(self, lo: Fraction, hi: Fraction, tb: flint.arb, prec: int, kept: bool) -> flint.arb:
        """A ball of δ of the design without its randomized responses at every threshold in
        ``[lo, hi]`` (the ball ``tb``).  With the Gaussian oracle: δ is nonincreasing, so its
        values at the exact ends, rounded outward to multiples of :data:`_GRAIN` (the thresholds
        then repeat between precisions: the oracle's answers are cached by threshold), bound it:
        ``δ(t) ∈ [δ_lo(hi'), δ_hi(lo')]``."""
        if self.gauss is None:
            return self._smooth(lo, hi, tb, prec) if self._curved else self.finite.delta(lo, hi, tb, prec, kept)
        lo2, hi2 = Fraction(math.floor(lo * _GRAIN), _GRAIN), Fraction(math.ceil(hi * _GRAIN), _GRAIN)
        with prec_ctx(prec):
            at_hi = self._mixed(hi2, hi2, flint.arb(flint.fmpq(hi2.numerator, hi2.denominator)), hi2, prec, kept)
            if lo2 == hi2:
                return at_hi
            at_lo = self._mixed(lo2, lo2, flint.arb(flint.fmpq(lo2.numerator, lo2.denominator)), lo2, prec, kept)
            return at_hi.union(at_lo)

    def _smooth(self, lo: Fraction, hi: Fraction, eb: flint.arb, prec: int) -> flint.arb:
        """``p_∞ + Σ p_i δ_N(ε − v_i) + [0, D]`` with the continuous Gaussians' curve
        ``δ_N(t) = ½erfc((t − μ)/(2√μ)) − ½e^t erfc((t + μ)/(2√μ))`` (balls)."""
        fin = self.finite
        idx, masses = fin.atoms(prec)
        if self.laplace is None and len(idx) > _PRUNE_ABOVE:  # (the atoms that matter, the rest bounded)
            return self._pruned(lo, hi, eb, prec, fin.deficit(prec), lambda ids, ms: self._erfc_sum(ids, ms, eb, prec))
        p_inf = fin.tables(prec)[3]
        with prec_ctx(prec):
            total = p_inf + fin.deficit(prec)
            if self.laplace is None:
                return total + self._erfc_sum(idx, masses, eb, prec)
            for i, m in zip(idx, masses):  # (the Laplaces' closed form D(t), exact t when ε is)
                v = fin.value(i)
                t = eb - flint.arb(flint.fmpq(v.numerator, v.denominator))
                total += m * self.laplace.delta(lo - v, hi - v, t, prec)
            return total

    def _erfc_sum(self, idx, masses, eb: flint.arb, prec: int) -> flint.arb:
        """``Σ p_i δ_N(ε − v_i)`` over the given atoms (the continuous Gaussians' closed form, balls)."""
        fin = self.finite
        with prec_ctx(prec):
            mu = flint.arb(flint.fmpq(self.mu.numerator, self.mu.denominator))
            root = 2 * mu.sqrt()
            total = flint.arb(0)
            for i, m in zip(idx, masses):
                v = fin.value(i)
                t = eb - flint.arb(flint.fmpq(v.numerator, v.denominator))
                d = (((t - mu) / root).erfc() - t.exp() * ((t + mu) / root).erfc()) / 2
                if d.lower() < 0:
                    d = d.nonnegative_part() if d.upper() > 0 else flint.arb(0)
                total += m * d
            return total

    def _mixed(self, lo: Fraction, hi: Fraction, eb: flint.arb, e, prec: int, kept: bool = False) -> flint.arb:
        """``p_∞ + D + Σ p_i δ_G(ε − v_i)`` with the pruning of the module docstring (:meth:`_pruned`;
        D the split's windows' deficit, 0 without them or with ``kept``)."""
        base = flint.arb(0) if kept else self.finite.deficit(prec)
        return self._pruned(lo, hi, eb, prec, base, lambda ids, ms: self._gauss_sum(ids, ms, lo, hi, e, prec),
                            deep=isinstance(e, Fraction))

    def _pruned(self, lo: Fraction, hi: Fraction, eb: flint.arb, prec: int, base: flint.arb, summed,
                deep: bool = True) -> flint.arb:
        """``p_∞ + base + Σ p_i δ_ρ(ε − v_i)``, δ_ρ the Gaussian part's curve (``summed(atoms,
        masses)`` its ball over the given atoms), pruned: after a first batch, the next batch is
        the shortest prefix of the order whose certified rest bound (the zCDP bound of δ_ρ,
        :meth:`_rest_bounds`) is below the goal (doubling when it cannot reach it yet); with
        ``deep``, the atoms beyond :meth:`_deep`'s cut from the prefix sums."""
        idx, masses = self.finite.atoms(prec)
        p_inf = self.finite.tables(prec)[3]
        limit, deep_part = self._deep(hi, eb, prec) if deep else (len(idx), flint.arb(0))
        order, est, rest, rest_f = self._rest_bounds(lo, prec, limit)
        n = len(order)
        with prec_ctx(prec):
            total = p_inf + base + deep_part
            # (a first batch of the atoms whose estimated bound is not negligible beside the largest)
            done, take = 0, max(1, min(32, int(numpy.count_nonzero(est >= est[0] * 1e-20)))) if n else 0
            while n:
                new = order[done:take]
                total += summed([idx[k] for k in new], [masses[k] for k in new])
                done = take
                if done == n:
                    return total
                if total.lower() > 0 and rest[done].upper() <= total.lower() * (WIDTH * 1e-3):
                    return total + flint.arb(0).union(rest[done].upper())
                goal = float(total.lower()) * (WIDTH * 1e-3 / 2) if total.lower() > 0 else 0.0
                k = int(numpy.searchsorted(-rest_f, -goal, side="left"))  # first k with rest_f[k] ≤ goal
                take = min(n, max(k, done + 1) if goal > 0 else 4 * take)
            return total

    def _deep_cut(self) -> Fraction | None:
        """A threshold ``t_c < −ρ`` with ``e^t e^{−(−t−ρ)²/(4ρ)} ≤ 1e-15·(1 − e^t)`` certified at
        t_c, hence at every t ≤ t_c (the left side decreases, the right increases); None if none
        is found."""
        if "cut" not in self._f_cache:
            cut = None
            if self.curve_rho > 0:
                t = -self.curve_rho - Fraction(1, 4)
                for _ in range(200):
                    if self._reflected(t) is not None:
                        cut = t
                        break
                    t -= Fraction(1, 4) + (-t) / 8
            self._f_cache["cut"] = cut
        return self._f_cache["cut"]

    def _deep(self, hi: Fraction, eb: flint.arb, prec: int) -> tuple:
        """``(limit, ball)``: the atoms at or beyond position ``limit`` (in index order) have
        ``t = ε − v_i ≤ t_c`` (:meth:`_deep_cut`) for every ε ≤ hi, where ``δ_G(t) ∈ [1 − e^t,
        (1 − e^t)(1 + 10⁻¹⁵)]``; their sum ``Σ p_i (1 − e^{ε − v_i}) = P[L ≥ v_k] − e^ε P[L ≤ −v_k]``
        (symmetry) comes from the prefix sums, times ``[1, 1 + 10⁻¹⁵]``."""
        fin = self.finite
        idx = fin.atoms(prec)[0]
        cut = self._deep_cut()
        if cut is None or fin.step == 0:
            return len(idx), flint.arb(0)
        k = fin.first_above(hi - cut - fin.step / 2)  # the first grid index with v_k ≥ hi − cut
        while k < fin.size and fin.value(k) < hi - cut:
            k += 1
        if k >= fin.size:
            return len(idx), flint.arb(0)
        limit = int(numpy.searchsorted(numpy.asarray(idx), k, side="left"))
        _, prefix, suffix, _ = fin.tables(prec)
        with prec_ctx(prec):
            part = suffix[k] - eb.exp() * prefix[fin.size - k]
            part = part.nonnegative_part() if part.lower() < 0 < part.upper() else part
            return limit, part * flint.arb(1).union(flint.arb(1) + flint.arb("1e-15"))

    def _rest_bounds(self, lo: Fraction, prec: int, limit: int | None = None) -> tuple:
        """``(order, est, rest, rest_f)``: the atoms (positions in :meth:`FiniteLoss.atoms`) in
        decreasing order of their estimated bound ``p_i·min(1, e^{−(t−ρ)²/(4ρ)})`` at
        ``t = ε_lo − v_i`` (``est``, floats), and ``rest[k]``, a ball ``[0, rest_f[k]]`` above
        ``Σ_{j ≥ k} p_j δ_G(ε − v_j)`` over that order (the zCDP bound of δ_G, certified in
        float64 with its roundings bounded: :func:`~exactdp.accounting.mixed_balls.zcdp_rest`)."""
        fin = self.finite
        idx, masses = fin.atoms(prec)
        if prec not in self._f_cache:
            up = numpy.array([float(m.upper()) for m in masses])
            self._f_cache[prec] = (numpy.array(idx, dtype=numpy.int64), numpy.array([float(m.mid()) for m in masses]),
                                   numpy.nextafter(up, numpy.inf))  # (float() of a ball's end may round down)
        iidx, fmass, mass_up = self._f_cache[prec]
        if limit is not None:  # (the first `limit` atoms only)
            iidx, fmass, mass_up = iidx[:limit], fmass[:limit], mass_up[:limit]
        rho = float(self.curve_rho)
        with numpy.errstate(over="ignore", under="ignore"):
            t = float(lo - fin.offset) - iidx * float(fin.step)
            cap = numpy.where(t <= rho, 1.0, numpy.exp(-((t - rho) ** 2) / (4 * rho)))
        bound = fmass * cap
        order = numpy.argsort(-bound, kind="stable")
        rest_f = mixed_balls.zcdp_rest(lo - fin.offset, fin.step, iidx, mass_up, self.curve_rho, order)
        return order, bound[order], _Rest(rest_f), rest_f

    def zcdp_upper(self, e: Fraction, prec: int = 128) -> flint.arb:
        """A ball above δ(e) from the zCDP bound of the Gaussian part alone, ``p_∞ + D +
        Σ p_i min(1, e^{−(t_i−ρ)²/(4ρ)})`` (no oracle call; with a Gaussian part: the discrete
        Gaussians' oracle, or continuous Gaussians, D the windows' deficit)."""
        if self.rr is not None:  # (the ±log R losses are not in the bound: no early decision)
            return flint.arb(0).union(flint.arb(1))
        p_inf = self.finite.tables(prec)[3]
        rest = self._rest_bounds(e, prec)[2]
        with prec_ctx(prec):
            return p_inf + self.finite.deficit(prec) + rest[0]  # (the windows' deficit: beside continuous Gaussians)

    def _gauss_sum(self, idx: list, masses: list, lo: Fraction, hi: Fraction, e, prec: int) -> flint.arb:
        """``Σ p_i δ_G(ε − v_i)`` over the given atoms (one batched call of the Gaussian route).

        For an exact ε the balls of δ_G are cached by threshold ``t = r + j·step`` (key ``(r, j)``,
        r ∈ [0, step) numbered once: integer keys, no rational arithmetic per atom).  A new
        ``t < 0`` is :meth:`_reflected` or :func:`_mirrored` from the oracle's value at ``−t``
        (asked with the positive thresholds in one batch)."""
        del lo, hi, prec
        if not idx:
            return flint.arb(0)
        fin = self.finite
        if not isinstance(e, Fraction) or fin.step == 0:
            if isinstance(e, Fraction):
                ts: list = [e - fin.value(i) for i in idx]
                keys: list = [self._key(t) for t in ts]
            else:
                ts = [_shifted(e, fin.value(i)) for i in idx]
                keys = list(range(len(ts)))
            cache = self._g_cache if isinstance(e, Fraction) else {}
            new = {k: t for k, t in zip(keys, ts) if k not in cache}
        else:
            base = e - fin.offset
            q = math.floor(base / fin.step)
            r = base - q * fin.step
            rid = self._rids.setdefault(r, len(self._rids))
            cache = self._g_cache
            keys = [(rid, q - i) for i in idx]
            new = {k: r + k[1] * fin.step for k in dict.fromkeys(keys) if k not in cache}
        if new:
            self._fill(new, cache)
        s = flint.arb(0)
        for m, k in zip(masses, keys):
            s += m * cache[k]
        return s

    def _key(self, t: Fraction) -> tuple:
        """The cache key ``(number of r, j)`` of an exact threshold ``t = r + j·step``."""
        st = self.finite.step
        if st == 0:
            return (self._rids.setdefault(t, len(self._rids)), 0)
        j = math.floor(t / st)
        r = t - j * st
        return (self._rids.setdefault(r, len(self._rids)), j)

    def _fill(self, new: dict, cache: dict) -> None:
        """The balls of δ_G at the thresholds ``new`` (key → t) into ``cache``: reflected, mirrored
        from −t, or asked of the oracle (one batch)."""
        ask: dict = {}
        neg = []
        for k, t in new.items():
            if not isinstance(t, Fraction):
                ask[k] = t
            elif t < 0:
                got = self._reflected(t)
                if got is not None:
                    cache[k] = got
                    continue
                km = self._key(-t)
                neg.append((k, t, km))
                if km not in cache:
                    ask[km] = -t
            else:
                ask[k] = t
        if ask:
            self.evaluations += len(ask)
            assert self.gauss is not None
            with prec_ctx(128):
                for k, pt in zip(ask, self.gauss.delta(list(ask.values()))):
                    cache[k] = flint.arb(pt.lower).union(flint.arb(pt.upper))
        for k, t, km in neg:
            cache[k] = _mirrored(t, cache[km])

    def _reflected(self, t: Fraction) -> flint.arb | None:
        """The ball of δ_G at ``t < −ρ`` from ``1 − e^t + e^t δ_G(−t)`` with ``δ_G(−t)`` in
        ``[0, e^{−(−t−ρ)²/(4ρ)}]`` (the zCDP bound), when that term is below 1e-15 of ``1 − e^t``
        (None otherwise): the oracle's deep tail is not needed (it is the slow end of the
        lattice-free route).  A float estimate screens first (the balls decide)."""
        if t >= -self.curve_rho or self.curve_rho == 0:
            return None
        tf, rf = float(t), float(self.curve_rho)
        if tf - (-tf - rf) ** 2 / (4 * rf) - math.log(-math.expm1(tf)) > math.log(1e-15) + 1:
            return None
        with prec_ctx(128):
            tb = flint.arb(flint.fmpq(t.numerator, t.denominator))
            r = flint.arb(flint.fmpq(self.curve_rho.numerator, self.curve_rho.denominator))
            et = tb.exp()
            base = -tb.expm1()
            extra = et * (-((-tb - r) ** 2) / (4 * r)).exp()
            if not extra.upper() <= base.lower() * 1e-15:
                return None
            return base.union(base + extra)

    # ------------------------------------------------------------------ the queries
    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (exact value or ``f(dps)`` callable), as certified brackets."""
        epsilons = sequence_values(epsilons, "epsilon")
        es = [as_real(e, "epsilon") for e in epsilons]
        check_epsilon_range(max(self.rho, Fraction(1)), es, "epsilon", shown=epsilons)
        check_float_range(self, "δ(ε)", ("finite",) if self.gauss is not None else ())  # (the oracle's zCDP caps)
        out = []
        for e in es:
            b = self.delta_ball(e)
            out.append(point_of(e, b))
        return tuple(out)

    def epsilon(self, deltas) -> tuple:
        """The smallest ε ≥ 0 with δ(ε) ≤ each target δ ∈ (0, 1), as a certified bracket."""
        from exactdp.accounting.mixed_queries import epsilon_points
        return epsilon_points(self, deltas)

    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α ∈ [0, 1], as a certified bracket (``value`` = lower end)."""
        from exactdp.accounting.mixed_queries import tradeoff_points
        return tradeoff_points(self, alphas)


class _Rest:
    """``rest[k]``: the ball ``[0, rest_f[k]]`` (made on use)."""

    def __init__(self, up: numpy.ndarray):
        self.up = up

    def __getitem__(self, k: int) -> flint.arb:
        return flint.arb(0).union(flint.arb(float(self.up[k])))


def _windowed(others: tuple, moving: tuple) -> FiniteLoss | None:
    """The finite loss of ``others`` with the discrete Gaussians ``moving`` as windows
    (:class:`~exactdp.kinds.dgauss_window.GaussianWindow`) when their common grid has at most
    :data:`~exactdp.accounting.mixed_balls.WINDOW_ATOMS` atoms; None otherwise (or when there is no Gaussian)."""
    if not moving:
        return FiniteLoss(others)
    groups = others + tuple((GaussianWindow(m, c), c) for m, c in moving)
    steps = [g.lattice_weight for g, _ in groups]
    step = grid_step([Fraction(0), *steps])
    span = sum((c * (g.span if isinstance(g, GaussianWindow) else max(g.loss_values) - min(g.loss_values))
                for g, c in groups), Fraction(0))
    if step == 0 or span / step > mixed_balls.WINDOW_ATOMS:
        return None
    return FiniteLoss(groups)


def _split(others: tuple, moving: tuple) -> tuple:
    """``(finite, windowed, oracle)``: the near-deterministic discrete Gaussians of ``moving`` (at most
    :data:`NEARDET_POSITIONS` outputs per centre: σ² ≲ 0.08, a ρ the oracle cannot bracket deep in
    its tail) as windows of the finite part (their deficit, ≤ e^{−760} relative, on the conservative
    side) if it then has ≤ :data:`SPLIT_ATOMS` atoms and a group is left for the oracle."""
    near = tuple((m, c) for m, c in moving if 2 * GaussianWindow(m, c).k + 1 <= NEARDET_POSITIONS)
    rest = tuple(g for g in moving if g not in near)
    if near and rest:
        try:
            fin = FiniteLoss(others + tuple((GaussianWindow(m, c), c) for m, c in near))
        except UncertifiedError:  # (beyond the finite part's own limits)
            fin = None
        if fin is not None and min(fin.size, fin.sparse_bound()) <= SPLIT_ATOMS:
            return fin, near, rest
    return FiniteLoss(others), (), moving


def _mirrored(t: Fraction, got: flint.arb) -> flint.arb:
    """The ball of ``δ_G(t) = −expm1(t) + e^t δ_G(−t)`` for t < 0 from the ball of δ_G(−t) (a sum
    of two nonnegative terms: no cancellation; every part is symmetric)."""
    with prec_ctx(128):
        tb = flint.arb(flint.fmpq(t.numerator, t.denominator))
        return -tb.expm1() + tb.exp() * got


def _shifted(e, v: Fraction):
    """The callable ``dps -> e(dps) − v``."""
    def f(dps):
        with mpmath.workdps(dps):
            return e(dps) - mpmath.mpf(v.numerator) / v.denominator
    return f


def point_of(e, b: flint.arb) -> BracketedDelta:
    """The :class:`BracketedDelta` of the ball ``b`` of δ(ε); refused when wider than 1e-6."""
    lo, hi = to_mpf(b, False), min(to_mpf(b, True), mpmath.mpf(1))
    lo = max(lo, mpmath.mpf(0))
    with mpmath.workdps(_DPS):
        em = mpmath.mpf(e.numerator) / e.denominator if isinstance(e, Fraction) else e(_DPS)
        if hi > FLOOR and hi - lo > 1e-6 * hi:
            raise UncertifiedError(f"δ(ε={mpmath.nstr(em, 12)}) is bracketed only in [{mpmath.nstr(lo, 6)}, "
                                   f"{mpmath.nstr(hi, 6)}]")
        est, err = centred(lo, hi)
    return BracketedDelta(em, est, err, est, mpmath.mpf(0), (), "bracket")
