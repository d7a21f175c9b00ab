"""Noise calibration: the largest certified variance reduction meeting a target (ε, δ).

* :mod:`exactdp.calibration.calibrate` — one-parameter design families and their
  monotone bracketing searches (per design, per pair, per geolevel, whole release).
"""

from __future__ import annotations

from exactdp.calibration.calibrate import CalibrationResult, calibrate_design, calibrate_pair, calibrate_release

__all__ = ["CalibrationResult", "calibrate_design", "calibrate_pair", "calibrate_release"]
