"""Noise calibration: the largest certified variance reduction meeting a target (ε, δ).

* :mod:`exactdp.calibration.calibrate` — one-parameter design families and their
  certified brackets (per design, per pair, per geolevel, whole release); the searches
  are :func:`~exactdp.numerics.search.expand`, :func:`~exactdp.numerics.search.bisect_real`
  and :func:`~exactdp.numerics.search.secant_narrow`; a
  :class:`~exactdp.calibration.calibrate.CalibrationResult` is a ``(lower, upper]``
  bracket on the scaling, ``value = upper``.
"""

from __future__ import annotations

from exactdp.calibration.calibrate import CalibrationResult, calibrate_design, calibrate_pair, calibrate_release

__all__ = ["CalibrationResult", "calibrate_design", "calibrate_pair", "calibrate_release"]
