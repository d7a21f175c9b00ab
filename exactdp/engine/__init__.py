"""The tail engine: rational weights onto an integer lattice, certified tails of the sum.

* :mod:`exactdp.engine.lattice` — weights → integer lattice, exact integer thresholds;
* :mod:`exactdp.engine.quadrature` — the sieved tilted-contour trapezoid rule (pure);
* :mod:`exactdp.engine.convolution` — exact lattice convolution for coarse designs;
* :mod:`exactdp.engine.conditioning` — quadrature conditioned on the coarse groups;
* :mod:`exactdp.engine.tails` — :class:`TailEngine`, which only chooses among them.

Imports :mod:`exactdp.numerics`, :mod:`exactdp.dgauss`, :mod:`exactdp.mechanisms` and the
kernels; nothing above.
"""

from __future__ import annotations

from exactdp.engine.lattice import LatticeSum, floor_exact, lattice_of
from exactdp.engine.quadrature import TailValue
from exactdp.engine.tails import TailEngine

__all__ = ["LatticeSum", "lattice_of", "floor_exact", "TailValue", "TailEngine"]
