"""Named ρ presets: the 2020 PL 94-171 budgets of the GVHR ("detailed") query.

Provenance
----------
* ``ρ_global`` in production is ``1/global_scale²`` with ``global_scale = 339/542``, i.e.
  ``(542/339)² ≈ 2.55623`` (Census DAS production settings, redistricting run; quoted in
  the project notes ``../shared/notes/disclosure_risk.md`` §3, beside the checkout).
  Kazan and Reiter (arXiv 2204.04253, §2 and Table 2) round it to ``2.56``.
* Per-geolevel proportions (all /4099) and the GVHR per-query proportions of the block
  (3945/4097) and block group (1288/4099) are those of the issue text and of the paper's
  Table 2 (the seed quotes ``2.56·165/4099 ≈ 0.103`` and ``0.103·3945/4097 ≈ 0.099``).
* The tract, county, state and US rows come from the notes' table (DAS production code);
  they are used only by the ℓ-level uniqueness attack of the paper's supplement §S1.3.
  Treat them as unverified until the lead's allocations module confirms them.

This table is deliberately local to :mod:`exactdp.risk`; it does not depend on the
project-wide allocations module.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.numerics.exact import InputError

__all__ = [
    "RHO_GLOBAL",
    "LEVELS",
    "LEVEL_PROPORTION",
    "GVHR_PROPORTION",
    "BudgetPreset",
    "PRESETS",
    "preset",
    "gvhr_rho",
]

#: ρ_global by preset name.
RHO_GLOBAL = {
    "production": Fraction(542, 339) ** 2,
    "paper": Fraction(256, 100),
}

#: Geographic levels from the lowest (level 1, block) up (level 6, US).
LEVELS = ("block", "block_group", "tract", "county", "state", "us")

#: Share of ρ_global given to each geolevel.
LEVEL_PROPORTION = {
    "block": Fraction(165, 4099),
    "block_group": Fraction(1256, 4099),
    "tract": Fraction(687, 4099),
    "county": Fraction(447, 4099),
    "state": Fraction(1440, 4099),
    "us": Fraction(104, 4099),
}

#: Share of the geolevel's ρ given to the GVHR ("detailed") query.
GVHR_PROPORTION = {
    "block": Fraction(3945, 4097),
    "block_group": Fraction(1288, 4099),
    "tract": Fraction(241, 2051),
    "county": Fraction(754, 4097),
    "state": Fraction(230, 4097),
    "us": Fraction(189, 241),
}


def gvhr_rho(level: str, rho_global: Fraction) -> Fraction:
    """ρ of the GVHR query at ``level`` for a given ρ_global.

    Notes
    -----
    Exact product ``ρ_global · (level share) · (GVHR share)``; provenance of the shares in
    the module docstring.
    """
    if level not in LEVEL_PROPORTION:
        raise InputError("level", level, f"must be one of {list(LEVELS)}")
    return Fraction(rho_global) * LEVEL_PROPORTION[level] * GVHR_PROPORTION[level]


@dataclass(frozen=True)
class BudgetPreset:
    """A named ρ_global with the GVHR ρ of each geolevel.

    Attributes
    ----------
    name : str
        ``"paper"`` (ρ_global = 2.56) or ``"production"`` (ρ_global = (542/339)²).
    rho_global : Fraction
    provenance : str
    """

    name: str
    rho_global: Fraction
    provenance: str

    def rho(self, level: str) -> Fraction:
        """The GVHR ρ at ``level`` (exact rational)."""
        return gvhr_rho(level, self.rho_global)

    @property
    def rho_block(self) -> Fraction:
        """ρ1 of the paper: the block GVHR query."""
        return self.rho("block")

    @property
    def rho_block_group(self) -> Fraction:
        """ρ2 of the paper: the block-group GVHR query."""
        return self.rho("block_group")

    def level_rhos(self, ell: int | None = None) -> tuple:
        """ρ of levels 1..ell (block upwards), for the ℓ-level uniqueness attack."""
        ell = len(LEVELS) if ell is None else int(ell)
        if not 1 <= ell <= len(LEVELS):
            raise InputError("ell", ell, f"must be in 1..{len(LEVELS)}")
        return tuple(self.rho(level) for level in LEVELS[:ell])


PRESETS = {
    "paper": BudgetPreset("paper", RHO_GLOBAL["paper"], "Kazan and Reiter's rounding ρ_global = 2.56"),
    "production": BudgetPreset(
        "production", RHO_GLOBAL["production"], "2020 PL 94-171 production ρ_global = (542/339)²"
    ),
}


def preset(name: str) -> BudgetPreset:
    """Look up a :class:`BudgetPreset` by name (``"paper"`` or ``"production"``).

    Notes
    -----
    ``paper``: ρ_global = 2.56 (Kazan and Reiter, §2); ``production``: (542/339)² (2020
    PL 94-171 production settings).
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise InputError("preset", name, f"must be one of {sorted(PRESETS)}") from None
