"""Conversions and approximations beside the exact profile: zCDP (Bun–Steinke), CKS,
exact Rényi/RDP, GDP, and the Edgeworth expansion, with their plots.

* :mod:`exactdp.conversions.bounds` — the bounds (each a valid bound where it claims to be);
* :mod:`exactdp.conversions.edgeworth` — Edgeworth approximation of δ(ε) and its rate;
* :mod:`exactdp.conversions.plots` — cross-check figures.
"""
