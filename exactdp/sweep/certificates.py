"""``exactdp sweep --certify-headline``: Arb enclosures of the summary's headline numbers.

After a sweep, for each target δ the overall δ at the Bureau's ε and the overall ε at δ
(maxima over pairs, as in ``summary.csv``) are enclosed by ball arithmetic
(:mod:`exactdp.certify.headline`) from the pairs' own files, and the enclosures are added
to ``manifest.json`` under ``headline_certificates`` (atomically).  Nothing else of the
sweep's outputs changes.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path

from exactdp.certify.headline import HeadlineCertifier, PairBracket
from exactdp.sweep.io import MANIFEST, atomic_write_text, pair_paths, read_csv, read_json

__all__ = ["certify_headline"]


def certify_headline(out, allocation) -> dict:
    """Certify the headline of the sweep in ``out`` and record it in its manifest.

    Parameters
    ----------
    out : path
        A finished sweep's folder.
    allocation : Allocation
        The sweep's allocation (its ``pair_rhos`` give the designs).

    Returns
    -------
    dict
        ``{target δ: {"delta_overall": {...}, "eps_overall": {...}}}`` as written.
    """
    out = Path(out)
    manifest = read_json(out / MANIFEST)
    if manifest.get("status") != "complete":
        raise ValueError(f"{out}: the sweep is not complete; finish it before --certify-headline")
    pairs = [tuple(int(x) for x in p.split("-")) for p in manifest["pairs"]]
    deltas = manifest["settings"]["deltas"]
    rows = {p: read_csv(pair_paths(out, *p)["curve"]) for p in pairs}
    head = HeadlineCertifier({p: allocation.pair_rhos(*p) for p in pairs})
    t0 = time.perf_counter()
    result = {}
    for r_idx, d in enumerate(deltas):
        dbr, ebr = [], []
        for p in pairs:
            row = rows[p][r_idx]
            est, err = Fraction(row["delta_exact"]), Fraction(row["delta_error_bound"])
            dbr.append(PairBracket(p, max(est - err, Fraction(0)), Fraction(row["delta_upper"]), est))
            ebr.append(PairBracket(p, Fraction(row["eps_lower"]), Fraction(row["eps_upper"]),
                                   Fraction(row["eps_exact"])))
        result[d] = head.target(Fraction(d), dbr, ebr)
    manifest["headline_certificates"] = {
        "method": "arb ball arithmetic (exactdp.certify); excluded pairs by their fast-path certified upper bound",
        "seconds": round(time.perf_counter() - t0, 3),
        "targets": result,
    }
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=False) + "\n")
    return result
