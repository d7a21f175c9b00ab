"""``exactdp.calibrate``: the noise to deploy — σ² per group, or ρ per cell of an allocation.

:mod:`exactdp.calibration.calibrate` brackets the smallest scaling c* of the variances
(σ² → c·σ²) that still meets a target (ε, δ): ``c* ∈ (lower, upper]``, ``upper`` certified
to meet the target, ``lower`` certified to miss it.  This module turns that bracket into the
numbers a statistician deploys: ``upper × σ²`` of every mechanism (or ``ρ_q / upper`` of
every scaled cell of an allocation), beside the other side of the bracket, and the design
(a :class:`~exactdp.mechanisms.Composition` or an
:class:`~exactdp.census.allocations.Allocation`) built from them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from exactdp.calibration.calibrate import (
    DEFAULT_WIDTH,
    CalibrationResult,
    calibrate_design,
    calibrate_pair,
    calibrate_release,
)
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.directed import directed_decimal
from exactdp.numerics.exact import InputError, fraction_str

__all__ = ["Calibration", "calibrate"]


@dataclass(frozen=True)
class Calibration:
    """The noise to deploy: σ² (or ρ per cell) certified to meet a target (ε, δ).

    Attributes
    ----------
    cells : tuple
        What each entry below is: for a design, ``"σ² = s (shift d) × n"`` (its groups in
        :attr:`Composition.groups` order; its input σ², shift and count); for an allocation, ``(level, query)`` of every
        measured cell of its full-chain budget table (the scaled and the unscaled ones).
    sigma2 : tuple of Fraction
        **The σ² to deploy** per cell: ``scale.upper × σ²`` of every scaled cell (the others
        unchanged).  Certified: the design with these variances meets the target.
    sigma2_infeasible : tuple of Fraction
        The other side of the bracket, ``scale.lower × σ²``: certified to *miss* the target
        (for a release: on the pair ``scale.argmax``).  The smallest scaling meeting the
        target lies strictly between; it is not claimed that every variance above
        :attr:`sigma2` meets the target too (δ is not proved monotone in the variances of
        discrete Gaussians).
    rho, rho_infeasible : tuple of Fraction
        The same as zCDP budgets, ``shift²/(2σ²)`` (for an allocation the ρ_q of its table).
    scaled : tuple of bool
        Whether the cell's variance is scaled (``level``: only that level's cells).
    design : Composition, Allocation or None
        The design to deploy, built from :attr:`sigma2` (an allocation keeps its paths;
        its base table gets :attr:`rho`).  ``None`` when one ``level`` of an allocation
        was scaled: its paths would no longer spend equal totals, which an
        :class:`~exactdp.census.allocations.Allocation` requires; deploy :attr:`rho` per
        cell of the full chain with the paths' multipliers unchanged.
    scale : CalibrationResult
        The certified bracket ``(lower, upper]`` on the scaling c and its diagnostics
        (target, δ at ``upper``, evaluations).

    ``value`` is :attr:`sigma2` (the conservative side: more noise), ``error_bound`` the
    bracket's width on the scaling.
    """

    cells: tuple
    sigma2: tuple
    sigma2_infeasible: tuple
    rho: tuple
    rho_infeasible: tuple
    scaled: tuple
    design: object
    scale: CalibrationResult

    @property
    def value(self) -> tuple:
        """:attr:`sigma2`: the variances to deploy."""
        return self.sigma2

    @property
    def sigma2_input(self) -> tuple:
        """The input's σ² per cell (``sigma2 / scale.upper`` where scaled)."""
        return tuple(s / self.scale.upper if on else s for s, on in zip(self.sigma2, self.scaled))

    @property
    def error_bound(self) -> Fraction:
        """``scale.upper − scale.lower``: the width of the bracket on the scaling."""
        return self.scale.error_bound

    def rows(self) -> list[dict]:
        """One dict per cell (exact ``p/q`` texts): ``cell``, ``scaled``, ``sigma2_deploy``,
        ``sigma2_infeasible``, ``rho_deploy``, ``rho_infeasible``."""
        out = []
        for k, cell in enumerate(self.cells):
            out.append({"cell": "/".join(cell) if isinstance(cell, tuple) else cell, "scaled": self.scaled[k],
                        "sigma2_deploy": fraction_str(self.sigma2[k]),
                        "sigma2_infeasible": fraction_str(self.sigma2_infeasible[k]),
                        "rho_deploy": fraction_str(self.rho[k]),
                        "rho_infeasible": fraction_str(self.rho_infeasible[k])})
        return out

    def to_pandas(self):
        """:meth:`rows` as a ``pandas.DataFrame`` with exact Fraction columns (pandas is
        an optional dependency)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas() needs pandas (pip install pandas)") from exc
        return pd.DataFrame([{**r, "sigma2_deploy": self.sigma2[k], "sigma2_infeasible": self.sigma2_infeasible[k],
                              "rho_deploy": self.rho[k], "rho_infeasible": self.rho_infeasible[k]}
                             for k, r in enumerate(self.rows())])

    def _repr_html_(self) -> str:
        import html

        md = self._repr_markdown_().split("\n")
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c.strip())}</td>" for c in line.strip("|").split("|"))
                       + "</tr>" for line in md[4:] if line.startswith("|"))
        head = html.escape(md[0].replace("**", ""))
        more = html.escape(md[-1]) if md[-1].startswith("…") else ""
        return (f"<div class='exactdp-calibration'><p>{head}</p><table><thead><tr><th>cell</th><th>σ² to deploy</th>"
                f"<th>σ² that misses the target</th></tr></thead><tbody>{rows}</tbody></table>{more}</div>")

    def _repr_markdown_(self) -> str:
        s = self.scale
        head = (f"**σ² to deploy** (exact p/q; certified to meet δ(ε) ≤ {float(s.target_delta):.6g} at ε = "
                f"{float(s.target_epsilon):.10g}; {s.scope}): scale c = {fraction_str(s.upper)} "
                f"(c = {fraction_str(s.lower)} certified to miss it)\n\n")
        lines = ["| cell | σ² to deploy | σ² that misses the target |", "|---|---|---|"]
        shown = [k for k, on in enumerate(self.scaled) if on][:20]
        for k in shown:
            cell = "/".join(self.cells[k]) if isinstance(self.cells[k], tuple) else self.cells[k]
            lines.append(f"| {cell} | {fraction_str(self.sigma2[k])} ≈ {directed_decimal(self.sigma2[k], True, 10)} | "
                         f"{directed_decimal(self.sigma2_infeasible[k], False, 10)} |")
        more = sum(self.scaled) - len(shown)
        return head + "\n".join(lines) + (f"\n\n… and {more} more scaled cells" if more > 0 else "")


def _allocation(design):
    from exactdp.census.allocations import Allocation, load_allocation

    if isinstance(design, Allocation):
        return design
    if isinstance(design, (str, Path)):
        return load_allocation(design)
    return None


def calibrate(design, delta, eps=None, *, level: str | None = None, pair=None, width=DEFAULT_WIDTH,
              rel_tol: float = 1e-10, progress=None) -> Calibration:
    """The σ² to deploy so that a design meets a target (ε, δ), with its certified bracket.

    Parameters
    ----------
    design : Composition, Allocation or str
        A composition of discrete Gaussians, or an allocation (an object, a built-in name
        such as ``"dhc-persons-2020"`` or an allocation file).
    delta : exact rational in (0, 1)
        Target δ.
    eps : exact rational, optional
        Target ε (default: the Bun–Steinke ε(δ) of the design's ρ — the Bureau's point).
    level : str, optional
        Allocations: scale only this level's cells (default every cell).
    pair : (int, int), optional
        Allocations: calibrate this neighbour pair only (default the whole release: every
        pair must meet the target).
    width : exact rational
        Width of the certified bracket on the scaling (default 1e-6).
    rel_tol : float
        Certified relative accuracy of each exact tail.
    progress : callable, optional
        ``progress(message)`` per pass of a release calibration.

    Returns
    -------
    Calibration
        ``sigma2`` to deploy (and ``rho``), ``sigma2_infeasible`` on the other side of the
        bracket, the deployable ``design`` and the bracket ``scale``.

    Raises
    ------
    InputError
        Bad input (``level`` or ``pair`` without an allocation, unknown level, δ outside (0, 1)).

    Notes
    -----
    Method: one scaling c of the (level's) variances, bracketed by
    :func:`~exactdp.calibration.calibrate.calibrate_design`, ``calibrate_pair`` or
    ``calibrate_release`` — a search that decides on certified bounds only: a scaling is
    accepted when the upper bound of its exact δ(ε) meets the target (for a release, on
    every pair: by its own exact evaluation or the CKS bound) and rejected when the lower
    bound exceeds it.  Error bound: the deployed σ² = ``upper``·σ² is certified to meet the
    target; ``lower``·σ² is certified to miss it; ``upper − lower ≤ width``.  Nothing is
    claimed about variances between or above (δ is not proved monotone in the variances
    of discrete Gaussians).  Reference: Su, Su & Wang, exact privacy accounting of the 2020
    Census (variance reduction at the Bureau's (ε, δ)); Canonne, Kamath & Steinke (2020).

    Examples
    --------
    >>> from exactdp import Composition, calibrate
    >>> cal = calibrate(Composition.from_sigma2(["2"] * 3), "1e-3")
    >>> cal.sigma2[0] == 2 * cal.scale.upper
    True
    """
    alloc = _allocation(design)
    if alloc is None:
        if not isinstance(design, Composition):
            raise InputError("design", type(design).__name__, "must be a Composition, an Allocation or an "
                                                              "allocation name or file")
        if level is not None or pair is not None:
            raise InputError("level" if level is not None else "pair", level or pair, "needs an allocation")
        res = calibrate_design(design, delta, eps, width=width, rel_tol=rel_tol)
        groups = design.groups
        g_cells = tuple(f"σ² = {fraction_str(m.sigma2)} (shift {m.shift}) × {n}" for m, n in groups)
        g_s2 = tuple(m.sigma2 * res.upper for m, _ in groups)
        g_bad = tuple(m.sigma2 * res.lower for m, _ in groups)
        g_rho = tuple(Fraction(m.shift ** 2) / (2 * s) for (m, _), s in zip(groups, g_s2))
        g_rho_bad = tuple(Fraction(m.shift ** 2) / (2 * s) for (m, _), s in zip(groups, g_bad))
        comp = Composition(tuple((DiscreteGaussian(s, m.shift), n) for (m, n), s in zip(groups, g_s2)))
        return Calibration(g_cells, g_s2, g_bad, g_rho, g_rho_bad, (True,) * len(groups), comp, res)
    if level is not None and level not in alloc.levels:
        raise InputError("level", level, f"unknown level (levels are {', '.join(alloc.levels)})")
    if pair is not None:
        pair = tuple(pair)
        for p in pair:
            alloc._index(p)
        res = calibrate_pair(alloc, pair, delta, eps, level=level, width=width, rel_tol=rel_tol)
    else:
        res = calibrate_release(alloc, delta, eps, level=level, width=width, rel_tol=rel_tol, progress=progress)
    cells: list = []
    s2: list = []
    s2_bad: list = []
    rho: list = []
    rho_bad: list = []
    scaled: list = []
    base: dict = {}
    for lev in alloc.levels:
        on = level is None or lev == level
        row = []
        for q, r in zip(alloc.queries, alloc.base[lev]):
            new = r / res.upper if (on and r) else r
            row.append(new)
            if not r:
                continue
            bad = r / res.lower if on else r
            cells.append((lev, q))
            scaled.append(on)
            rho.append(new)
            rho_bad.append(bad)
            s2.append(1 / new)
            s2_bad.append(1 / bad)
        base[lev] = tuple(row)
    deployed: object = None
    if level is None:  # a uniform scaling keeps every path's total equal: still an allocation
        where = f"pair {pair[0]}-{pair[1]}" if pair is not None else "every neighbour pair"
        deployed = replace(alloc, name=f"{alloc.name}-calibrated", base=base,
                           description=f"{alloc.name} with every variance multiplied by {fraction_str(res.upper)} "
                                       f"(exactdp calibrate: certified to meet the target on {where})",
                           provenance={**alloc.provenance, "calibrated_from": alloc.name,
                                       "calibrated_from_content_hash": alloc.content_hash(),
                                       "calibration": f"every variance x {fraction_str(res.upper)}; certified "
                                                      f"delta(eps) <= {fraction_str(res.target_delta)} on {where}"})
    return Calibration(tuple(cells), tuple(s2), tuple(s2_bad), tuple(rho), tuple(rho_bad), tuple(scaled), deployed,
                       res)
