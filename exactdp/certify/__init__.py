"""Certificates anyone can check: Arb ball-arithmetic enclosures of δ(ε), ε(δ) and β(α).

What is proved.  For a composition of discrete Gaussian mechanisms with exact rational
parameters, :class:`Certifier` returns ``[lower, upper]`` (exact dyadic rationals) with
``lower ≤ exact value ≤ upper``, where the exact value is δ(ε) (hockey-stick divergence),
ε(δ) = min{ε : δ(ε) ≤ δ}, or the optimal type-II error β = f(α).  Every rounding is inside
Arb's balls (python-flint); every term the computation leaves out is bounded analytically,
the bound evaluated in balls and added to the enclosure:

=====================================  ===================================================
left-out term                          bound (where it is proved)
=====================================  ===================================================
trapezoid nodes dropped by the sieve   ``R·e^{−T}``: Poisson form of Θ, wrapped-normal
                                       monotonicity (triple product) — :mod:`.nodes`
aliasing from below (``j < 0``)        ``e^{−λN}/(1 − e^{−λN})`` — :mod:`.trapezoid`
aliasing from above (``j > 0``)        sub-Gaussian tails, geometric series — :mod:`.trapezoid`
theta series truncation                inside Arb's ``acb_modular_theta`` ball
Poisson terms of Θ beyond ``|k| ≤ K``  geometric tail, per group — :mod:`.dgball`
truncated support of enumerated groups ``Σ m_g P(|X_g| > W_g)`` — :mod:`.enumeration`
conditioned atoms not integrated       sub-Gaussian bound per atom — :mod:`.enumeration`
=====================================  ===================================================

How.  The privacy-loss noise is put on its exact integer lattice
(:func:`exactdp.engine.lattice.lattice_of`: every event is an integer threshold ``S ≥ k``);
tails ``P(S ≥ k)`` come from one of three enclosures chosen by cost
(:class:`~exactdp.certify.tails.BallTails`): the tilted-contour trapezoid rule over this
package's own node selection, exact enumeration of small supports as Arb polynomials, or
enumeration of the coarse groups with the trapezoid rule for the rest.  Nothing is shared
with the float64 engine (:mod:`exactdp.engine.quadrature`, the sieve, the kernels): a
bug in one cannot hide in the other.  δ, ε and β follow from the tails by exact lattice
identities (:mod:`.queries`).  The full statement and proofs: ``docs/certificates.rst``.

Off the lattice.  A design whose weights share no small lattice (distinct decimal variances)
fits none of the tail methods; it gets :class:`~exactdp.certify.offlattice.MitmCertifier`:
each weight's loss atoms enumerated exactly in balls, the weights split into two halves,
half B sorted once, and δ(ε) = P(L > ε) − e^ε Q(L > ε) (and the ε and β identities of
:mod:`.offlattice`) summed by one merge with suffix/prefix sums; pairs the float64 order
cannot separate are decided in exact rationals; truncated and pruned mass bounded and
added (:mod:`.mitm`).  It shares nothing with the engine's own two-half enumeration
(:mod:`exactdp.engine.halves`).  :func:`~exactdp.certify.queries.certifier_for` chooses;
``Enclosure.method`` is ``"arb/meet-in-the-middle"`` for it.  A design beyond both (more
atoms per half than :data:`~exactdp.certify.mitm.MAX_HALF_ATOMS`) is refused.

Mixed kinds.  A :class:`~exactdp.kinds.Mixture` (discrete Laplace, randomized response, (ε, δ)
blocks, discrete and continuous Gaussians) gets :class:`~exactdp.certify.kinds.KindsCertifier`:
each kind's loss atoms enumerated from its output distributions (:mod:`.kind_atoms`), composed
exactly on one rational grid (or by a sparse merge), the (ε, δ) blocks' one-sided outputs split
off, continuous Gaussians by Arb's ``erfc`` conditioned on the atoms; ``Enclosure.method`` is
``"arb/kinds-enumeration"`` (``+gaussian-erfc``), or ``"arb/kinds-mitm"`` for a discrete design
beyond the full enumeration, met in the middle over two halves of its groups, each pruned below a
level that follows the query by the Gaussian halves' own :class:`~exactdp.certify.mitm.Pruner`
(:mod:`.kinds_mitm`); randomized response by its noise parameter (loss ±log R) by the net count of
its steps (:mod:`.kinds_noise`, ``+net-count``); continuous Gaussians beside a discrete part beyond the
full enumeration by their closed form summed over cells with exact moment series
(:mod:`.kinds_cells`, ``"arb/kinds-gaussian-cells"``).  It shares nothing with the mixed route
(:mod:`exactdp.engine.finite_loss`); a design beyond its budgets is refused in one line naming the
reason and what would work (exit 3).

>>> from exactdp.mechanisms import Composition
>>> from exactdp.certify import certify_delta
>>> enc = certify_delta(Composition.from_sigma2(["10000/11"] * 20), "1")
>>> enc.lower <= enc.upper and enc.relative_width < 1e-15
True
"""

from exactdp.certify.balls import BallReal, bureau_epsilon
from exactdp.certify.check import certify_points, on_conservative_side
from exactdp.certify.kinds import KindsCertifier
from exactdp.certify.offlattice import MitmCertifier
from exactdp.certify.queries import Certifier, certifier_for, certify_delta, certify_epsilon, certify_tradeoff
from exactdp.certify.result import Enclosure

__all__ = ["Certifier", "MitmCertifier", "KindsCertifier", "certifier_for", "Enclosure", "certify_delta",
           "certify_epsilon", "certify_tradeoff", "certify_points", "on_conservative_side", "BallReal",
           "bureau_epsilon"]
