"""A horizontal bar chart of the bench ratios, drawn by matplotlib as PNG and SVG.

One bar per row that has a ratio, on a log scale from 0.1x to 1000x with a
line at 1x: a bar runs from 1x to the row's ratio, so bars to the right of
the line mean fwembed costs less. The colour says the row's kind (summary.py).
The files depend only on the rows and matplotlib's version: no date, and
fixed element ids, so the same results give the same bytes.
"""

import matplotlib

matplotlib.use("Agg")

# pylint: disable=wrong-import-position
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

LOW, HIGH = 0.1, 1000.0
TICKS = (0.1, 1, 10, 100, 1000)
COLOURS = {"host": "#d08c2c", "guest": "#3b7dd8", "bytes": "#3a9a5b", "count": "#777777"}
OTHER_COLOUR = "#999999"
BAR_INCHES = 0.32
# Text stays text in the SVG (searchable, and escaped by matplotlib), and
# element ids come from this salt rather than from random numbers.
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "fwembed-bench", "font.size": 9}


def label_of(row):
    return f'{row["part"]}: {row["figure"]} ({row["unit"]}, vs {row["against"]})'


def bars(rows):
    """(label, ratio clamped to the scale, colour) per row that has a ratio, in order."""
    return [(label_of(r), min(max(r["ratio"], LOW), HIGH), COLOURS.get(r["kind"], OTHER_COLOUR))
            for r in rows if r.get("ratio") is not None]


def figure(rows, title):
    """The chart as a matplotlib Figure; bar i has the gid 'bar-i'."""
    drawn = bars(rows)
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(11, 1.6 + BAR_INCHES * max(len(drawn), 1)), layout="constrained")
        axes = fig.add_subplot()
        axes.set_xscale("log")
        axes.set_xlim(LOW, HIGH)
        axes.set_xticks(TICKS, [f"{tick:g}x" for tick in TICKS])
        positions = range(len(drawn))
        patches = axes.barh(positions, [ratio - 1 for _, ratio, _ in drawn], left=1,
                            color=[colour for _, _, colour in drawn])
        for number, (patch, (_, ratio, _)) in enumerate(zip(patches, drawn)):
            patch.set_gid(f"bar-{number}")
            axes.annotate(f"{ratio:.2f}x", (max(ratio, 1), number), xytext=(4, 0),
                          textcoords="offset points", va="center")
        axes.set_yticks(list(positions), [label for label, _, _ in drawn])
        axes.invert_yaxis()
        axes.axvline(1, color="black", linewidth=1)
        axes.set_xlabel("against / fwembed, log scale: right of 1x, fwembed costs less")
        axes.set_title(title, loc="left", fontweight="bold")
        handles = [Patch(color=colour, label=kind)
                   for kind, colour in COLOURS.items()]
        axes.legend(handles=handles, title="kind of figure", loc="upper left",
                    bbox_to_anchor=(1.01, 1))
    return fig


def write(rows, title, stem):
    """Write ``stem``.png and ``stem``.svg; return their paths."""
    fig = figure(rows, title)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    with matplotlib.rc_context(STYLE):
        fig.savefig(paths[0], dpi=100, metadata={"Software": None})
        fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    return paths
