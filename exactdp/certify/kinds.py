"""Certificates for designs that mix mechanism kinds: δ(ε), ε(δ) and β(α) of a Mixture in balls.

The design's discrete part is enumerated exactly (:mod:`.kind_atoms`: atoms ``v_i`` with P-mass
``p_i``, Q-mass ``q_i = e^{−v_i}p_i``, left-out P-mass ``μ_P``), its (ε, δ) blocks' one-sided
outputs split off (``κ = Π(1−δ)^n``, ``p∞ = 1 − κ``: with chance p∞ an output only P has, with
the same chance under Q one only Q has), and its continuous Gaussians composed into one loss
``N(μ, 2μ)`` under P (``N(−μ, 2μ)`` under Q), ``μ = Σ ρ``.  With ``F`` the design without the
one-sided outputs:

* **δ(ε)** ``= p∞ + κ·δ_F(ε)``, ``δ_F(ε) = Σ_i p_i·d(ε − v_i) + [0, μ_P]`` where ``d(t) =
  (1 − e^t)_+`` without continuous part (``Σ_{v_i>ε} p_i(1 − e^{ε−v_i})``: the first atoms above ε
  by ``expm1``, the rest by suffix sums) and ``d(t) = Φ((μ−t)/√(2μ)) − e^t Φ((−μ−t)/√(2μ))``
  with it (Arb's ``erfc``; atoms with ``|t| > μ + c`` summed through the bound
  ``Φ̄(x) ≤ e^{−x²/2}``, added to the ball).  Left-out configurations contribute to
  ``Σ_x (P − e^εQ)_+`` between 0 and their P-mass.
* **ε(δ)**: ``δ(·)`` is non-increasing; ``P(S) − e^εQ(S) ≤ δ(ε)`` for every event S.  Without
  continuous part, on the piece ``ε ∈ (v_{j−1}, v_j]`` with ``S = {kept, L ≥ v_j}`` plus the
  one-sided P outputs, the root of ``p∞ + κ(P(S) − e^εQ(S)) = δ`` is a lower end; the same root
  at ``δ − κμ_P`` is tried as the upper end u and *checked*: ``δ(u) ≤ δ`` on its enclosure.
  With a continuous part: ends a < b with ``δ(a) > δ ≥ δ(b)`` certified on the enclosures,
  from a secant search on ball midpoints.  ``ε(δ) = 0`` when ``δ(0) ≤ δ`` is certified.
* **β(α)** ``= κ·β_F(α/κ)`` (the outputs only Q has are rejected first, at no cost in α; the
  ones only P has never) and ``0`` for ``α ≥ κ``.  The test ``φ = 1{L < ℓ}`` (or ``≤``) has
  ``α_φ ∈ P(kept, φ) + [0, μ_P]`` and ``β_φ ∈ Q(kept, not φ) + [0, e^{−ℓ}μ_P]``; two tests
  ``α_{φ1} ≤ α ≤ α_{φ2}`` give the chord (randomised tests), an upper end; the supporting line
  ``β ≥ β_φ + e^{−ℓ}(α_φ − α)`` (Neyman–Pearson: φ minimises ``β + e^{−ℓ}α``) the lower end.
  Without continuous part the two tests ``L < v_k`` and ``L ≤ v_k`` make both ends exact.
  Beside randomized response by its noise parameter (loss ``V + n log R``) the tests sit at
  rational ℓ just either side of the α-quantile (:func:`.kinds_noise.threshold_tests`).

A discrete design beyond the full enumeration's budgets (:func:`~.kind_atoms.fits`) is met in the
middle instead (:mod:`.kinds_mitm`, method :data:`MITM_METHOD`): two halves of its groups, each
enumerated on its own exact grid, the side of every pair decided in integers.

Each query runs at the precision levels of :data:`LEVELS` (Arb bits, depth of the discrete
Gaussians' windows in nats) until the enclosure is narrower than ``rel_width``.  Nothing is
shared with the mixed route (:mod:`exactdp.accounting.mixed`, :mod:`exactdp.engine.finite_loss`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from exactdp.certify import kinds_cells, kinds_mitm, kinds_noise, kinds_plan
from exactdp.certify.balls import ball, endpoints, interval, precision
from exactdp.certify.kind_atoms import REMEDY, Atoms, compose, fits, group_atoms, infinite_split, level
from exactdp.certify.kinds_cells import Cells
from exactdp.certify.kinds_mitm import Pairs
from exactdp.certify.result import Enclosure
from exactdp.numerics.errors import InputError, UncertifiedError
from exactdp.numerics.exact import fraction_str, to_fraction

__all__ = ["KindsCertifier", "METHOD", "MITM_METHOD", "LEVELS"]

METHOD = "arb/kinds-enumeration"
#: the method of the meet in the middle over two halves of the groups (:mod:`.kinds_mitm`)
MITM_METHOD = "arb/kinds-mitm"
#: whether a discrete part beyond :func:`~exactdp.certify.kind_atoms.fits` is met in the middle
#: (False: the full enumeration only, as before it; the benchmark's "before")
USE_MITM = True
#: continuous Gaussians beside a discrete part beyond the full enumeration: "auto" sums the Gaussian's
#: closed form over cells (:mod:`.kinds_cells`), "always" does so for every such design (tests), "never"
#: refuses them (as before it; the benchmark's "before")
CELLS = "auto"
#: (Arb precision in bits, nats of the discrete Gaussians' windows) of the attempts
LEVELS = ((128, 760.0), (256, 1100.0), (512, 1500.0))
#: deepest window (nats) the δ query goes to when its left-out mass is not small beside δ
MAX_NATS = 2.0e6
#: atoms above ε taken one by one (expm1) before the suffix sums
_NEAR = 4
_LN2 = math.log(2.0)


def _unit(b: arb) -> arb:
    return b.max(arb(0)).min(arb(1))


def _hi(x: arb) -> Fraction:
    return endpoints(x)[1]


def _lo(x: arb) -> Fraction:
    return endpoints(x)[0]


def _dyadic(x: Fraction, bits: int) -> Fraction:
    """A dyadic rational within ``2^{−bits}`` (relative) of x."""
    if x == 0:
        return x
    k = bits - (abs(x).numerator.bit_length() - abs(x).denominator.bit_length())
    return Fraction(round(x * 2**k), 2**k) if k >= 0 else Fraction(round(x / 2**-k) * 2**-k)


def _between(lo: arb, hi: arb) -> arb:
    """The ball holding ``[lower end of lo, upper end of hi]``."""
    return interval(lo.lower(), hi.upper())


class KindsCertifier:
    """Ball-arithmetic enclosures for a :class:`~exactdp.kinds.Mixture` (module docstring).

    Parameters
    ----------
    design : Mixture
    rel_width : float
        Target relative width (default 1e-14); the narrowest enclosure is returned otherwise.
    levels : tuple of (int, float)

    Raises
    ------
    UncertifiedError
        (from the queries) for a kind it does not enumerate, or a design beyond its budgets.
    """

    method = METHOD
    tail_method = "kinds-enumeration"

    def __init__(self, design, *, rel_width: float = 1e-14, levels=LEVELS):
        from exactdp.kinds.mixture import Mixture

        if not isinstance(design, Mixture):
            raise InputError("design", design, "expected an exactdp.Mixture")
        self.design = design
        self.rel_width = float(rel_width)
        self.levels = tuple(levels)
        from exactdp.kinds.gaussian import Gaussian

        for m, _ in design.continuous:
            if type(m) is not Gaussian:
                raise UncertifiedError(f"--certify: no independent certificate for the continuous mechanism kind "
                                       f"{getattr(m, 'kind', type(m).__name__)!r} yet; run the command without "
                                       f"--certify: the mixed route's numbers are certified Arb-ball brackets already")
        self.mu = sum((Fraction(m.rho) * c for m, c in design.continuous), Fraction(0))
        discrete = tuple((m, c) for m, c in design.groups if (m, c) not in design.continuous)
        noise = tuple((m, c) for m, c in discrete if type(m).__name__ == kinds_noise.KIND)
        self.discrete = tuple(g for g in discrete if g not in noise)
        #: the net count of the ±log R steps of randomized response by its noise parameter (None: none)
        self.noise = kinds_noise.net_counts(noise) if noise else None
        if self.noise is not None and self.mu:
            raise UncertifiedError("--certify: randomized response by its noise parameter beside continuous "
                                   "Gaussians: this certificate's Gaussian closed form takes rational thresholds only; "
                                   f"what would work: either kind without the other, or: {REMEDY}")

        self._atoms: dict = {}
        self._meet: bool | None = None
        self._cells: bool | None = None
        self._group_key: tuple | None = None
        self._group_parts: list = []

    def finest(self) -> KindsCertifier:
        """The same design at every level, returning the narrowest enclosure (shares the atoms)."""
        other = KindsCertifier(self.design, rel_width=0.0, levels=self.levels)
        other._atoms, other._meet, other._cells = self._atoms, self._meet, self._cells
        return other

    @property
    def full_method(self) -> str:
        return METHOD + ("+gaussian-erfc" if self.mu else "") + ("+net-count" if self.noise is not None else "")

    # -- machinery ----------------------------------------------------------------------
    def atoms(self, prec: int, nats: float) -> tuple[Atoms | Pairs, arb, arb]:
        """``(atoms, κ, p∞)`` at this precision and window depth (the last set is cached): the
        full enumeration, or two halves met in the middle (:class:`~.kinds_mitm.Pairs`) for a
        discrete design beyond the full enumeration's budgets."""
        key = (prec, nats)
        if key not in self._atoms:
            self._atoms.clear()
            with precision(prec):
                parts = self._parts(prec, nats)
                kappa, p_inf = infinite_split(self.discrete)
                self._atoms[key] = (self._compose(parts, nats, prec), kappa, p_inf)
        return self._atoms[key]

    def meets(self) -> bool:
        """Whether the discrete part is met in the middle: it is beyond the full enumeration's
        budgets (:func:`~.kind_atoms.fits`) at the first level's window depth, and has no
        continuous Gaussian beside it (decided once)."""
        if self._meet is None:
            prec, nats = self.levels[0]
            with precision(prec):
                parts = self._parts(prec, nats)
            self._meet = USE_MITM and not self.mu and self.noise is None and len(parts) >= 2 and not fits(parts)
        return self._meet

    def _parts(self, prec: int, nats: float) -> list:
        """The groups' atoms at this precision and depth (the last set is kept: :meth:`meets` and the
        first level share it)."""
        if self._group_key != (prec, nats):
            self._group_parts = [a for a in (group_atoms(m, c, nats) for m, c in self.discrete) if a is not None]
            self._group_key = (prec, nats)
        return self._group_parts

    def _window(self, prec: int, nats: float) -> float:
        """The window depth a query starts from: the level's, or for the meet in the middle and beside
        continuous Gaussians the depth that leaves out ``2^{−prec/2}`` of an O(1) value (the queries
        deepen it for small values): the halves' atoms grow with the depth as a power of half their
        groups' number, and beside a Gaussian every joint atom costs an ``erfc`` per evaluation."""
        return min(nats, (prec // 2) * _LN2 + 24.0) if self.meets() or self.cells() or self.mu else nats

    def cells(self) -> bool:
        """Whether the continuous Gaussians are summed over cells (:mod:`.kinds_cells`): beside a
        discrete part beyond the full enumeration's budgets at the first level's depth (decided once)."""
        if self._cells is None:
            prec, nats = self.levels[0]
            with precision(prec):
                parts = self._parts(prec, nats)
            self._cells = bool(self.mu and parts and self.noise is None and
                               (CELLS == "always" or CELLS == "auto" and len(parts) >= 2 and not fits(parts)))
        return self._cells

    def _compose(self, parts: list, nats: float, prec: int) -> Atoms | Pairs | Cells:
        tau = level(nats)
        if self.cells():
            return Cells(parts, self.mu, prec)
        if self.meets():
            try:
                halves = kinds_mitm.split(parts)
                assert halves is not None  # (meets(): at least two groups)
                return Pairs.of(halves, math.exp(-nats - 7.0) if nats < 700 else 0.0)
            except UncertifiedError as exc:
                try:
                    return compose(parts, tau)  # (the full enumeration may still fit: equal loss values merge)
                except UncertifiedError:
                    raise exc from None
        try:
            return compose(parts, tau)
        except UncertifiedError:
            if self.mu and CELLS == "auto" and len(parts) >= 2:
                return Cells(parts, self.mu, prec)
            if self.mu and USE_MITM and len(parts) >= 2:
                raise UncertifiedError(
                    "--certify: continuous Gaussians beside a discrete part beyond the full enumeration's budgets (its "
                    "groups' loss grids share no short grid): the Gaussian's closed form needs every joint atom, which "
                    f"the meet in the middle does not list; what would work: fewer such groups, or: {REMEDY}") from None
            raise

    def _depth(self, nats: float, prec: int, small: Fraction) -> float:
        """Window depth (nats) that leaves out ``2^{−prec/2}`` of ``small`` (a target δ or α)."""
        if small <= 0:
            return nats
        need = math.log(small.denominator) - math.log(small.numerator) + (prec // 2) * _LN2 + 20
        return min(MAX_NATS, max(nats, need))

    def _run(self, compute) -> Enclosure:
        best: Enclosure | None = None
        error: ArithmeticError | None = None
        for prec, nats in self.levels:
            try:
                with precision(prec):
                    enc = compute(prec, nats)
            except UncertifiedError:
                if best is not None:
                    return best
                raise
            except ArithmeticError as exc:
                error = exc
                continue
            if enc.relative_width <= self.rel_width:
                return enc
            if best is None or enc.relative_width < best.relative_width:
                best = enc
            if enc.lower_exact == 0 and enc.params.get("window_nats", 0) >= MAX_NATS:
                break  # (beyond the deepest window: a finer level would not resolve δ either)
        if best is None:
            raise UncertifiedError(f"the mixed-kinds certificate could not enclose this point ({error}); "
                                   f"run the command without --certify: the mixed route's numbers are certified "
                                   f"Arb-ball brackets already") from error
        return best

    def _enclosure(self, quantity, argument, lo: Fraction, hi: Fraction, prec, A: Atoms | Pairs,
                   **extra) -> Enclosure:
        if isinstance(A, Cells):
            params = {"tail_method": "kinds-gaussian-cells", "atoms": len(A), "grid": fraction_str(A.h),
                      "series_order": A.N}
            method = kinds_cells.METHOD
        elif isinstance(A, Pairs):
            params = {"tail_method": "kinds-mitm", "atoms": len(A.A) + len(A.B), "halves": f"{len(A.A)}x{len(A.B)}",
                      "grid": A.grid}
            method = MITM_METHOD
        else:
            params = {"tail_method": "kinds-enumeration", "atoms": len(A), "grid": fraction_str(A.g)}
            method = self.full_method
        params.update({"left_out_mass": A.lost_up.str(3, radius=False), "continuous_rho": fraction_str(self.mu),
                       **extra})
        return Enclosure(quantity, argument, lo, hi, method, prec, tuple(sorted(params.items())))

    # -- δ ----------------------------------------------------------------------------------
    def delta_f(self, A: Atoms | Pairs, e: Fraction, bits: int) -> arb:
        """A ball of δ_F(e) (kept atoms plus ``[0, μ_P]``)."""
        if isinstance(A, Cells):  # P(L > e) − e^e Q(L > e)
            kept = A.p_above(e) - ball(e).exp() * A.q_above(e)
        elif isinstance(A, Pairs):
            kept = kinds_mitm.delta_kept(A, e)
        elif self.noise is not None:  # Σ_n w_n D(e − n log R)
            eb, lr = ball(e), self.noise.log_ratio()
            kept = sum((w * kinds_noise.hockey_stick_at(A, eb - n * lr) for n, w in self.noise.items()), arb(0))
        else:
            kept = self._delta_smooth(A, e, bits) if self.mu else self._delta_discrete(A, e)
        return kept + interval(arb(0), A.lost_up)

    @staticmethod
    def _delta_discrete(A: Atoms, e: Fraction) -> arb:
        j = A.above(e)
        n = len(A)
        eb = ball(e)
        s = arb(0)
        stop = min(n, j + _NEAR)
        for i in range(j, stop):
            s += A.P[i] * (-(eb - A.vball(i)).expm1())
        if stop < n:
            s += (A.SP[stop] - eb.exp() * A.SQ[stop]).nonnegative_part()
        return s

    def _cut(self, bits: int) -> tuple[Fraction, arb]:
        """``(c, e^{−c²/(4μ)})`` with the bound below ``2^{−bits−40}``."""
        nats = (bits + 40) * _LN2
        c = Fraction(math.ceil(math.sqrt(4 * float(self.mu) * nats) * 1024) + 1, 1024)
        return c, (-(ball(c) ** 2) / (4 * ball(self.mu))).exp()

    def _delta_smooth(self, A: Atoms, e: Fraction, bits: int) -> arb:
        """``Σ p_i d(e − v_i)`` with the continuous Gaussians' ``d``; atoms far on either side
        through the tail bound (module docstring), in the ball."""
        mu = ball(self.mu)
        root = 2 * mu.sqrt()  # √2·√(2μ)
        eb = ball(e)
        c, tail = self._cut(bits)
        for _ in range(6):
            i0 = A.at_least(e - self.mu - c)  # atoms below: t = e − v ≥ μ + c (d ≤ e^{−c²/(4μ)})
            i1 = A.at_least(e + self.mu + c)  # atoms from here: t ≤ −μ − c (d = 1 − e^t ± e^{−c²/(4μ)})
            s = arb(0)
            for i in range(i0, i1):
                t = eb - A.vball(i)
                d = ((t - mu) / root).erfc() - t.exp() * ((t + mu) / root).erfc()
                s += A.P[i] * d / 2
            far = A.PP[i0] + A.SP[i1]
            s += (A.SP[i1] - eb.exp() * A.SQ[i1]) + interval(-far * tail, far * tail)
            if (far * tail).upper() <= s.lower() * ball(Fraction(1, 2**bits)):
                break
            c, tail = 2 * c, tail**4
        return s

    def delta_ball(self, e: Fraction, prec: int, nats: float, work: int | None = None) -> arb:
        """A ball of δ(e) from the atoms at ``(prec, nats)``, computed at ``work`` bits (default prec)."""
        A, kappa, p_inf = self.atoms(prec, nats)
        with precision(work or prec):
            return p_inf + kappa * self.delta_f(A, e, (work or prec) // 2)

    def delta(self, epsilon) -> Enclosure:
        """Enclosure of δ(ε) for an exact rational ε."""
        e = to_fraction(epsilon, "epsilon")
        arg = f"epsilon={fraction_str(e)}"

        def compute(prec, nats):
            nats = self._window(prec, nats)
            A = self.atoms(prec, nats)[0]
            d = self.delta_ball(e, prec, nats)
            # the windows' left-out mass not small beside δ: deeper windows while within the budgets
            while A.lost_up > 0 and nats < MAX_NATS and not (A.lost_up * 2 ** (prec // 2) <= d.lower()):
                low = d.lower()
                deeper = 4 * nats if not low > 0 else float(-low.log().mid()) + (prec // 2) * _LN2 + 20
                try:
                    A = self.atoms(prec, min(MAX_NATS, max(deeper, 2 * nats)))[0]
                except UncertifiedError:
                    break
                nats = min(MAX_NATS, max(deeper, 2 * nats))
                d = self.delta_ball(e, prec, nats)
            return self._enclosure("delta", arg, max(_lo(d), Fraction(0)), min(_hi(d), Fraction(1)), prec, A,
                                   window_nats=round(nats, 1))

        return self._run(compute)

    # -- ε(δ) -------------------------------------------------------------------------------
    def epsilon(self, delta, hint=None) -> Enclosure:
        """Enclosure of ε(δ) = min{ε ≥ 0 : δ(ε) ≤ delta} (``hint`` is ignored)."""
        del hint
        dt = to_fraction(delta, "delta")
        if not 0 < dt < 1:
            raise InputError("delta", delta, "must lie in (0, 1)")
        arg = f"delta={fraction_str(dt)}"

        def compute(prec, nats):
            nats = self._depth(self._window(prec, nats), prec, dt)
            A, kappa, p_inf = self.atoms(prec, nats)
            if not p_inf < ball(dt):
                if p_inf.lower() >= ball(dt).upper():
                    raise InputError("delta", delta, "at or below the design's floor 1 − Π(1 − δ_i)^n_i of its "
                                                     "(ε, δ) blocks: no finite ε reaches it")
                raise ArithmeticError("the target cannot be told from the design's floor")
            if _hi(self.delta_ball(Fraction(0), prec, nats)) <= dt:
                return self._enclosure("epsilon", arg, Fraction(0), Fraction(0), prec, A)
            if isinstance(A, Pairs):
                lo, hi = kinds_mitm.epsilon_ends(A, (ball(dt) - p_inf) / kappa, prec,
                                                 lambda u: _hi(self.delta_ball(u, prec, nats)) <= dt)
            elif self.mu or self.noise is not None:
                lo, hi = self._epsilon_smooth(dt, prec, nats)
            else:
                lo, hi = self._epsilon_discrete(A, kappa, p_inf, dt, prec, nats)
            return self._enclosure("epsilon", arg, max(lo, Fraction(0)), hi, prec, A)

        return self._run(compute)

    def _epsilon_discrete(self, A: Atoms, kappa: arb, p_inf: arb, dt: Fraction, prec: int, nats: float):
        target = (ball(dt) - p_inf) / kappa  # δ_F must reach this
        tmid = target.mid()
        n = len(A)
        # the first atom j with δ_F(v_j) ≤ target (midpoints): ε(δ) ∈ (v_{j−1}, v_j]
        lo_j, hi_j = 0, n - 1
        while lo_j < hi_j:
            mid = (lo_j + hi_j) // 2
            if self._delta_discrete(A, A.value(mid)).mid() <= tmid:
                hi_j = mid
            else:
                lo_j = mid + 1
        for j in (lo_j, lo_j + 1, lo_j - 1, lo_j + 2, lo_j - 2):
            if not 0 <= j < n:
                continue
            num, den = A.SP[j] - target, A.SQ[j]
            if not (num > 0 and den > 0):
                continue
            lo = _lo((num / den).log())  # a lower end on any piece (an event's bound)
            num2 = A.SP[j] - target + A.lost_up  # δ_kept(u) ≤ target − μ_P
            if not num2 > 0:
                continue
            u = _hi((num2 / den).log())
            for k in range(4):
                uk = u + (abs(u) + 1) * Fraction(1, 2 ** max(8, prec - 24 - 16 * k)) if k else u
                if _hi(self.delta_ball(uk, prec, nats)) <= dt:
                    return lo, uk
        raise ArithmeticError("no piece of epsilon proved")

    def _epsilon_smooth(self, dt: Fraction, prec: int, nats: float):
        """Ends a < b with δ(a) > dt ≥ δ(b) proved, from a secant search on log δ (midpoints)."""
        db = ball(dt)
        stalled: list = [None]

        def g(x: Fraction) -> float:  # log δ(x) − log dt, planning only
            d = self.delta_ball(x, prec, nats, work=64)
            if d.overlaps(db):  # (the root is within this evaluation's own width: no finer planning)
                stalled[0] = x
            return float((d.mid().max(arb(10) ** -100000) / db).log())

        a, b = Fraction(0), Fraction(1)
        planned = kinds_plan.bracket(self, self.atoms(prec, nats), dt) if kinds_plan.applies(self) else None
        ga = gb = None
        if planned is not None:  # (a float64 bracket: kept only if the balls' midpoints agree with it)
            pa, pb = planned
            ga, gb = g(pa), g(pb)
            if ga > 0 >= gb:
                a, b = pa, pb
            else:
                ga = gb = None
        if ga is None or gb is None:
            ga, gb = g(a), g(b)
            if ga <= 0:
                b = a
            while gb > 0:
                a, ga, b = b, gb, 2 * b
                gb = g(b)
        stalled[0] = None
        for _ in range(200):  # Illinois on [a, b], ga > 0 ≥ gb
            if b - a <= (abs(b) + 1) * Fraction(1, 2**60) or stalled[0] is not None:
                break
            x = b - Fraction(gb) * (b - a) / Fraction(gb - ga) if ga != gb else (a + b) / 2
            x = min(max(x, a + (b - a) / 64), b - (b - a) / 64).limit_denominator(2**100)
            if not a < x < b:
                x = (a + b) / 2
            gx = g(x)
            if gx > 0:
                a, ga, gb = x, gx, gb / 2
            else:
                b, gb, ga = x, gx, ga / 2
        mid = _dyadic((a + b) / 2 if stalled[0] is None else stalled[0], prec)
        for k in range(6):
            eta = Fraction(2) ** ((abs(mid) + 1).numerator.bit_length() - (abs(mid) + 1).denominator.bit_length()
                                  - max(8, prec // 2 - 8 * k))
            lo, hi = max(mid - eta, Fraction(0)), mid + eta
            if (lo == 0 or self.delta_ball(lo, prec, nats).lower() > db) and \
                    _hi(self.delta_ball(hi, prec, nats)) <= dt:
                return lo, hi
        raise ArithmeticError("could not bracket epsilon")

    # -- β(α) -------------------------------------------------------------------------------
    def tradeoff(self, alpha, hint=None) -> Enclosure:
        """Enclosure of β = f(α), the optimal type-II error at type-I error α (``hint`` ignored)."""
        del hint
        af = to_fraction(alpha, "alpha")
        if not 0 <= af <= 1:
            raise InputError("alpha", alpha, "must lie in [0, 1]")
        arg = f"alpha={fraction_str(af)}"

        def compute(prec, nats):
            nats = self._depth(self._window(prec, nats), prec, min(af, 1 - af))
            A, kappa, _ = self.atoms(prec, nats)
            if af == 1 or ball(af) >= kappa:
                return self._enclosure("beta", arg, Fraction(0), Fraction(0), prec, A)
            if af == 0:
                return self._enclosure("beta", arg, _lo(kappa), min(_hi(kappa), Fraction(1)), prec, A)
            ab = _unit(ball(af) / kappa)
            if isinstance(A, Cells):
                tests = A.threshold_tests(ab, prec)
            elif isinstance(A, Pairs):
                tests = kinds_mitm.threshold_tests(A, ab)
            elif self.noise is not None:  # (tests at rational ℓ, the atoms ℓ − n log R does not separate as intervals)
                tests = kinds_noise.threshold_tests(A, self.noise, ab, prec)
            else:
                tests = self._tests_smooth(A, ab, prec) if self.mu else self._tests_discrete(A, ab)
            lower, upper = arb(0), arb(1)
            for (ell, a_k, b_k) in tests:  # supporting lines (kept sums: left-out mass only raises them)
                lower = lower.max((b_k + (-ball(ell)).exp() * (a_k - ab)).lower())
            full = [(a + interval(arb(0), A.lost_up), b + (-ball(ell)).exp() * interval(arb(0), A.lost_up))
                    for ell, a, b in tests]
            for (a1, b1), (a2, b2) in zip(full, full[1:]):
                if a1.upper() <= ab.lower() and ab.upper() <= a2.lower():
                    t = _unit((ab - a1) / (a2 - a1)) if a2 > a1 else arb(0)
                    upper = upper.min((b1 + (b2 - b1) * t).upper())
            for a1, b1 in full:
                if a1.upper() <= ab.lower():
                    upper = upper.min(b1.upper())
            beta = _between(kappa * lower, kappa * upper)
            return self._enclosure("beta", arg, max(_lo(beta), Fraction(0)), min(_hi(beta), Fraction(1)), prec, A)

        return self._run(compute)

    @staticmethod
    def _tests_discrete(A: Atoms, ab: arb) -> list:
        """``(ℓ, P(kept, reject), Q(kept, accept))`` of the tests ``L < v_k`` and ``L ≤ v_k``
        around the atom k with ``P(L < v_k) ≤ α ≤ P(L ≤ v_k)`` (midpoints; ends checked later)."""
        n = len(A)
        amid = ab.mid()
        lo_k, hi_k = 0, n - 1
        while lo_k < hi_k:  # the first k with P(L ≤ v_k) ≥ α
            mid = (lo_k + hi_k) // 2
            if A.PP[mid + 1].mid() >= amid:
                hi_k = mid
            else:
                lo_k = mid + 1
        out = []
        for k in range(max(0, lo_k - 1), min(n, lo_k + 2)):
            v = A.value(k)
            out.append((v, A.PP[k], A.SQ[k]))  # reject L < v_k
            out.append((v, A.PP[k + 1], A.SQ[k + 1]))  # reject L ≤ v_k
        return out

    def _tests_smooth(self, A: Atoms, ab: arb, prec: int) -> list:
        """The tests ``L < ℓ`` at ℓ just below and above the root of ``P(L < ℓ) = α`` (kept sums)."""
        mu = ball(self.mu)
        root = 2 * mu.sqrt()

        def sums(ell: Fraction) -> tuple:
            lb = ball(ell)
            a, b = arb(0), arb(0)
            for i in range(len(A)):
                v = A.vball(i)
                a += A.P[i] * ((v + mu - lb) / root).erfc()  # P(v + N(μ, 2μ) < ℓ)
                b += A.Q[i] * ((lb - v + mu) / root).erfc()  # Q(v + N(−μ, 2μ) ≥ ℓ)
            return a / 2, b / 2

        half = prec // 2
        amid = ab.mid()
        lo, hi = A.value(0) - self.mu - 1, A.value(len(A) - 1) + self.mu + 1
        for _ in range(80):
            if sums(lo)[0].mid() < amid:
                break
            lo -= 2 * (A.value(0) - lo)
        for _ in range(80):
            if sums(hi)[0].mid() > amid:
                break
            hi += 2 * (hi - A.value(len(A) - 1))
        else:
            raise ArithmeticError("alpha is within the left-out mass of 1")
        for _ in range(4 * prec):
            if hi - lo <= (abs(hi) + 1) * Fraction(1, 2 ** (half + 12)):
                break
            mid = _dyadic((lo + hi) / 2, half + 40)
            if not lo < mid < hi:
                mid = (lo + hi) / 2
            if sums(mid)[0].mid() < amid:
                lo = mid
            else:
                hi = mid
        out = []
        mid = (lo + hi) / 2
        for k in (0, 1, 2):
            eta = (abs(mid) + 1) * Fraction(1, 2 ** (half - 12 * k))
            for ell in (mid - eta, mid + eta):
                out.append((ell, *sums(ell)))
        out.sort(key=lambda t: t[0])
        return out
