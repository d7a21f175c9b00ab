"""When the grouped tilted halves answer a design: designs of clumpy groups with counts.

Ten distinct σ² in [1.18, 1.28], each with a count of 2 (shift 1, ρ ≈ 8), have a
characteristic function that decays only ~e^{−40} between lattice returns (the smoothed
inversion cannot certify within its wide budget), untilted halves of 2.4·10⁷ atoms at 100
nats (beyond :data:`~exactdp.engine.halves.HALF_ATOMS`) and, spelled out as twenty single
mechanisms, tilted halves of 2.7·10¹⁰ atoms.  With each group's sum as one coordinate (its
pmf pointwise, :mod:`exactdp.engine.group_log_pmf`) the tilted halves have 3·10⁶ atoms a
level: :class:`~exactdp.engine.halves.HalvesProfile` with ``grouped=True``.
:func:`exactdp.engine.conditioned_profile.profile_for` asks them only where the atom-table
split and the ordinary halves do not fit, before the smoothed inversion's wide budget when
their halves are light (at most :data:`~exactdp.engine.halves.HEAVY_TILT_ATOMS` atoms), after it
when heavy.
"""

from __future__ import annotations

from exactdp.engine.coarse_split import ball_atom_count
from exactdp.engine.halves import HEAVY_TILT_ATOMS, HalvesProfile, _tilt_depth, grouped_split, grouped_tilted_fit

__all__ = ["grouped_halves_for", "grouped_halves"]


def grouped_halves_for(groups):
    """``None`` when the grouped tilted halves do not take ``groups`` (no group of several
    mechanisms, or :func:`~exactdp.engine.halves.grouped_tilted_fit` fails), else whether they
    are heavy (a half estimated above :data:`~exactdp.engine.halves.HEAVY_TILT_ATOMS` atoms)."""
    groups = tuple(groups)
    if all(g.count == 1 for g in groups) or not grouped_tilted_fit(groups):
        return None
    a, b = grouped_split(groups)
    return max(ball_atom_count(a, _tilt_depth(a)), ball_atom_count(b, _tilt_depth(b))) > HEAVY_TILT_ATOMS


def grouped_halves(groups):
    """The grouped tilted halves of ``groups`` (None when a half's tables would leave the
    float range)."""
    try:
        return HalvesProfile(tuple(groups), grouped=True)
    except OverflowError:
        return None
