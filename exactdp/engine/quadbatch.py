"""The float-path batches of the sieved tilted-contour rule (a base of QuadratureTails).

A batch is the thresholds of several tilts whose values the kernel :func:`finish_tilts`
finishes in one call (the float path: thresholds and the tilt's integer shift below 2⁵³,
the tilted centres placed by a float λ).  :meth:`FloatBatches._finish_arrays` forms the
signed sums and ``aux`` columns of each tilt and makes that call;
:meth:`FloatBatches.plain_floats` gives plain tails as two float lists (logs, certified
relative bounds) without a TailValue or a memo entry each — the values
:meth:`~exactdp.engine.quadrature.QuadratureTails.weighted_list_ok` gives, bit for bit —
or ``None`` when the first pass does not certify every one on the float path.  The method,
its error bound and references are those of :mod:`exactdp.engine.quadrature`.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from exactdp.engine.quadstate import SieveLevel, Tilt
from exactdp.engine.tilt import HUGE_MU
from exactdp.kernels.quadfinish import FINISH_OK, finish_tilts
from exactdp.kernels.tilted import tilted_sums

__all__ = ["FloatBatches"]


class FloatBatches:
    """The float-path batch methods of :class:`~exactdp.engine.quadrature.QuadratureTails`
    (which provides the rule's state: its sieve levels, tilts and groups)."""

    if TYPE_CHECKING:
        n_nodes: int
        rel_tol: float
        A: np.ndarray
        m: np.ndarray
        s2: np.ndarray
        gaussian: bool
        _small_idx: np.ndarray
        _mu_scale: float

        def _sieve(self, level: int) -> SieveLevel: ...

        def _grid_lams(self, qs, plain: bool = False) -> list: ...

        def _tilt(self, key, sv: SieveLevel) -> Tilt: ...

        def _hs_sums(self, t: Tilt, qs, hs, thr, r, aux) -> None: ...

    def _finish_arrays(self, sv: SieveLevel, batch: list, n: int, groups: list, plain: bool = False,
                       s_arr: np.ndarray | None = None) -> tuple:
        """``(r, aux, est, rel, status)`` of a batch of float-path groups (``(group index, tilt,
        thresholds, offset)`` each, ``n`` thresholds in all): the signed sums and ``aux``
        columns of each tilt (as :meth:`_values_at` forms them), then one :func:`finish_tilts`
        call for all (``est``, ``rel``: the float-path logs and bounds); ``s_arr``: the batch's
        thresholds as one int64 array, when the caller has it."""
        N = self.n_nodes
        if s_arr is None:
            s_arr = np.fromiter(chain.from_iterable(b[2] for b in batch), dtype=np.int64, count=n)
        r = np.empty(n)
        aux = np.empty((4, n))
        tps = np.empty((len(batch), 8))
        seg = np.empty(len(batch) + 1, dtype=np.int64)
        for j, (gi, t, s_list, a) in enumerate(batch):
            b = a + len(s_list)
            seg[j] = a
            tps[j] = t.fin
            qs = groups[gi]
            thr = (s_arr[a:b] - t.s0) % N
            hs = [] if plain else [i for i, q in enumerate(qs) if q.x0 != -math.inf]
            aux[:, a:b] = t.aux
            if not hs:
                r[a:b] = tilted_sums(t.G, sv.nodes, N, thr)
            else:
                rr = r[a:b]
                if len(hs) < len(qs):
                    pl = [i for i, q in enumerate(qs) if q.x0 == -math.inf]
                    rr[pl] = tilted_sums(t.G, sv.nodes, N, thr[pl])
                self._hs_sums(t, qs, hs, thr, rr, aux[:, a:b])
        seg[len(batch)] = n
        est, rel, status = finish_tilts(r, s_arr, aux, tps, seg, N, self.A, self.m, self.s2, self._small_idx,
                                        self.gaussian)
        return r, aux, est, rel, status

    def plain_floats(self, thresholds: np.ndarray) -> tuple | None:
        """The first pass's logs and bounds of the plain tails ``P(S ≥ s)`` of distinct,
        ascending thresholds 1 ≤ s < 2⁵³ (an int64 array), as two float arrays aligned with
        it, when that pass certifies every one on the float path: the values
        :meth:`weighted_list_ok` gives them (the same tilts, sums and :func:`finish_tilts`
        numbers), without a TailValue or a memo entry each; ``None`` otherwise (the caller
        then asks :meth:`weighted_list_ok`).

        The thresholds are grouped by tilt as :meth:`weighted_list_ok` groups them (by equal
        λ, in ascending λ): when the grid's λ are floats, non-decreasing along the ascending
        thresholds (the saddle point increases with s), a group is a run of equal λ and the
        groups come in threshold order; otherwise by a dict, and the values put back in
        threshold order."""
        sv = self._sieve(0)
        lams = self._grid_lams(thresholds.tolist(), True)
        n = len(lams)
        runs = None
        if n and set(map(type, lams)) <= {float}:  # every λ a float (the type, exactly)
            la = np.array(lams)
            step = np.diff(la)
            if not (step < 0).any():
                cut = np.flatnonzero(step != 0) + 1
                starts = [0] + cut.tolist()
                ends = cut.tolist() + [n]
                runs = [(lams[i], thresholds[i:j]) for i, j in zip(starts, ends)]
        if runs is None:
            by_lam: dict = {}
            for s, lam in zip(thresholds.tolist(), lams):
                by_lam.setdefault(lam, []).append(s)
            runs = [(lam, np.array(by_lam[lam], dtype=np.int64)) for lam in sorted(by_lam)]
        batches, batch, n_batch = [], [], 0
        for lam, s_arr in runs:
            t = self._tilt(lam, sv)
            if not (abs(t.s0) < 2**53 and t.lam * self._mu_scale <= HUGE_MU):
                return None
            batch.append((0, t, s_arr, n_batch))
            n_batch += len(s_arr)
            if len(batch) >= sv.max_tilts:
                batches.append((batch, n_batch))
                batch, n_batch = [], 0
        if batch:
            batches.append((batch, n_batch))
        ests, rels = [], []
        tol = self.rel_tol
        for batch, n_batch in batches:
            s_arr = np.concatenate([b[2] for b in batch])
            _, _, est, rel, status = self._finish_arrays(sv, batch, n_batch, [()], True, s_arr)
            if (status != FINISH_OK).any() or not (np.isfinite(rel) & np.isfinite(est) & (rel <= tol)).all():
                return None
            ests.append(est)
            rels.append(rel)
        est, rel = np.concatenate(ests), np.concatenate(rels)
        order = np.concatenate([b[2] for batch, _ in batches for b in batch])
        if (order != thresholds).any():  # the dict's groups: back in threshold order
            pos = np.searchsorted(thresholds, order)
            est[pos], rel[pos] = est.copy(), rel.copy()
        return est, rel
