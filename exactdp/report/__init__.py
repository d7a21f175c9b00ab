"""``report.html``: the page a statistician opens, reads, cites and circulates.

Every output folder of ``exactdp sweep``, ``exactdp release --out`` and ``exactdp
calibrate --out`` gets a self-contained ``report.html`` (no network: inline style,
embedded figures, no script): the number to cite with its certified bound, the sentence
to cite it with, captioned figures, the method and error-bound statement, provenance
(allocation, versions, settings) and a column dictionary of every CSV file in the folder.

* :func:`write_report` — the general writer (for any job, e.g. ``exactdp tune``): pass a
  :class:`Report` built from :class:`Headline`, :class:`FigureRef` and :class:`Section`;
* :func:`write_sweep_report` — the report of a finished sweep folder (the sweep's driver
  calls it);
* :func:`write_release_report`, :func:`write_calibration_report` — the folders of
  ``exactdp release --out`` and ``exactdp calibrate --out`` (their CSV file and figure,
  then the page);
* :func:`round_up` / :func:`round_down` — a certified decimal rounded on its safe side;
  :func:`to_text` — an exact or binary number as a decimal text rounded in a chosen direction.
"""

from __future__ import annotations

from exactdp.report.columns import SCHEMAS, column_dictionary
from exactdp.report.document import REPORT_FILE, FigureRef, Headline, Report, Section, render_report, write_report
from exactdp.report.jobs import write_calibration_report, write_release_report
from exactdp.report.numbers import round_down, round_up, to_text
from exactdp.report.sweep import sweep_report, write_sweep_report

__all__ = [
    "write_report", "render_report", "Report", "Headline", "FigureRef", "Section", "REPORT_FILE",
    "write_sweep_report", "sweep_report", "write_release_report", "write_calibration_report",
    "column_dictionary", "SCHEMAS", "round_up", "round_down", "to_text",
]
