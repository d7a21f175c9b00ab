"""The words of the reports: method and error-bound statements, provenance rows."""

from __future__ import annotations

__all__ = ["METHOD_SWEEP", "METHOD_SINGLE", "ERROR_BOUND", "describe_allocation", "settings_rows", "versions_rows"]

_METHOD_CORE = (
    "For one neighbour pair the released noisy counts are a composition of discrete Gaussian mechanisms "
    "N_Z(0, σ²) with exact rational variances. exactdp computes the exact privacy-loss distribution of the "
    "composition on an integer lattice — every threshold an exact integer, also for the Bureau's irrational "
    "ε — and its tails by a tilted-contour trapezoid rule with a certified sieve (or by exact lattice "
    "convolution, or, beyond 64-bit lattices, by a lattice-free smoothed inversion that returns certified "
    "brackets). δ(ε) = P[L > ε] − e^ε·Q[L > ε], ε(δ) is the smallest ε with δ(ε) ≤ δ, and the f-DP trade-off "
    "curve is the randomised Neyman–Pearson curve. Reference: Su, Su & Wang, exact privacy accounting for "
    "the 2020 U.S. Census; Canonne, Kamath & Steinke (2020) for the discrete Gaussian."
)

METHOD_SWEEP = (
    _METHOD_CORE,
    "A person's record lies on one allocation path (the geographic levels at which its counts are released and "
    "their zCDP budgets); a neighbouring dataset changes one record from path i to path j. The release's "
    "privacy profile is the maximum over all pairs (i, j) of the pairs' profiles, and its trade-off curve the "
    "lower convex envelope of theirs (Dong, Roth & Su 2022). The Bureau's published ε is the Bun–Steinke "
    "conversion ε = ρ + 2√(ρ ln(1/δ)) of the total zCDP ρ, a valid but loose bound; the exact ε is smaller "
    "because zCDP-to-(ε, δ) conversions must hold for every mechanism with that ρ, not only for this one.",
)

METHOD_SINGLE = (_METHOD_CORE,)

ERROR_BOUND = (
    "Error bound. Every number carries a certified error bound: the sieve's dropped nodes, aliasing in both "
    "directions, theta-series truncation and floating-point rounding are each bounded and added; a tail is "
    "returned only when its bound is at most 1e-10 relative, else the engine refines or refuses (it never "
    "guesses). The value reported as the number to cite is the conservative side of the certified result — an "
    "upper bound for δ and ε, a lower bound for the trade-off β — so it is a valid privacy guarantee, not an "
    "estimate. Maxima over pairs are taken on certified bounds (the overall δ lies between the largest lower "
    "and the largest upper bound)."
)


def describe_allocation(alloc: dict, allocation=None) -> tuple:
    """Provenance rows of an allocation: ``alloc`` is the manifest's ``allocation``
    entry (name, content hash, paths, total ρ); ``allocation`` the
    :class:`~exactdp.census.allocations.Allocation` itself when known, else a built-in
    allocation of that name whose content hash matches is looked up."""
    rows = [("allocation", alloc["name"]), ("allocation content hash", alloc.get("content_hash", "?")),
            ("total zCDP ρ", str(alloc.get("total_rho", "?"))), ("allocation paths", str(alloc.get("n_paths", "?")))]
    if allocation is None:
        allocation = _builtin(alloc)
    if allocation is None:
        rows.append(("source", "a user allocation file (not a built-in allocation of this exactdp)"))
        return tuple(rows)
    rows.append(("description", " ".join(allocation.description.split())))
    rows.append(("levels", ", ".join(allocation.levels)))
    rows += [(f"provenance: {k}", v) for k, v in allocation.provenance.items()]
    return tuple(rows)


def _builtin(alloc: dict):
    from exactdp.census.allocations import builtin_allocations, load_allocation

    if alloc.get("name") not in builtin_allocations():
        return None
    found = load_allocation(alloc["name"])
    return found if found.content_hash() == alloc.get("content_hash") else None


_SETTINGS = {
    "tradeoff_half": "trade-off vertices per side",
    "alpha_min": "smallest type I error of the trade-off vertices",
    "rel_tol": "certified relative accuracy of each tail",
    "lam_step_sd": "quadrature tilt spacing (standard deviations)",
    "envelope_points": "points of the common α grid",
}


def settings_rows(settings: dict) -> tuple:
    """Provenance rows of a sweep's settings (the target δ are listed elsewhere)."""
    return tuple((f"setting: {_SETTINGS.get(k, k)}", str(v)) for k, v in settings.items() if k != "deltas")


def versions_rows(versions: dict) -> tuple:
    """Provenance rows of the software versions (exactdp first)."""
    rows = [("exactdp version", versions.get("exactdp", "?"))]
    others = ", ".join(f"{k} {v}" for k, v in versions.items() if k != "exactdp")
    if others:
        rows.append(("software", others))
    return tuple(rows)
