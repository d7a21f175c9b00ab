"""The double-double text kernels (``kernels/dectext.py``, ``exactdp.runs.ddtext``) against
references computed here in mpmath at high precision with integer rounding.

* ``exp_texts``: the 25-digit text of e^x, x a float in (−87, 0] (random, near 0, tiny
  and extreme exponents), against e^x at 300 bits rounded to 25 digits with integers;
  where that e^x lies within 1e-8 units of a rounding midpoint the kernel must not decide;
* ``round_digits``: double-words placed on purpose next to rounding midpoints, powers of
  ten and carries: a value within the margin is never decided, a decided one is the
  integer rounding;
* ``grid_texts``: the chord values of a sampled curve recomputed here in 136-bit mpmath
  arithmetic (each operation correctly rounded, as MPFR's), printed by ``nstr`` at
  35 digits (``harness.decimal_text``) and ``float()`` of the error bound;
* ``tradeoff_texts``: undecided vertices go to ``vertex_value``, an undecided grid point
  makes the whole pair take the MPFR path (``None``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from exactdp.kernels import dectext
from hypothesis import given, settings
from hypothesis import strategies as st

import exactdp.runs.ddtext as ddtext
from exactdp.runs.ddtext import decimal_of, rows_text, tradeoff_texts, vertex_texts

from harness import decimal_text

P10, M10, INV_FACT = dectext.dd_tables()
SETTINGS = settings(derandomize=True, max_examples=60, deadline=None)


def _round25(x: float):
    """``(q, e, distance of the exact e^x to the nearest midpoint in units)`` by integers."""
    with mpmath.workprec(300):
        y = mpmath.exp(mpmath.mpf(x))
        e = int(mpmath.floor(mpmath.log10(y)))
        for _ in range(3):
            scaled = y * mpmath.mpf(10) ** (24 - e)
            if scaled < 10**24:
                e -= 1
            elif scaled >= 10**25:
                e += 1
            else:
                break
        big = int(mpmath.floor(scaled * 2**100))  # y·10^(24−e)·2^100, truncated
    q, frac = big >> 100, big & ((1 << 100) - 1)
    dist = abs(frac - (1 << 99)) / 2.0**100
    if frac >= 1 << 99:
        q += 1
        if q == 10**25:
            q, e = 10**24, e + 1
    return q, e, dist


def _text25(q: int, e: int) -> str:
    return decimal_text(f"{q}e{e - 24}", 25)


def _check_exp(xs):
    x = np.array(xs, dtype=np.float64)
    buf, lens, dec, status = dectext.exp_texts(x, P10, M10, INV_FACT, ddtext.EXP_EXTRA)
    texts = rows_text(buf, lens)
    undecided = 0
    for i, xi in enumerate(xs):
        q, e, dist = _round25(float(xi))
        if dist < 1e-8:
            assert status[i] != dectext.TEXT_OK, (xi, texts[i])
        if status[i] == dectext.TEXT_OK:
            assert texts[i] == _text25(q, e), (xi, texts[i], q, e)
            assert tuple(dec[i]) == (q // 10**13, q % 10**13, e)
        else:
            undecided += 1
    return undecided


@SETTINGS
@given(st.lists(st.floats(min_value=-86.99, max_value=0.0), min_size=1, max_size=20))
def test_exp_texts_random(xs):
    assert _check_exp(xs) <= max(2, len(xs) // 10)


def test_exp_texts_extremes():
    xs = [0.0, -0.0, -5e-324, -1e-300, -1e-17, -4.440892098500626e-16, -1e-10, -math.log(10), -2 * math.log(10),
          -86.98, -80.48085952857195, -1.0, -0.5, -0.34657359027997264, -0.34657359027997275, -35 * math.log(10)]
    xs += [math.nextafter(v, 0.0) for v in xs[6:]] + [math.nextafter(v, -1.0) for v in xs[6:]]
    assert _check_exp(xs) <= 3
    # outside the kernel's range: the Python path
    _, _, _, status = dectext.exp_texts(np.array([-87.5, 0.5, math.inf, -math.inf, math.nan]), P10, M10, INV_FACT,
                                        ddtext.EXP_EXTRA)
    assert (status == dectext.TEXT_PYTHON).all()


def _near(q: int, e: int, offset_units: float, nd: int):
    """A double-word within 1e-30 relative of ``(q + 1/2 + offset)·10^(e−nd+1)``."""
    with mpmath.workprec(300):
        v = (mpmath.mpf(q) + mpmath.mpf(0.5) + mpmath.mpf(offset_units)) * mpmath.mpf(10) ** (e - nd + 1)
        hi = float(v)
        lo = float(v - hi)
    return hi, lo


@SETTINGS
@given(st.integers(min_value=0, max_value=10**25), st.integers(min_value=-38, max_value=20),
       st.sampled_from([-1e-3, -1e-6, -2e-9, -1e-10, 0.0, 1e-10, 1e-9 / 2, 2e-9, 1e-6, 1e-3, 0.3, -0.3]),
       st.sampled_from([20, 25]))
def test_round_digits_near_midpoints(qseed, e, off, nd):
    q = 10 ** (nd - 1) + qseed % (9 * 10 ** (nd - 1))
    if qseed % 7 == 0:  # carries: 99…9 + 1/2
        q = 10**nd - 1
    hi, lo = _near(q, e, off, nd)
    digits = np.zeros(nd, dtype=np.int64)
    out = np.zeros(3, dtype=np.int64)
    rad = abs(hi) * 1e-33
    ok = dectext.round_digits(hi, lo, rad, nd, P10, M10, digits, out)
    # the double-word is within 1e-30 relative of the target: ≤ 1e-5 units (nd ≤ 25)
    if abs(off) <= 1e-9:
        assert not ok
    if ok:
        assert abs(off) > 1e-9
        want = q + (1 if off > 0 else 0)
        we = e
        if want == 10**nd:
            want, we = 10 ** (nd - 1), e + 1
        got = int(digits.astype(np.uint8).tobytes().decode())
        assert (got, int(out[2])) == (want, we)
        assert int(out[0]) * 10**13 + int(out[1]) == want


# ------------------------------------------------------------------ grid chords


def _distinct(rng, n: int) -> list:
    out: set = set()
    while len(out) < n:
        out.add(rng.randrange(10**24, 10**25))
    return sorted(out)


def _curve(n: int, rng):
    """n vertices as 25-digit decimals (α ascending, β descending)."""
    alphas = _distinct(rng, n)
    exps_a = sorted(rng.choice((-30, -12, -5, -3, -2, -1, -1, -1)) for _ in range(n))
    va = [(q, e) for q, e in zip(alphas, exps_a)]
    va.sort(key=lambda t: (t[1], t[0]))
    betas = _distinct(rng, n)[::-1]
    exps_b = sorted((rng.choice((-34, -20, -8, -3, -1, -1)) for _ in range(n)), reverse=True)
    vb = sorted(zip(betas, exps_b), key=lambda t: (t[1], t[0]), reverse=True)
    return va, vb


def _ref_grid(va, vb, rel_a, rel_b, grid):
    """interpolate_grid in 136-bit mpmath arithmetic, texts by nstr (``decimal_text``)."""
    out = []
    with mpmath.workprec(136):
        A = [mpmath.mpf(f"{q}e{e - 24}") for q, e in va]
        B = [mpmath.mpf(f"{q}e{e - 24}") for q, e in vb]
        EA = [a * mpmath.mpf(r) for a, r in zip(A, rel_a)]
        EB = [b * mpmath.mpf(r) for b, r in zip(B, rel_b)]
        G = [mpmath.mpf(f"{q}e{e - 24}") for q, e in grid]
        r = 0
        for al in G:
            if al <= A[0]:
                b, err = B[0], EB[0]
            elif al >= A[-1]:
                b, err = B[-1], EB[-1]
            else:
                while r < len(A) and not al < A[r]:
                    r += 1
                i0, i1 = r - 1, r
                err = max(EB[i0], EB[i1])
                if A[i1] == A[i0]:
                    b = min(B[i0], B[i1])
                else:
                    s = (B[i1] - B[i0]) / (A[i1] - A[i0])
                    b = B[i0] + s * (al - A[i0])
                    err = err + abs(s) * max(EA[i0], EA[i1])
            out.append((decimal_text(b, 20), float(err)))
    return out


def _dec_array(pairs):
    return np.array([(q // 10**13, q % 10**13, e) for q, e in pairs], dtype=np.int64)


@SETTINGS
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=2, max_value=30))
def test_grid_texts_against_mpmath(seed, n):
    import random

    rng = random.Random(seed)
    va, vb = _curve(n, rng)
    if seed % 3 == 0 and n > 3:  # shared α (a vertical step), and α = 1 exactly at the end
        va[1] = va[2]
        va[-1] = (10**24, 0)
    rel_a = [rng.choice((4.44e-16, 1e-12, 3.3e-10)) * (1 + rng.random()) for _ in range(n)]
    rel_b = [rng.choice((4.44e-16, 1e-12, 3.3e-10)) * (1 + rng.random()) for _ in range(n)]
    grid = sorted({(rng.randrange(10**24, 10**25), rng.choice((-31, -13, -4, -2, -1, -1))) for _ in range(25)},
                  key=lambda t: (t[1], t[0]))
    grid = sorted(set(grid) | {va[0], va[-1], va[n // 2]}, key=lambda t: (t[1], t[0]))  # on vertices too
    buf, lens, errf, status = dectext.grid_texts(_dec_array(va), _dec_array(vb), np.array(rel_a), np.array(rel_b),
                                                 _dec_array(grid), P10, M10)
    texts = rows_text(buf, lens)
    ref = _ref_grid(va, vb, rel_a, rel_b, grid)
    for g, (t, e) in enumerate(ref):
        if status[g] == dectext.TEXT_OK:
            assert (texts[g], float(errf[g])) == (t, e), (g, texts[g], t, errf[g], e)
    assert (status != dectext.TEXT_OK).sum() <= 1


def test_decimal_of():
    assert decimal_of("0.001234567890123456789012345") == (123456789012, 3456789012345, -3)
    assert decimal_of("1.000000000000000000000000") == (100000000000, 0, 0)
    assert decimal_of("1.234567890123456789012345e-20") == (123456789012, 3456789012345, -20)
    assert decimal_of("0") is None and decimal_of("1.5") is None


def test_tradeoff_texts_fallbacks(monkeypatch):
    """Vertices the kernel leaves to Python take vertex_value's text; an undecided grid point
    sends the pair to the MPFR path."""
    keys = [(-100.0, 1e-12), (-0.3, 1e-12), (0.0, 4.44e-16), (-1e-10, 2e-16)]
    texts, dec = vertex_texts(keys)
    with mpmath.workprec(300):
        for (lv, _), t in zip(keys, texts):
            assert t == decimal_text(mpmath.exp(mpmath.mpf(lv)), 25)
    calls = []
    real = ddtext.vertex_value
    monkeypatch.setattr(ddtext, "vertex_value", lambda *a: calls.append(a) or real(*a))
    vertex_texts(keys)
    assert [c[0] for c in calls] == [-100.0]
    grid = ("0.5000000000000000000000000",)
    ia, ib = [0, 1, 2], [2, 1, 0]
    # β at α = 0.5 is the first vertex's, e^-1e-10 = 0.99999999990000000000|49999…: its
    # 25-digit text ends in …50000, a 20-digit midpoint: undecided, the MPFR path
    assert tradeoff_texts(keys[1:], ia, ib, grid, "h\n") is None
    keys = keys[:3] + [(-1e-3, 2e-16)]
    assert tradeoff_texts(keys[1:], ia, ib, grid, "h\n") is not None

    def undecided(*args):
        buf, lens, errf, status = dectext.grid_texts(*args)
        status[:] = dectext.TEXT_PYTHON
        return buf, lens, errf, status

    monkeypatch.setattr(ddtext, "grid_texts", undecided)
    assert tradeoff_texts(keys[1:], ia, ib, grid, "h\n") is None


def test_rows_text_one_pass_equals_row_slices():
    """``rows_text`` (the buffer blanked past each length, decoded and split once) gives each
    row's first ``lens[i]`` characters, as slicing row by row does; rows with a blank or of
    length 0 take the row-by-row path."""
    TEXT_WIDTH = dectext.TEXT_WIDTH
    rng = np.random.default_rng(20261208)
    alphabet = np.array([ord(c) for c in "0123456789.e+-"], dtype=np.int64)
    cases = ((1, False, False), (401, False, False), (37, True, False), (37, False, True), (0, False, False))
    for n, blank, empty in cases:
        lens = rng.integers(1, TEXT_WIDTH + 1, size=n).astype(np.int64)
        buf = alphabet[rng.integers(0, alphabet.size, size=(n, TEXT_WIDTH))]
        buf[np.arange(TEXT_WIDTH)[None, :] >= lens[:, None]] = 0  # the kernels' zero padding
        if blank:
            buf[n // 2, 0] = 32
        if empty:
            lens[n // 3] = 0
            buf[n // 3] = 0
        raw = bytes(buf.astype(np.uint8).ravel().tolist()).decode("ascii")
        ref = [raw[TEXT_WIDTH * i: TEXT_WIDTH * i + int(m)] for i, m in enumerate(lens)]
        assert rows_text(buf, lens) == ref
