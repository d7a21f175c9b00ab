"""The float64 rounding unit, defined once for the kernels and the Python layer.

:data:`EPS64` = 2⁻⁵² is the machine epsilon of binary64, twice the unit roundoff
u = 2⁻⁵³: one correctly rounded operation (normal range) has relative error ≤ u, so a
bound that counts ``k·EPS64`` for ``k`` roundings is conservative by a factor 2.  Every
float64 error bound of exactdp counts in EPS64 (:data:`exactdp.numerics.precision.EPS64`
is this one); a bound derived operation by operation in units of u uses :data:`UNIT_ROUNDOFF`
(the compensated sums of :mod:`exactdp.kernels.atom_sums` and the float screen of
:mod:`exactdp.accounting.screen`).  No other module defines either.
"""

from __future__ import annotations

__all__ = ["EPS64", "UNIT_ROUNDOFF"]

#: the machine epsilon of binary64 (2⁻⁵² = 2u): the unit of every float64 error bound
EPS64 = 2.0**-52
#: the unit roundoff of binary64 (u = 2⁻⁵³): the relative error of one correctly rounded
#: operation in the normal range; bounds derived operation by operation in u use this one
UNIT_ROUNDOFF = 2.0**-53
