"""Which trapezoid nodes the certificate evaluates (its own node selection).

For ``F = Σ_g a_g Σ_{k≤m_g} X_{g,k}`` and the N-node rule on ``θ_n = 2πn/N`` the node
``n ∈ [0, N/2]`` carries ``|G_n| ≤ Π_g (|Θ_g(a_g(λ+iθ_n))|/Θ_g(a_gλ))^{m_g}`` and, by
:meth:`exactdp.certify.dgball.DGBall.sieve_constant`,

    −log |G_n| ≥ h(n) := Σ_g m_g · max(0, s_g² min(u_g(n), u_c)²/2 − c_g),
    u_g(n) = 2π·dist(a_g n mod N, {0, N})/N,

for every tilt λ.  A node is *dropped* only when ``h(n) ≥ T``; the dropped nodes then add
at most ``R·e^{−T}`` to the rule (``R`` its tilted scale; each dropped term is ≤ R e^{−T}
and the weights sum to N), which the certificate adds to the ball.

``h`` is evaluated in float64 from constants rounded the safe way (``s²`` down, ``c_g``
up — ``c_g`` is a ball's upper end) and compared with ``T(1 + 10⁻⁹) + 10⁻⁹``: the ≤ 8
correctly rounded operations per group move ``h`` by far less than that margin, so a
dropped node truly has ``−log|G_n| ≥ T``.  Keeping a node is always safe.

Enumeration: the group with the smallest cut-off ``u*_g`` (``m_g(s_g²u*²/2 − c_g) = T``)
proposes its candidates — the n with ``a_g n ≡ ρ (mod N)``, ``|ρ| ≤ ρ*``, found by solving
the linear congruences exactly (Python integers, no 64-bit limit) — every other node has
``h(n) ≥ T`` from that group alone.  Candidates are filtered with all groups in exact
integer residue arithmetic (numpy int64 when ``max a_g · N < 2^62``, Python ints otherwise).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.certify.dgball import U_CUT

__all__ = ["SieveGroup", "choose_n_nodes", "select_nodes", "candidate_count", "MARGIN"]

#: relative and absolute safety margin of the float comparison h(n) ≥ T
MARGIN = 1e-9
_INT64_SAFE = 2**62


class SieveGroup:
    """One group's data for the sieve: weight a, count m, s² (float, rounded down) and the
    certified constant c (float, rounded up; ``inf`` when the group cannot prune)."""

    __slots__ = ("a", "m", "s2", "c")

    def __init__(self, a: int, m: int, s2, c_upper: float | None):
        self.a = int(a)
        self.m = int(m)
        self.s2 = math.nextafter(float(s2), 0.0)
        self.c = math.inf if c_upper is None else math.nextafter(float(c_upper), math.inf)

    def u_star(self, T: float) -> float:
        """Cut-off u*: nodes with u_g > u* have h ≥ T from this group alone (inf if none)."""
        if not math.isfinite(self.c):
            return math.inf
        u = math.sqrt(2.0 * (T / self.m + self.c) / self.s2) * (1 + 1e-8)
        return u if u < U_CUT * math.pi else math.inf

    def h(self, dist, N: int):
        """Lower bound of this group's −log|factor| at residue distances ``dist`` (array)."""
        if not math.isfinite(self.c):
            return np.zeros(len(dist))
        u = np.minimum(2.0 * math.pi * np.asarray(dist, dtype=float) / N, U_CUT * math.pi)
        return self.m * np.maximum(0.0, 0.5 * self.s2 * u * u - self.c)


def choose_n_nodes(vproxy: float, kappa: float) -> int:
    """An even node count ``N ≈ kappa·sqrt(V')`` (at least 64)."""
    return max(64, 2 * int(math.ceil(kappa * math.sqrt(vproxy) / 2.0)))


def _proposer(groups, T: float):
    best, best_u = None, math.inf
    for g in groups:
        u = g.u_star(T)
        if u < best_u:
            best, best_u = g, u
    return best, best_u


def candidate_count(groups, N: int, T: float) -> int:
    """How many candidates :func:`select_nodes` would filter (for planning)."""
    g, u = _proposer(groups, T)
    if g is None:
        return N // 2 + 1
    rho = int(u * N / (2 * math.pi)) + 1
    return min(N // 2 + 1, rho + 1)


def _candidates(g, u: float, N: int):
    """All n in [0, N/2] with dist(a n mod N) ≤ ρ* (as a sorted list / int64 array)."""
    rho = int(u * N / (2 * math.pi)) + 1
    d = math.gcd(g.a, N)
    Nd = N // d
    inv = pow(g.a // d, -1, Nd) if Nd > 1 else 0
    lo = -(rho // d)
    hi = rho // d
    if N < 2**31 and (hi - lo + 1) * d < 50_000_000:
        rp = np.arange(lo, hi + 1, dtype=np.int64)
        n0s = (rp % Nd) * inv % Nd
        ns = (n0s[:, None] + np.arange(d, dtype=np.int64)[None, :] * Nd).ravel()
        ns = ns[ns <= N // 2]
        return np.sort(ns)  # distinct by construction (one n per residue and offset)
    out = set()
    for r in range(lo, hi + 1):
        n0 = (r % Nd) * inv % Nd
        for j in range(d):
            n = n0 + j * Nd
            if n <= N // 2:
                out.add(n)
    return sorted(out)


def select_nodes(groups, N: int, T: float, max_candidates: int = 20_000_000):
    """The kept nodes (sorted, in [0, N/2]) of the sieve at level T.

    Raises
    ------
    OverflowError
        When more than ``max_candidates`` candidates would have to be filtered.
    """
    T_cmp = T * (1 + MARGIN) + MARGIN
    g, u = _proposer(groups, T)
    if candidate_count(groups, N, T) > max_candidates:
        raise OverflowError(f"sieve would filter {candidate_count(groups, N, T)} candidates")
    if g is None:
        cand = np.arange(0, N // 2 + 1, dtype=np.int64) if N < 2**62 else list(range(N // 2 + 1))
    else:
        cand = _candidates(g, u, N)
    big = max(gr.a for gr in groups) * N >= _INT64_SAFE or not isinstance(cand, np.ndarray)
    if big:
        cand_list = [int(n) for n in cand]
        h = np.zeros(len(cand_list))
        for gr in groups:
            r = [(gr.a * n) % N for n in cand_list]
            dist = [min(x, N - x) for x in r]
            h += gr.h(dist, N)
        return [n for n, hv in zip(cand_list, h) if hv < T_cmp or n == 0]
    assert isinstance(cand, np.ndarray)  # else big
    h = np.zeros(cand.shape[0])
    for gr in groups:
        r = (gr.a % N) * cand % N
        dist = np.minimum(r, N - r)
        h += gr.h(dist, N)
    keep = (h < T_cmp) | (cand == 0)
    return cand[keep]
