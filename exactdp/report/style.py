"""The style sheet of ``report.html`` (inlined into the page: no file, no network)."""

from __future__ import annotations

__all__ = ["CSS"]

CSS = """
:root { --ink: #1b1f24; --muted: #59636e; --line: #d0d7de; --accent: #0b5cad; --bg: #ffffff; --soft: #f3f6f9; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7rem; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.3rem; margin: 1.8em 0 0.6em; padding-bottom: 0.2em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.02rem; margin: 1.4em 0 0.3em; }
p { margin: 0.5em 0; }
.lede { font-size: 1.05rem; color: var(--ink); }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; border-radius: 6px; }
.small, .file { color: var(--muted); font-size: 0.88rem; }
nav { margin: 10px 0 0; font-size: 0.92rem; color: var(--muted); }
nav a, a { color: var(--accent); text-decoration: none; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.92rem; width: 100%; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top;
  overflow-wrap: anywhere; }
table.numbers th { font-size: 0.84rem; hyphens: auto; }
table.numbers td { overflow-wrap: anywhere; }
#deploy table.numbers td:first-child, #cells table.numbers td:nth-child(2) { width: 34%; }
thead th { background: var(--soft); }
table.headline td:nth-child(2) { font-weight: 700; font-size: 1.08rem; white-space: nowrap; }
table.headline td:nth-child(3), table.numbers td, table.columns td:first-child { font-variant-numeric: tabular-nums;
  font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.86rem; }
table.provenance th { width: 26%; background: var(--soft); font-weight: 600; }
table.provenance td { word-break: break-word; }
blockquote.cite { margin: 0.8em 0; padding: 10px 14px; border-left: 4px solid var(--accent); background: var(--soft); }
figure { margin: 1.2em 0 1.8em; }
figure img, figure svg { display: block; max-width: 100%; height: auto; margin: 0 auto;
  border: 1px solid var(--line); }
figcaption { margin-top: 0.5em; font-size: 0.93rem; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
footer { margin-top: 3em; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line);
  padding-top: 0.8em; }
@media print { nav { display: none; } main { max-width: none; padding: 0; } figure { break-inside: avoid; }
  .scroll { overflow: visible; } table { font-size: 0.78rem; } }
"""
