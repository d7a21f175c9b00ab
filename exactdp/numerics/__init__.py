"""The lowest layer: exact rationals, precision contexts, errors, monotone searches.

* :mod:`exactdp.numerics.errors` — :class:`InputError`, :class:`UncertifiedError`,
  :class:`LatticeTooLarge`;
* :mod:`exactdp.numerics.exact` — parsing to :class:`fractions.Fraction`, refusing floats;
* :mod:`exactdp.numerics.precision` — ``workdps``, the digit constants (``DPS_FLOAT64``,
  ``DPS_LOW``, ``DPS_RESULT``, ``DPS_ANALYSIS``, ``VERIFY_DPS``, ``DPS_GUARD``), ``EPS64``,
  ``to_mpf``;
* :mod:`exactdp.numerics.arith` — the one arithmetic layer: libmp primitives, raw-tuple
  helpers and the MPFR / libmp namespaces, precision and rounding explicit on every call;
* :mod:`exactdp.numerics.lazy` — lazy package attributes (PEP 562);
* :mod:`exactdp.numerics.search` — the one monotone search / bracketing helper
  (``expand``, ``first_true``, ``least_int``, ``bisect_real``, ``newton_root``,
  ``secant_narrow``, ``golden_max``/``golden_min``).

Nothing here imports any other part of exactdp.
"""
