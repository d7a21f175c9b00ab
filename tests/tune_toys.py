"""Small allocations for the tests of ``exactdp tune`` (test data, nothing of exactdp)."""

from __future__ import annotations

#: two levels, two queries, two paths: on path 2, level A carries B's budget
#: ((3/8 + 1/4) / (3/8) = 5/3)
TWO_LEVELS = """format = "exactdp-allocation/1"
name = "toy-two-levels"
description = "A two-level, two-query test allocation with one bypassed path."
levels = ["A", "B"]
queries = ["x", "y"]
[provenance]
source = "test"
[base]
A = ["1/8", "1/4"]
B = ["1/8", "1/8"]
[paths]
"1" = ["1", "1"]
"2" = ["5/3", "0"]
"""

#: the same with one query per level: few distinct variances per pair (cheap brute force)
ONE_QUERY = (TWO_LEVELS.replace('queries = ["x", "y"]', 'queries = ["x"]').replace('["1/8", "1/4"]', '["3/8"]')
             .replace('["1/8", "1/8"]', '["1/4"]'))

#: three levels, four paths: path 2 A carries B, path 3 C carries B, path 4 A carries B and C
THREE_LEVELS = """format = "exactdp-allocation/1"
name = "toy-three-levels"
description = "A three-level, two-query test allocation with bypassed levels."
levels = ["A", "B", "C"]
queries = ["x", "y"]
[provenance]
source = "test"
[base]
A = ["1/8", "1/4"]
B = ["1/8", "1/8"]
C = ["1/16", "3/16"]
[paths]
"1" = ["1", "1", "1"]
"2" = ["5/3", "0", "1"]
"3" = ["1", "0", "2"]
"4" = ["7/3", "0", "0"]
"""
