"""Meet in the middle for the mixed-kinds certificate: two halves' loss atoms, never their product.

When the discrete part of a :class:`~exactdp.kinds.Mixture` has too many joint loss atoms for
:func:`~exactdp.certify.kind_atoms.compose` (its groups' grids share no short common grid and
the product of their atom counts is beyond the sparse merge's budget), the groups are split into
two halves of balanced size (:func:`split`), each half the products of its groups' atoms whose
float64 upper bound is at least a level ``τ`` (:func:`pruned`, by the same
:class:`~exactdp.certify.mitm.Pruner` as the Gaussian halves: the products that matter fill about
the inscribed ellipsoid of the box, the dropped ones' mass is bounded and left out), put on the
half's own exact grid (``a_i = C_A + g_A·K_i``, ``b_j = C_B + g_B·K_j``, Arb balls of their P- and
Q-masses, Q = e^{−v}P).  The windows and ``τ`` follow the query (:meth:`~.kinds.KindsCertifier.meets`:
``2^{−prec/2}`` of the value asked, not the full enumeration's fixed e^{−760}): any number of
incommensurate groups (decimal-variance discrete Gaussians beside discrete Laplace, randomized
response, (ε, δ) blocks) within :data:`MAX_HALF` atoms a half.  Every query is a sum over the atoms
of the smaller half A against prefix/suffix sums of B:

    P(L > t) = Σ_i p_i · Σ_{j: a_i + b_j > t} p_j,   Q(L > t) = Σ_i q_i · Σ_{j: a_i + b_j > t} q_j

and likewise ``P(L < t)``, ``P(L ≤ t)``, ``Q(L ≥ t)``.  The side of the threshold of every pair is
decided **exactly**: ``a_i + b_j > t ⇔ K_j > (t − C_A − C_B)/g_B − (g_A/g_B)·K_i``, an integer
floor (or ceiling) of a rational, then a bisection of B's integer keys — no ball ever has to
decide a side, so ties (``a_i + b_j = t`` exactly, e.g. ε = 0 with symmetric atoms) fall on the
side the query asks for.  Then, with the left-out P-mass ``μ_P`` of both halves (union bound):

* ``δ_F(ε) = P(L > ε) − e^ε Q(L > ε) + [0, μ_P]`` (pairs at ``L = ε`` add 0; the difference loses
  at most ``log2(P(L > ε)/δ_F)`` bits, and a finer level follows when the enclosure is wide);
* ε(δ): for any ``t``, the event ``{kept, L > t}`` gives ``δ_F(ε) ≥ P(L>t) − e^ε Q(L>t)``, so the
  root of that curve at the target is a lower end of ε(δ); its root at ``target − μ_P`` is an
  upper end once ``δ(u) ≤ δ`` is certified.  ``t`` comes from Newton's iteration from the left
  on these curves (each is the δ of its piece: finitely many steps land on ε(δ)'s piece);
* β(α): the two tests ``L < ℓ*`` and ``L ≤ ℓ*`` at the joint loss value ``ℓ*`` with
  ``P(L < ℓ*) ≤ α ≤ P(L ≤ ℓ*)`` (found by interpolation and bisection on ℓ, then among the
  few pair values left in the bracket), used as in :mod:`.kinds`.

Planning (which ``t``, which ``ℓ*``) uses float64 images of the atoms and of the balls' midpoints
(vectorised), or the midpoints at the working precision when the target is beyond float64's range;
only the enclosures count.
Nothing is shared with the engine (:mod:`exactdp.engine.finite_loss`, :mod:`exactdp.engine.halves`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from fractions import Fraction

import numpy as np
from flint import arb

from exactdp.certify.balls import ball, endpoints
from exactdp.certify.kind_atoms import REMEDY, Atoms, GroupAtoms, compose, grid_gcd, size_bound
from exactdp.certify.mitm import Pruner, exact_ball, float_uppers, split_halves
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import fraction_str

__all__ = ["Pairs", "split", "pruned", "delta_kept", "epsilon_ends", "threshold_tests", "MAX_HALF", "MAX_PAIRS"]

#: most atoms of one half (built as balls with their prefix/suffix sums)
MAX_HALF = 1_200_000
#: most pair values enumerated once the bracket of ℓ* holds few of them
MAX_PAIRS = 256


def split(parts: list[GroupAtoms]) -> tuple[list, list] | None:
    """Two halves of the groups with balanced atom counts (the products of the groups' counts as
    equal as the greedy rule of :func:`~exactdp.certify.mitm.split_halves` makes them), or None
    for fewer than two groups.  A half's size is known only once it is pruned (:func:`pruned`)."""
    if len(parts) < 2:
        return None
    ia, ib = split_halves([size_bound([p]) for p in parts])
    return [parts[i] for i in ia], [parts[i] for i in ib]


def pruned(parts: list[GroupAtoms], tau: float, limit: int | None = None) -> Atoms:
    """The atoms of one half: the products of its groups' atoms whose float64 upper bound is at
    least ``tau`` (:class:`~exactdp.certify.mitm.Pruner`, shared with the Gaussian halves), put on
    the half's exact grid ``C + g·K`` (``g`` the gcd of the steps, ``K = Σ (s_u/g)·i_u`` an exact
    integer) and equal keys merged.  Left out: the groups' own left-out mass plus the dropped
    products' (a float64 upper bound rounded up).

    Raises
    ------
    UncertifiedError
        When the half keeps more than ``limit`` products (default :data:`MAX_HALF`; one line:
        reason and remedy).
    """
    if not parts:
        return compose([])
    g = parts[0].s
    for p in parts[1:]:
        g = grid_gcd(g, p.s)
    strides = [int(p.s / g) for p in parts]
    wide = sum(m * (len(p.coeffs) - 1) for m, p in zip(strides, parts)) >= 2**62
    keys = np.zeros(1, dtype=object if wide else np.int64)
    P = [arb(1)]
    pruner = Pruner(tau, MAX_HALF if limit is None else limit)
    try:
        for m, p in sorted(zip(strides, parts), key=lambda mp: len(mp[1].coeffs)):
            ii, jj = pruner.step(float_uppers(p.coeffs))
            co = p.coeffs
            P = [P[i] * co[j] for i, j in zip(ii.tolist(), jj.tolist())]
            keys = keys[ii] + (jj.astype(object) if wide else jj.astype(np.int64)) * m
    except OverflowError as exc:
        raise UncertifiedError(f"--certify: the mixed design is beyond the meet in the middle: {exc} (the groups' "
                               f"atoms above e^{{{math.log(tau) if tau > 0 else -math.inf:.0f}}}); {REMEDY}") from None
    order = np.argsort(keys, kind="stable").tolist()
    klist = keys.tolist()
    out_k: list = []
    out_p: list = []
    for i in order:
        k = int(klist[i])
        if out_k and out_k[-1] == k:
            out_p[-1] += P[i]
        else:
            out_k.append(k)
            out_p.append(P[i])
    lost = sum((p.lost for p in parts), arb(0)) + exact_ball(pruner.lost)
    return Atoms(sum((p.c for p in parts), Fraction(0)), g, out_k, out_p, lost)


def _exact_mid(x: arb) -> Fraction:
    return endpoints(x.mid())[0]


def _round(x: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
    """A short dyadic rational strictly inside (lo, hi) near x (x itself when none is found)."""
    w = hi - lo
    k = max(0, 8 - (w.numerator.bit_length() - w.denominator.bit_length()))
    for kk in (k, k + 8, k + 32):
        y = Fraction(round(x * 2**kk), 2**kk)
        if lo < y < hi:
            return y
    return x


class Pairs:
    """The joint loss atoms of two halves ``A`` (the smaller, iterated) and ``B`` (searched).

    Attributes
    ----------
    A, B : Atoms
    lost : arb
        Left-out P-mass of both halves (a ball above it).
    """

    def __init__(self, A: Atoms, B: Atoms):
        if len(A) > len(B):
            A, B = B, A
        self.A, self.B = A, B
        self.lost = A.lost + B.lost
        self.lost_up = self.lost.upper()
        r = A.g / B.g
        self._rn, self._rd = r.numerator, r.denominator

    @classmethod
    def of(cls, halves: tuple[list, list], tau: float) -> Pairs:
        """Each half's products above ``tau`` (:func:`pruned`); refuses beyond :data:`MAX_HALF`."""
        return cls(*(pruned(h, tau) for h in halves))

    def __len__(self) -> int:
        return len(self.A) * len(self.B)

    def floats(self) -> tuple:
        """float64 images for planning: A's values, P and Q; B's values and its P-suffix, Q-suffix and
        P-prefix sums (midpoints)."""
        if not hasattr(self, "_floats"):
            def f(xs):
                return np.array([float(x.mid()) for x in xs])

            A, B = self.A, self.B
            av = float(A.C) + float(A.g) * np.array(A.keys, dtype=float)
            bv = float(B.C) + float(B.g) * np.array(B.keys, dtype=float)
            self._floats = (av, f(A.P), f(A.Q), bv, f(B.SP), f(B.SQ), f(B.PP))
        return self._floats

    def plan(self, t: float) -> tuple[float, float, float]:
        """float64 estimates of ``(P(L > t), Q(L > t), P(L ≤ t))`` (planning only)."""
        av, pa, qa, bv, sp, sq, pp = self.floats()
        j = np.searchsorted(bv, t - av, side="right")
        return float(pa @ sp[j]), float(qa @ sq[j]), float(pa @ pp[j])

    @property
    def grid(self) -> str:
        return f"{fraction_str(self.A.g)} + {fraction_str(self.B.g)}"

    def index(self, t: Fraction, strict: bool) -> list[int]:
        """For each atom i of A, the first atom j of B with ``a_i + b_j > t`` (strict) or ``≥ t``,
        in exact integer arithmetic (module docstring)."""
        A, B = self.A, self.B
        x = (Fraction(t) - A.C - B.C) / B.g
        num0, step, den = x.numerator * self._rd, self._rn * x.denominator, x.denominator * self._rd
        kb = B.keys
        hi = len(kb)
        out = []
        if strict:  # K_j > floor(y)
            for k in A.keys:
                hi = bisect_right(kb, (num0 - step * k) // den, 0, hi)
                out.append(hi)
        else:  # K_j ≥ ceil(y)
            for k in A.keys:
                hi = bisect_left(kb, -((step * k - num0) // den), 0, hi)
                out.append(hi)
        return out

    def upper_sums(self, t: Fraction, strict: bool = True) -> tuple[arb, arb]:
        """``(P(kept, L > t), Q(kept, L > t))`` (``≥`` when not strict)."""
        SP, SQ = self.B.SP, self.B.SQ
        sp, sq = arb(0), arb(0)
        for p, q, j in zip(self.A.P, self.A.Q, self.index(t, strict)):
            sp += p * SP[j]
            sq += q * SQ[j]
        return sp, sq

    def lower_p(self, t: Fraction, strict: bool = True, idx: list | None = None) -> arb:
        """``P(kept, L < t)`` (strict) or ``P(kept, L ≤ t)``."""
        PP = self.B.PP
        s = arb(0)
        for p, j in zip(self.A.P, self.index(t, not strict) if idx is None else idx):
            s += p * PP[j]
        return s

    def values_between(self, lo_idx: list, hi_idx: list) -> list[Fraction]:
        """The distinct pair values in ``(lo, hi]`` given the strict indices of lo and of hi."""
        A, B = self.A, self.B
        out = set()
        for i, (j0, j1) in enumerate(zip(lo_idx, hi_idx)):
            for j in range(j0, j1):
                out.add(A.value(i) + B.value(j))
        return sorted(out)


def delta_kept(pairs: Pairs, e: Fraction) -> arb:
    """A ball of the kept pairs' ``Σ (P − e^ε Q)_+`` (module docstring)."""
    sp, sq = pairs.upper_sums(e)
    return (sp - ball(e).exp() * sq).nonnegative_part()


def epsilon_ends(pairs: Pairs, target: arb, prec: int, certified) -> tuple[Fraction, Fraction]:
    """``(lo, hi)`` around ε(δ) for the kept target ``target`` (``δ_F`` must reach it); ``certified(u)``
    tells whether ``δ(u) ≤ δ`` is proved.  ``δ(0) > δ`` is assumed (the caller checked)."""
    e = Fraction(0)
    tf = float(target.mid())
    if 1e-250 < tf < 1:  # float64 planning: Newton from the left on P(L > t) − e^ε Q(L > t) = target
        x = 0.0
        for _ in range(200):
            sp_f, sq_f, _ = pairs.plan(x)
            if not (sp_f > tf and sq_f > 0):
                break
            step = math.log((sp_f - tf) / sq_f)
            if step <= x:
                break
            x = step
        e = max(Fraction(x) - (abs(Fraction(x)) + 1) * Fraction(1, 2**40), Fraction(0))
    tol = Fraction(1, 2**30 if e else 2**50)  # (Newton from within 2^-40 of the root: one more step)
    for _ in range(200):
        sp, sq = pairs.upper_sums(e)
        num = sp - target
        if not (num.mid() > 0 and sq.mid() > 0):
            break
        nxt = _exact_mid((num / sq).log())
        nxt = _round(nxt, nxt - (abs(nxt) + 1) * Fraction(1, 2**60), nxt + (abs(nxt) + 1) * Fraction(1, 2**60))
        if nxt <= e:
            break
        done = nxt - e <= (abs(e) + 1) * tol
        e = nxt
        if done:
            break
    sp, sq = pairs.upper_sums(e)
    num, num2 = sp - target, sp - target + pairs.lost_up
    if not (num > 0 and sq > 0):
        raise ArithmeticError("no piece of epsilon proved")
    lo = endpoints((num / sq).log())[0]
    u = endpoints((num2 / sq).log())[1]
    for k in range(4):
        uk = u + (abs(u) + 1) * Fraction(1, 2 ** max(8, prec - 24 - 16 * k)) if k else u
        if certified(uk):
            return lo, uk
    raise ArithmeticError("no piece of epsilon proved")


def _plan_bracket(pairs: Pairs, a: float, lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    """A narrower ``(lo, hi)`` with ``P(L ≤ lo) < α ≤ P(L ≤ hi)`` in float64 (bisection; α near 1
    through ``P(L > x)``); unchanged where float64 cannot tell α (the caller's search goes on)."""
    if not 1e-250 < a < 1 - 1e-15:
        return lo, hi
    upper = a > 0.5
    x0, x1 = float(lo), float(hi)
    for _ in range(80):
        x = (x0 + x1) / 2
        if not x0 < x < x1:
            break
        sp, _, pp = pairs.plan(x)
        if (sp <= 1 - a) if upper else (pp >= a):
            x1 = x
        else:
            x0 = x
    w = (abs(x0) + abs(x1) + 1) * 2.0**-40  # (margins for the float64 sums and values)
    return max(lo, Fraction(x0 - w)), min(hi, Fraction(x1 + w))


def threshold_tests(pairs: Pairs, ab: arb) -> list:
    """``(ℓ, P(kept, reject), Q(kept, accept))`` of the tests ``L < ℓ*`` and ``L ≤ ℓ*`` (module
    docstring; ℓ* from the midpoints, the tests' own sums are balls)."""
    A, B = pairs.A, pairs.B
    amid = ab.mid()
    lo = A.value(0) + B.value(0) - 1
    hi = A.value(len(A) - 1) + B.value(len(B) - 1)
    lo, hi = _plan_bracket(pairs, float(amid), lo, hi)
    lo_idx, hi_idx = pairs.index(lo, True), pairs.index(hi, True)
    f_lo, f_hi = 0.0, float(pairs.lower_p(hi, False, hi_idx).mid())
    a_f = float(amid)
    for step in range(400):
        count = sum(j1 - j0 for j0, j1 in zip(lo_idx, hi_idx))
        if count <= MAX_PAIRS:
            break
        if step % 3 == 2 or not f_lo < a_f < f_hi:
            x = (lo + hi) / 2
        else:
            x = lo + (hi - lo) * Fraction(a_f - f_lo) / Fraction(f_hi - f_lo)
            x = min(max(x, lo + (hi - lo) / 64), hi - (hi - lo) / 64)
        x = _round(x, lo, hi)
        idx = pairs.index(x, True)
        fx = pairs.lower_p(x, False, idx)
        if fx.mid() >= amid:
            hi, hi_idx, f_hi = x, idx, float(fx.mid())
        else:
            lo, lo_idx, f_lo = x, idx, float(fx.mid())
    else:
        raise ArithmeticError("could not isolate the test's threshold")
    values = pairs.values_between(lo_idx, hi_idx)
    star = values[-1] if values else hi
    a, b = 0, len(values) - 1
    while a < b:  # the first candidate with P(L ≤ v) ≥ α
        m = (a + b) // 2
        if pairs.lower_p(values[m], False).mid() >= amid:
            b = m
        else:
            a = m + 1
    if values:
        star = values[a]
    out = []
    for strict in (True, False):
        sq = pairs.upper_sums(star, not strict)[1]  # accept L ≥ ℓ* (reject L < ℓ*) or accept L > ℓ*
        out.append((star, pairs.lower_p(star, strict), sq))
    return out
