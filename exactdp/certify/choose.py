"""Which certificate a design gets: the lattice certificate where it fits, else meet in the middle.

:class:`~exactdp.certify.queries.Certifier` puts the design on its exact integer lattice and
needs one of its tail methods to fit (enumeration, trapezoid, conditioned); a design whose
weights share no small lattice (distinct decimal variances, say) fits none.  Such a design
gets :class:`~exactdp.certify.offlattice.MitmCertifier`, the meet-in-the-middle enumeration
over its incommensurate weights.  Both are rigorous on their own; each enclosure says which
one made it (``Enclosure.method``).
"""

from __future__ import annotations

from exactdp.certify.offlattice import MitmCertifier
from exactdp.certify.queries import Certifier
from exactdp.engine.lattice import LatticeSum, weights_exceed
from exactdp.mechanisms import Composition

__all__ = ["certifier_for", "LATTICE_WEIGHT_LIMIT"]

#: integer lattice weights at or beyond this are not tried on the lattice certificate
LATTICE_WEIGHT_LIMIT = 2**62


def certifier_for(design, **options):
    """The certificate for a design: a :class:`Certifier` when its lattice fits one of its
    tail methods (or a tail ``method`` is forced, or a LatticeSum is given), else a
    :class:`MitmCertifier` (``rel_width`` and ``levels`` pass on to either).

    Parameters
    ----------
    design : Composition or LatticeSum
    **options
        Options of :class:`Certifier`.

    Returns
    -------
    Certifier or MitmCertifier
    """
    if isinstance(design, LatticeSum) or options.get("method") is not None:
        return Certifier(design, **options)
    if isinstance(design, Composition) and not weights_exceed(design, LATTICE_WEIGHT_LIMIT):
        cert = Certifier(design, **options)
        try:
            _ = cert.tail_method  # builds the first level's tail oracle: OverflowError if none fits
        except OverflowError:
            pass
        else:
            return cert
    kept = {k: v for k, v in options.items() if k in ("rel_width", "levels")}
    kept.pop("levels", None)  # the lattice certificate's levels are not the enumeration's
    return MitmCertifier(design, **kept)
