"""The run machinery that sweep, tune, calibrate, release and report share.

* :mod:`exactdp.runs.files` — atomic durable writes, sealed json (:func:`seal_json`,
  :func:`read_sealed`), the folder lock, CSV and json reading;
* :mod:`exactdp.runs.backends` — where tasks run (loky, dask, ray) in completion order;
* :mod:`exactdp.runs.numtext` — the certified number text of the output files (MPFR).

Nothing here imports the sweep, the tuner or the report (they are layers above).
"""
