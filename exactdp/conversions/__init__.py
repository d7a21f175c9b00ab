"""Conversions and approximations beside the exact profile: zCDP (Bun–Steinke), CKS,
exact Rényi/RDP, GDP, and the Edgeworth expansion, with their plots.

* :mod:`exactdp.conversions.bounds` — the bounds (each a valid bound where it claims to be),
  the one implementation of the Bun–Steinke, CKS and Gaussian conversions (also used by
  :mod:`exactdp.countdep` and :mod:`exactdp.calibration`); results are
  :class:`~exactdp.conversions.bounds.BoundPoint` (``estimate`` / ``error_bound`` /
  ``value`` / ``lower`` / ``upper``);
* :mod:`exactdp.conversions.edgeworth` — Edgeworth approximation of δ(ε) and its rate;
* :mod:`exactdp.conversions.plots` — cross-check figures.

Builds on :mod:`exactdp.accounting`, :mod:`exactdp.dgauss` (the theta twin of the Rényi
divergence) and :mod:`exactdp.numerics` (the searches, the precision constants).
"""
