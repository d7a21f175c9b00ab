"""``report.html``: one self-contained page that a statistician can open, read and cite.

:func:`write_report` renders a :class:`Report` (what a job found) into ``report.html`` in
its output folder.  The page needs nothing but itself: the style sheet is inline, every
figure is a PNG embedded as a ``data:`` URI (or an inline SVG), there is no script, and
a Content-Security-Policy forbids every other source, so it opens offline, from a mail
attachment or a shared drive, and looks the same in ten years.  Everything in it comes
from the job's files; the only run-dependent text is what the caller puts in.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

from exactdp.report.columns import column_dictionary
from exactdp.report.style import CSS

__all__ = ["Report", "Headline", "FigureRef", "Section", "write_report", "render_report", "REPORT_FILE"]

REPORT_FILE = "report.html"

#: no network, no script, no frame: only inline styles and data: images
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


@dataclass(frozen=True)
class Headline:
    """One row of the headline table: a number to cite and its certified bound.

    Attributes
    ----------
    quantity : str
        What the number is, in words (``"overall ε at δ = 1e-10"``).
    cite : str
        The number to cite: the certified conservative value, rounded on the safe side.
    bound : str
        The certified statement it comes from (``"[24.4565144573, 24.4565144575]"``).
    comparison : str
        What it is compared with (the Bureau's value), or ``""``.
    """

    quantity: str
    cite: str
    bound: str
    comparison: str = ""


@dataclass(frozen=True)
class FigureRef:
    """A figure file of the output folder and its caption (``path`` relative to it or
    absolute; ``.png`` is embedded as a data URI, ``.svg`` inline)."""

    path: str
    caption: str
    alt: str = ""


@dataclass(frozen=True)
class Section:
    """A titled block of the page: paragraphs (plain text) and an optional table
    (``rows[0]`` is the header)."""

    title: str
    paragraphs: tuple = ()
    rows: tuple = ()
    anchor: str = ""


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` renders.

    Attributes
    ----------
    title : str
        The page's title (``"exactdp sweep: dhc-persons-2020"``).
    summary : str
        One paragraph: what was computed, in words.
    headline : tuple of Headline
        The numbers to cite, first the one to cite first.
    citation : str
        The sentence a reader can copy (``"... satisfies (ε, δ)-DP with ε ≤ 24.4566 at
        δ = 1e-10 ..."``).
    method : tuple of str
        Paragraphs: the method and the error-bound statement.
    provenance : tuple of (str, str)
        Where the numbers come from: allocation and its hash, software versions,
        settings, command.
    figures : tuple of FigureRef
        Captioned figures, in order.
    sections : tuple of Section
        Further tables (e.g. the numbers at every δ).
    columns : dict
        Descriptions of CSV columns beyond exactdp's own files (``{"file.csv":
        {"column": "meaning"}}``); every CSV in the folder is listed in the column
        dictionary either way.
    notes : tuple of str
        Warnings to show at the top (e.g. figures not drawn).
    """

    title: str
    summary: str
    headline: tuple
    citation: str
    method: tuple
    provenance: tuple
    figures: tuple = ()
    sections: tuple = ()
    columns: dict = field(default_factory=dict)
    notes: tuple = ()


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(rows, cls: str = "") -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{_e(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    attr = f' class="{cls}"' if cls else ""
    return f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure(out: Path, number: int, fig: FigureRef) -> str:
    path = Path(fig.path) if Path(fig.path).is_absolute() else out / fig.path
    alt = _e(fig.alt or fig.caption.split(".")[0])
    if path.suffix == ".svg":
        text = path.read_text(encoding="utf-8")
        body = text[text.index("<svg"):]
        body = body.replace("<svg", f'<svg role="img" aria-label="{alt}"', 1)
    else:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        body = f'<img src="data:image/png;base64,{data}" alt="{alt}">'
    name = _e(Path(fig.path).name)
    return (f'<figure id="figure-{number}" data-file="{name}">{body}<figcaption><b>Figure {number}.</b> '
            f"{_e(fig.caption)} <span class=\"file\">({name})</span></figcaption></figure>")


def _headline(rows) -> str:
    table = [("quantity", "number to cite", "certified statement", "for comparison")]
    table += [(h.quantity, h.cite, h.bound, h.comparison) for h in rows]
    return _table(table, "headline")


def _columns(out: Path, extra: dict) -> str:
    parts = []
    for entry in column_dictionary(out, extra):
        rows = [("column", "meaning")] + [(c, d) for c, d in entry.columns]
        parts.append(f'<h3 id="csv-{_e(entry.anchor)}"><code>{_e(entry.name)}</code></h3>'
                     f"<p>{_e(entry.about)}</p>{_table(rows, 'columns')}")
    if not parts:
        return "<p>This folder holds no CSV file.</p>"
    return "".join(parts)


def render_report(out_dir, report: Report) -> str:
    """The HTML text of ``report`` (figures and CSV files read from ``out_dir``)."""
    out = Path(out_dir)
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in report.notes)
    figures = "".join(_figure(out, k, f) for k, f in enumerate(report.figures, start=1))
    if not figures:
        figures = "<p>No figures were drawn for this job.</p>"
    sections = "".join(
        f'<section id="{_e(s.anchor or "section-" + str(k))}"><h2>{_e(s.title)}</h2>'
        + "".join(f"<p>{_e(p)}</p>" for p in s.paragraphs) + _table(s.rows, "numbers") + "</section>"
        for k, s in enumerate(report.sections, start=1))
    method = "".join(f"<p>{_e(p)}</p>" for p in report.method)
    prov = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in report.provenance)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(report.title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header><h1>{_e(report.title)}</h1><p class="lede">{_e(report.summary)}</p>{notes}</header>
<nav><a href="#headline">The number to cite</a> · <a href="#figures">Figures</a> · <a href="#method">Method and
error bound</a> · <a href="#provenance">Provenance</a> · <a href="#columns">Column dictionary</a></nav>
<section id="headline"><h2>The number to cite</h2>{_headline(report.headline)}
<blockquote class="cite">{_e(report.citation)}</blockquote>
<p class="small">“Number to cite” is the certified conservative value (an upper bound for ε and δ, a lower bound
for a trade-off β or a variance reduction) rounded on the safe side to the digits shown; the certified statement
beside it is what exactdp proved.</p></section>
<section id="figures"><h2>Figures</h2>{figures}</section>
{sections}
<section id="method"><h2>Method and error bound</h2>{method}</section>
<section id="provenance"><h2>Provenance</h2><table class="provenance"><tbody>{prov}</tbody></table></section>
<section id="columns"><h2>Column dictionary</h2><p>Every CSV file of this folder, column by column. Numbers are
decimal texts (20 significant digits unless stated); an error bound or a bracket accompanies every reported
value.</p>{_columns(out, report.columns)}</section>
<footer>Written by exactdp. This page is self-contained: it loads nothing from the network.</footer>
</main>
</body>
</html>
"""


def write_report(out_dir, report: Report) -> Path:
    """Write ``report.html`` into ``out_dir`` (atomically) and return its path.

    Parameters
    ----------
    out_dir : path
        The job's output folder; its figures (``report.figures``) are read from it and
        every CSV file in it is described in the column dictionary.
    report : Report
        The page's content: title, summary, headline numbers with their certified
        statements, the sentence to cite, method and error-bound paragraphs, provenance,
        figures, further tables and column descriptions for CSV files exactdp does not
        know (``report.columns``).

    Returns
    -------
    Path
        ``out_dir / "report.html"``.

    Notes
    -----
    The page is self-contained (inline CSS, figures embedded, no script, a
    Content-Security-Policy that forbids any other source).  It is written to a
    temporary file and renamed, so a reader never sees half a page.
    """
    import os

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = render_report(out, report)
    path = out / REPORT_FILE
    tmp = out / f".{REPORT_FILE}.tmp-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
