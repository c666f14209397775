"""A horizontal bar chart of the bench ratios, as SVG written by hand.

One bar per row that has a ratio, on a log scale from 0.1x to 1000x with a
line at 1x: bars to the right of it mean fwembed costs less. Output
depends only on the rows, so the same results give the same file.
"""

import math
from xml.sax.saxutils import escape

LOW, HIGH = 0.1, 1000.0
PLOT_W, BAR_H, GAP, TOP, RIGHT = 420, 18, 6, 56, 70
# Room per character of a label, generous for 12-pixel sans-serif text.
CHAR_W = 7
LEGEND = "against / fwembed, log scale: right of 1x, fwembed costs less. Kind of figure:"
COLOURS = {"host": "#d08c2c", "guest": "#3b7dd8", "bytes": "#3a9a5b", "count": "#777777"}


def x_of(ratio, label_w):
    """Horizontal position of ``ratio`` on the log scale, clamped to the plot."""
    ratio = min(max(ratio, LOW), HIGH)
    return label_w + PLOT_W * (math.log10(ratio) - math.log10(LOW)) / \
        (math.log10(HIGH) - math.log10(LOW))


def label_of(row):
    return f'{row["part"]}: {row["figure"]} ({row["unit"]}, vs {row["against"]})'


def chart(rows, title):
    bars = [r for r in rows if r.get("ratio") is not None]
    label_w = 16 + CHAR_W * max([len(label_of(r)) for r in bars] + [30])
    height = TOP + len(bars) * (BAR_H + GAP) + 40
    width = max(label_w + PLOT_W + RIGHT, 20 + CHAR_W * len(title))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
           f'<text x="10" y="38">{LEGEND}</text>']
    for i, (kind, colour) in enumerate(COLOURS.items()):
        x = 18 + CHAR_W * len(LEGEND) + i * 70
        out.append(f'<rect x="{x}" y="28" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 16}" y="38">{kind}</text>')
    for tick in (0.1, 1, 10, 100, 1000):
        x = x_of(tick, label_w)
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - 30}" '
                   f'stroke="{"#000" if tick == 1 else "#ccc"}"/>')
        out.append(f'<text x="{x:.1f}" y="{height - 14}" text-anchor="middle">{tick:g}x</text>')
    one = x_of(1, label_w)
    for i, r in enumerate(bars):
        y = TOP + i * (BAR_H + GAP)
        x = x_of(r["ratio"], label_w)
        left, w = min(x, one), abs(x - one)
        label = label_of(r)
        out.append(f'<text x="{label_w - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{left:.1f}" y="{y}" width="{max(w, 1):.1f}" height="{BAR_H}" '
                   f'fill="{COLOURS.get(r["kind"], "#999")}"><title>{escape(label)}: '
                   f'{r["ratio"]:.2f}x</title></rect>')
        out.append(f'<text x="{max(x, one) + 4:.1f}" y="{y + 13}">{r["ratio"]:.2f}x</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
