"""When the grouped tilted halves answer a design: designs of clumpy groups with counts.

Ten distinct σ² in [1.18, 1.28], each with a count of 2 (shift 1, ρ ≈ 8), have a
characteristic function that decays only ~e^{−40} between lattice returns (the smoothed
inversion cannot certify within its wide budget), untilted halves of 2.4·10⁷ atoms at 100
nats (beyond :data:`~exactdp.engine.halves.HALF_ATOMS`) and, spelled out as twenty single
mechanisms, tilted halves of 2.7·10¹⁰ atoms.  With each group's sum as one coordinate (its
pmf pointwise, :mod:`exactdp.engine.group_log_pmf`) the tilted halves have 3·10⁶ atoms a
level: :class:`~exactdp.engine.halves.HalvesProfile` with ``grouped=True``.
:func:`exactdp.engine.conditioned_profile.profile_for` asks them only where the atom-table
split and the ordinary halves do not fit, before the smoothed inversion's wide budget: where
both answer, the halves are the cheaper (ten σ² near 1.23 with counts 1–3 at shift 2, audit4's
narrow #2: ~8 CPU-s against ~50 for the bench's queries, most of it β(α) on the wide budget),
and where the wide budget refuses (the same σ² ×2 at shift 1) its ~2 s are saved.
"""

from __future__ import annotations

from exactdp.engine.halves import HalvesProfile, grouped_tilted_fit

__all__ = ["grouped_halves_fit", "grouped_halves"]


def grouped_halves_fit(groups) -> bool:
    """Whether the grouped tilted halves take ``groups``: some group of several mechanisms, and
    :func:`~exactdp.engine.halves.grouped_tilted_fit`."""
    groups = tuple(groups)
    return any(g.count > 1 for g in groups) and grouped_tilted_fit(groups)


def grouped_halves(groups):
    """The grouped tilted halves of ``groups`` (None when a half's tables would leave the
    float range)."""
    try:
        return HalvesProfile(tuple(groups), grouped=True)
    except OverflowError:
        return None
