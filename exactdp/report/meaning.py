"""The report section "What this guarantee means": ε, δ and the trade-off curve in words.

Every number in the section is a certified upper bound from :mod:`exactdp.risk.guarantee`
(written rounded up): the likelihood-ratio reading of ε, what δ admits, and what the best
attacker can learn about one record — from the exact trade-off curve where the job has
one, from the exact (ε, δ), and from the (ε, δ) the publisher quoted.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import numpy as np

from exactdp.report.document import Section
from exactdp.report.numbers import round_up
from exactdp.risk.guarantee import bayes_success_from_vertices, meaning

__all__ = ["meaning_section", "curve_success_bounds", "PRIORS"]

#: the attacker's prior probabilities of the table
PRIORS = ("1/2", "1/10", "1/100", "1/1000")


def _lower(text: str, rel: str) -> float:
    """A float ≤ ``text·(1 − rel)`` (decimal texts; every step rounded down)."""
    x = np.nextafter(float(text), -np.inf)
    return float(np.nextafter(x * np.nextafter(1.0 - float(rel), -np.inf), -np.inf))


def _lower_array(texts, rels) -> np.ndarray:
    """:func:`_lower` of each ``(text, rel)``, as one float64 array: the same IEEE steps
    (``float`` of each text, then numpy's ``nextafter``, ``−`` and ``×`` elementwise)."""
    x = np.nextafter(np.fromiter(map(float, texts), dtype=np.float64, count=len(texts)), -np.inf)
    r = np.nextafter(1.0 - np.fromiter(map(float, rels), dtype=np.float64, count=len(rels)), -np.inf)
    return np.nextafter(x * r, -np.inf)


_VERTEX_COLUMNS = ("alpha", "alpha_rel_error", "beta", "beta_rel_error")


def _vertex_columns(path) -> tuple:
    """The ``alpha``, ``alpha_rel_error``, ``beta``, ``beta_rel_error`` columns (texts) of a
    trade-off vertex file, as ``csv.DictReader`` reads them: sliced from one split of the
    body when the file is ASCII without a quote or a carriage return, ends in a newline, has
    no empty line, distinct header names including these four and as many commas on every
    line as the header (counted by numpy on its bytes): the sweep's files; else by
    ``csv.DictReader`` itself."""
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    end = text.find("\n")
    if end > 0 and text.endswith("\n") and text.isascii() and '"' not in text and "\r" not in text \
            and "\n\n" not in text:
        head = text[:end].split(",")
        width = len(head)
        if len(set(head)) == width and all(c in head for c in _VERTEX_COLUMNS):
            body = text[end + 1:]
            raw = np.frombuffer(body.encode("ascii"), dtype=np.uint8)
            commas = np.cumsum(raw == 44)[raw == 10]  # commas up to each line's end
            if (np.diff(commas, prepend=0) == width - 1).all():
                flat = body[:-1].replace("\n", ",").split(",") if body else []
                return tuple(flat[head.index(c)::width] for c in _VERTEX_COLUMNS)
    with open(path, encoding="utf-8", newline="") as fh:
        dict_rows = list(csv.DictReader(fh))
    return tuple([r[c] for r in dict_rows] for c in _VERTEX_COLUMNS)


def curve_success_bounds(vertex_files: Iterable, priors=PRIORS) -> tuple | None:
    """Per prior, the largest (over the files) certified bound on the best attacker's
    success from the trade-off vertices of each file (``*_tradeoff.csv``: ``alpha``,
    ``alpha_rel_error``, ``beta``, ``beta_rel_error``), or None without files.

    The overall curve of several pairs is the convex hull of their minimum, and a linear
    functional has the same minimum over a function and over its hull, so the best attacker
    against the release is the best against its worst pair: the maximum over files.  Each
    file's lower vertices are :func:`_lower` of its texts, computed as arrays.
    """
    best = None
    ps = [float(Fraction(p)) for p in priors]
    for path in vertex_files:
        alpha, alpha_rel, beta, beta_rel = _vertex_columns(path)
        a = _lower_array(alpha, alpha_rel)
        b = _lower_array(beta, beta_rel)
        got = [bayes_success_from_vertices(a, b, p) for p in ps]
        best = got if best is None else [max(x, y) for x, y in zip(best, got)]
    return None if best is None else tuple(best)


def _pct(x) -> str:
    return f"{round_up(Fraction(x) * 100, 4)} %"


def meaning_section(epsilon: str, delta: str, *, quoted: tuple | None = None, curve: tuple | None = None,
                    profile: Iterable = (), who: str = "the release") -> Section:
    """The section for a certified ε (upper bound, decimal text) at ``delta``.

    Parameters
    ----------
    epsilon, delta : str
        The headline guarantee (ε a certified upper bound).
    quoted : (str, str), optional
        The publisher's (ε, δ) (e.g. the Bun–Steinke conversion of the zCDP ρ).
    curve : tuple of float, optional
        :func:`curve_success_bounds` for :data:`PRIORS` (from the exact trade-off curve).
    profile : iterable of (ε, δ)
        More certified points of the exact profile (sharpen the (ε, δ) column).
    who : str
        What the guarantee is of, for the sentences.

    Notes
    -----
    Method: :func:`exactdp.risk.guarantee.meaning` (exact rationals, e^ε rounded up) and
    :func:`~exactdp.risk.guarantee.bayes_success_from_vertices`.  Error bound: every number is
    a certified upper bound rounded up.  Reference: Kairouz, Oh & Viswanath (2015); Dong,
    Roth & Su (2022).
    """
    m = meaning(epsilon, delta, profile=profile, priors=PRIORS)
    q = meaning(quoted[0], quoted[1], priors=PRIORS) if quoted else None
    paras = [
        f"ε bounds a likelihood ratio. With ε = {round_up(epsilon)} at δ = {delta}, for every set S of possible "
        f"outputs of {who}, Pr[S | a person's record as it is] ≤ e^ε · Pr[S | that record changed] + δ, and "
        f"e^ε ≤ {round_up(m.likelihood_ratio, 4)}. Read alone, a ratio this "
        + ("large allows outputs that reveal much about one record; how likely such outputs are is what δ and "
           "the trade-off curve measure." if m.likelihood_ratio > 100 else "small means no output can shift "
           "an attacker's odds much."),
        f"δ admits rare outputs beyond that ratio. The probability of an output whose likelihood ratio exceeds "
        f"e^(ε+1) is at most δ/(1 − e^−1) ≤ {round_up(m.tail_probability, 4)}; outside such outputs, an "
        "attacker's odds on one record against the other grow by at most e^(ε+1) (the last column below).",
        "What an attacker can learn. Consider an attacker who knows every other record and the noise design, "
        "and hesitates between a person's record as it is and one changed record (a neighbouring pair), with "
        "prior probability p on one of them. The table bounds the probability that the best possible attacker "
        "names the right record after seeing the output; guessing without the data is right with probability "
        "max(p, 1 − p)."
        + (" The exact column uses the certified trade-off curve (the worst neighbour pair); the (ε, δ) columns "
           "use only those two numbers, which is all a conversion such as the publisher's conveys."
           if curve else " The columns use the certified (ε, δ) and the publisher's (ε, δ)."),
        "Assumptions: these are worst cases over all attackers and all covered neighbour pairs (the "
        "differential-privacy threat model); real attackers know less. The posterior bound holds except on "
        "outputs of total probability at most the δ reading above.",
    ]
    head = ["prior p", "guess without data"]
    if curve:
        head.append("best attacker, exact curve (≤)")
    head.append("best attacker, exact (ε, δ) (≤)")
    if q:
        head.append(f"best attacker, publisher's ε = {round_up(quoted[0])} (≤)")  # type: ignore[index]
    head.append("posterior after one output, exact ε (≤)")
    rows = [tuple(head)]
    for k, att in enumerate(m.attackers):
        row = [str(att.prior), _pct(max(att.prior, 1 - att.prior))]
        if curve:
            row.append(_pct(curve[k]))
        row.append(_pct(att.success))
        if q:
            row.append(_pct(q.attackers[k].success))
        row.append(_pct(att.posterior))
        rows.append(tuple(row))
    return Section("What this guarantee means", tuple(paras), tuple(rows), "meaning")


def pair_vertex_files(out: Path, pairs: Iterable[str]) -> list[Path]:
    """The trade-off vertex files of a sweep folder's pairs (``"i-j"``) that exist."""
    files = []
    for key in pairs:
        i, j = key.split("-")
        path = out / "pairs" / f"pair_{i}_{j}_tradeoff.csv"
        if path.is_file():
            files.append(path)
    return files
