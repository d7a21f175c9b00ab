"""The lowest layer: exact rationals, precision contexts, errors, monotone searches.

* :mod:`exactdp.numerics.errors` — :class:`InputError`, :class:`UncertifiedError`,
  :class:`LatticeTooLarge`;
* :mod:`exactdp.numerics.exact` — parsing to :class:`fractions.Fraction`, refusing floats;
* :mod:`exactdp.numerics.precision` — ``workdps``, the digit constants, ``EPS64``,
  ``to_mpf``;
* :mod:`exactdp.numerics.search` — the one monotone search / bracketing helper.

Nothing here imports any other part of exactdp.
"""
