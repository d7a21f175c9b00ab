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
from collections import OrderedDict
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from exactdp.engine.quadstate import SieveLevel, Tilt
from exactdp.engine.tilt import HUGE_MU
from exactdp.kernels.quadfinish import FINISH_OK, finish_tilts
from exactdp.kernels.tilted import delta_factors_rows, tilted_sums_rows
from exactdp.numerics.precision import EPS64

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
        _gamma0: float
        _hs_memo: OrderedDict
        _HS_MEMO_BYTES: int

        @staticmethod
        def _trig(sv: SieveLevel) -> tuple: ...

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
        aux = np.empty((4, n))
        tps = np.empty((len(batch), 8))
        seg = np.empty(len(batch) + 1, dtype=np.int64)
        thr = np.empty(n, dtype=np.int64)
        rows: list = []  # the arrays whose signed sums are asked: a tilt's G, or a kernel's G·X
        sums: list = []  # (row, positions in the batch) of each former tilted_sums call, in order
        kernels: dict = {}  # (tilt index, β, x0, x1) → positions of its hockey-stick thresholds
        for j, (gi, t, s_list, a) in enumerate(batch):
            b = a + len(s_list)
            seg[j] = a
            tps[j] = t.fin
            thr[a:b] = (s_arr[a:b] - t.s0) % N
            aux[:, a:b] = t.aux
            if plain:
                sums.append((len(rows), range(a, b)))
                rows.append(t.G)
                continue
            qs = groups[gi]
            pl = [a + i for i, q in enumerate(qs) if q.x0 == -math.inf]
            if pl:
                sums.append((len(rows), range(a, b) if len(pl) == len(qs) else pl))
                rows.append(t.G)
            if len(pl) < len(qs):
                for i, q in enumerate(qs):
                    if q.x0 != -math.inf:
                        kernels.setdefault((j, q.beta, q.x0, q.x1), []).append(a + i)
        seg[len(batch)] = n
        if kernels:
            self._hs_rows(sv, batch, kernels, rows, sums, aux)
        r = np.empty(n)
        if sums:
            row_of = np.array([k for k, _ in sums], dtype=np.int64)
            pos = np.fromiter(chain.from_iterable(p for _, p in sums), dtype=np.int64)
            cuts = np.zeros(len(sums) + 1, dtype=np.int64)
            np.cumsum([len(p) for _, p in sums], out=cuts[1:])
            r[pos] = tilted_sums_rows(np.stack(rows), row_of, sv.nodes, N, thr[pos], cuts)
        est, rel, status = finish_tilts(r, s_arr, aux, tps, seg, N, self.A, self.m, self.s2, self._small_idx,
                                        self.gaussian)
        return r, aux, est, rel, status

    def _hs_rows(self, sv: SieveLevel, batch: list, kernels: dict, rows: list, sums: list, aux: np.ndarray) -> None:
        """The hockey-stick kernels of a batch (``(tilt index, β, x0, x1)`` → positions of their
        thresholds): what :meth:`_hs_sums` does per kernel, for all at once — the factors G·X
        (memoised per kernel, as there) appended to ``rows`` with their signed sums' positions
        to ``sums``, the kernel-factor logs, errors and bound sums into ``aux``.  The factors
        of the kernels not memoised come from one :func:`delta_factors_rows` call and the same
        numpy operations on all of them as rows of one array (each row's elements and sums are
        those of the one-dimensional operations: numpy's elementwise loops and its pairwise sum
        along a contiguous row do not depend on the other rows)."""
        N = self.n_nodes
        memo = self._hs_memo
        todo = []  # (key, tilt, positions, β, a0, a1) of the kernels not memoised
        cols: list = [[], [], [], []]  # aux rows per kernel, in the order of ``order``
        order = []  # positions of each kernel's thresholds
        hits: list = []  # (kernel number, memo value)
        for (j, beta, x0, x1), pos in kernels.items():
            t = batch[j][1]
            a0 = -math.expm1(x0)
            a1 = math.exp(x0) * -math.expm1(-x1)
            key = (sv.T, t.key, beta, x0, x1)  # t.key: λ as a float when it is one (cheap hash)
            hit = memo.get(key)
            if hit is None:
                todo.append((key, t, len(order), beta, a0, a1))
            else:
                memo.move_to_end(key)
                hits.append((len(order), hit))
            order.append(pos)
            num0 = a0 + a1 * math.exp(-t.lam)
            lb = -math.expm1(-(t.lam + beta))
            log_num0, log_lb = math.log(num0), math.log(lb)
            cols[0].append(log_num0 - t.log1m - log_lb)
            cols[1].append(EPS64 * (abs(log_num0) + 2 * abs(t.log1m) + 2 * abs(log_lb) + 12)
                           + 8 * EPS64 * (1 + abs(x0) + abs(x1)))
        got: list = [None] * len(order)
        for g, hit in hits:
            got[g] = hit
        if todo:
            cos_t, sin_t, sh_t = self._trig(sv)
            X, R2 = delta_factors_rows(cos_t, sin_t, sh_t, np.array([w[1].lam for w in todo]),
                                       np.array([w[3] for w in todo]), np.array([w[4] for w in todo]),
                                       np.array([w[5] for w in todo]))
            absX = np.abs(X)
            es = np.empty(len(todo))
            sa = np.empty(len(todo))
            GX = np.empty_like(X)
            r0 = 0
            while r0 < len(todo):  # the rows of one tilt (consecutive: the kernels come in batch order)
                t = todo[r0][1]
                r1 = r0 + 1
                while r1 < len(todo) and todo[r1][1] is t:
                    r1 += 1
                if t.err_hs is None:
                    t.err_hs = t.err + self._gamma0 + 16 * EPS64
                aGX = t.aG * absX[r0:r1]
                es[r0:r1] = ((aGX * t.err_hs).sum(axis=1) + 8 * EPS64 * (t.aG * R2[r0:r1]).sum(axis=1)) / N
                sa[r0:r1] = aGX.sum(axis=1) / N
                GX[r0:r1] = t.G * X[r0:r1]
                r0 = r1
            cap = max(4, self._HS_MEMO_BYTES // (16 * max(1, len(sv.nodes))))
            for i, (key, _t, g, _b, _a0, _a1) in enumerate(todo):
                got[g] = memo[key] = (GX[i], float(es[i]), float(sa[i]))
            while len(memo) > cap:
                memo.popitem(last=False)
        for g, (gx, errsum, sumabs) in enumerate(got):
            sums.append((len(rows), order[g]))
            rows.append(gx)
            cols[2].append(errsum)
            cols[3].append(sumabs)
        pos = np.fromiter(chain.from_iterable(order), dtype=np.int64)
        counts = [len(p) for p in order]
        for c in range(4):
            aux[c, pos] = np.repeat(cols[c], counts)

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
        if n and all(type(x) is float for x in lams):
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
