"""Studies: jobs that combine several runs into one answer (a layer above the sweep).

* :mod:`exactdp.studies.census2020` — ``exactdp census-2020``: every formally private 2020
  Census product (the DHC persons file by a sweep over all its neighbour pairs), US and PR,
  and their composition, for one page (:mod:`exactdp.report.census2020`).
"""
