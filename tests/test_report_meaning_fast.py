"""The report's "What this guarantee means" numbers, computed faster, equal their definitions:

* ``risk.guarantee.bayes_success_bound`` (the envelope's value at its breakpoints taken from
  the two lines that meet there) against the definition written here: the minimum over
  0, 1 and the breakpoints of ``(1 − p)·x + p·max over every line``, in exact Fractions,
  on many profiles (a sweep-like one of 85 points among them);
* ``report.meaning.curve_success_bounds`` (the vertex files split without ``csv`` and the
  lower vertices as arrays) against a reference here: ``csv.DictReader`` rows and each
  lower vertex by Python's ``math.nextafter`` and float operations, then
  ``bayes_success_from_vertices``; files with quotes, CRLF or ragged rows included.
"""

from __future__ import annotations

import csv
import math
import random
from fractions import Fraction

from exactdp.report.meaning import PRIORS, curve_success_bounds
from exactdp.risk.guarantee import bayes_success_bound, bayes_success_from_vertices, exp_upper


def _lines(pairs):
    """The lower lines of f from certified (ε, δ) (the module's definition, restated): 0,
    ``1 − δ − E·α`` and ``(1 − δ − α)/E`` with E = ``exp_upper(ε)`` ≥ e^ε."""
    out = [(Fraction(0), Fraction(0))]
    for eps, delta in pairs:
        big = exp_upper(eps)
        out += [(1 - delta, -big), ((1 - delta) / big, -1 / big)]
    return out


def _ref_bound(pairs, prior) -> Fraction:
    """Best attacker's success from (ε, δ) pairs: 1 − the minimum over [0, 1] of the convex
    piecewise-linear (1 − p)x + p·max_i line_i(x), taken over 0, 1 and every crossing of two
    lines (a superset of the kinks), the max over *every* line, all in Fractions."""
    p = Fraction(prior)
    lines = _lines([(Fraction(e), Fraction(d)) for e, d in pairs])
    xs = {Fraction(0), Fraction(1)}
    for i, (a1, b1) in enumerate(lines):
        for a2, b2 in lines[i + 1:]:
            if b1 != b2:
                x = (a1 - a2) / (b2 - b1)
                if 0 < x < 1:
                    xs.add(x)
    g = min((1 - p) * x + p * max(a + b * x for a, b in lines) for x in xs)
    return min(Fraction(1), 1 - g)


def test_bayes_success_bound_equals_the_definition():
    rng = random.Random(20261208)
    cases = []
    for _ in range(150):
        n = rng.randint(1, 10)
        cases.append(([(Fraction(rng.randint(0, 300), rng.choice([10, 100, 7])),
                        Fraction(rng.randint(0, 999), rng.choice([1000, 10**6, 3000]))) for _ in range(n)],
                       Fraction(rng.randint(0, 40), 40)))
    # sweep-like: ε rising as δ falls, twice (the Bureau's points beside)
    prof = [(Fraction(8 + 2 * k, 1) + Fraction(1, 3 + k), Fraction(1, 2 * 10 ** (2 * k + 1))) for k in range(6)]
    prof += [(e + Fraction(1, 2), d * 3 / 2) for e, d in prof]
    cases += [(prof, Fraction(p)) for p in PRIORS]
    for pairs, p in cases:
        assert bayes_success_bound(pairs, p) == _ref_bound(pairs, p), (pairs, p)


def _ref_lower(text: str, rel: str) -> float:
    x = math.nextafter(float(text), -math.inf)
    return math.nextafter(x * math.nextafter(1.0 - float(rel), -math.inf), -math.inf)


def _ref_curve(paths):
    best = None
    for path in paths:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        a = [_ref_lower(r["alpha"], r["alpha_rel_error"]) for r in rows]
        b = [_ref_lower(r["beta"], r["beta_rel_error"]) for r in rows]
        got = [bayes_success_from_vertices(a, b, float(Fraction(p))) for p in PRIORS]
        best = got if best is None else [max(x, y) for x, y in zip(best, got)]
    return None if best is None else tuple(best)


def test_curve_success_bounds_equal_the_row_by_row_reference(tmp_path):
    rng = random.Random(7)
    paths = []
    for f in range(8):
        n = rng.randint(3, 60)
        alphas = sorted(rng.random() for _ in range(n))
        rows = [(k - n // 2, f"{a:.25g}", f"{rng.random() * 1e-10:.2e}", f"{1 - a ** 0.5:.20g}",
                 f"{rng.random() * 1e-10:.2e}") for k, a in enumerate(alphas)]
        head = "threshold,alpha,alpha_rel_error,beta,beta_rel_error"
        body = "".join(",".join(map(str, r)) + "\n" for r in rows)
        if f == 3:  # CRLF line ends
            text = (head + "\n" + body).replace("\n", "\r\n")
        elif f == 4:  # a quoted field
            text = head + "\n" + body.replace(f"{rows[0][1]}", f'"{rows[0][1]}"', 1)
        elif f == 5:  # columns in another order and an extra one
            text = "beta_rel_error,beta,x,alpha_rel_error,alpha,threshold\n" + "".join(
                f"{r[4]},{r[3]},1,{r[2]},{r[1]},{r[0]}\n" for r in rows)
        elif f == 6:  # ragged: a line with an extra field (csv.DictReader keeps the named ones)
            lines = body.split("\n")
            lines[2] = lines[2] + ",1e-3"
            text = head + "\n" + "\n".join(lines)
        elif f == 7:  # no newline after the last row
            text = head + "\n" + body[:-1]
        else:
            text = head + "\n" + body
        path = tmp_path / f"p{f}.csv"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    for k in range(len(paths)):
        assert curve_success_bounds(paths[k:k + 1]) == _ref_curve(paths[k:k + 1]), k
    assert curve_success_bounds(paths) == _ref_curve(paths)
    assert curve_success_bounds([]) is None
