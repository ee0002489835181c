"""Shared first cell of the crawltrace notebooks: the run directory (DIR),
the crawl's identifier (CRAWL), plotting defaults and helpers. Each notebook
loads it with `%run setup.py`, in its own namespace."""
import os, json
DIR = os.environ.get("CRAWLTRACE_DIR", "../demo-out")
import pandas as pd
import matplotlib.pyplot as plt
plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "figure.figsize": (9, 5)})
# The crawl's identifier, for figure titles.
try:
    CRAWL = json.load(open(os.path.join(DIR, "crawl", "manifest.json")))["crawl_id"]
except (OSError, KeyError, ValueError):
    CRAWL = os.path.basename(os.path.abspath(DIR))
print("reading", os.path.abspath(DIR), "- crawl", CRAWL)
# One look per policy and partitioner in every figure, the same as in the Go figures
# (replay/figure.go's namedStyles; a Go test keeps the two tables equal): Okabe-Ito colours
# (grey for its yellow), hollow markers, one line width, so coinciding lines show through.
import math, re
from matplotlib.ticker import FixedLocator, FuncFormatter
SERIES_STYLES = {
    "infinite": ("#000000", "o", ":"),
    "min": ("#D55E00", "s", "--"),
    "lru": ("#0072B2", "^", "-"),
    "clock": ("#009E73", "v", "-."),
    "random": ("#CC79A7", "D", "--"),
    "static": ("#E69F00", "p", "-"),
    "sieve": ("#56B4E9", "x", "-."),
    "s3fifo": ("#787878", "+", "--"),
    "fifo": ("#56B4E9", "s", ":"),
    "arc": ("#CC79A7", "o", "-"),
    "2q": ("#009E73", "D", ":"),
    "wtinylfu": ("#D55E00", "p", "-."),
    "clock-scatter": ("#009E73", "x", "--"),
    "random-scatter": ("#CC79A7", "+", "-."),
    "host": ("#000000", "o", "-"),
    "url": ("#D55E00", "s", "--"),
    "domain": ("#0072B2", "^", ":"),
    "consistent": ("#009E73", "x", "-."),
}
INDEX_STYLES = [("#000000", "o", "-"), ("#D55E00", "s", "--"), ("#0072B2", "^", ":"), ("#009E73", "v", "-."),
                ("#CC79A7", "D", "-"), ("#E69F00", "p", "--"), ("#56B4E9", "x", ":"), ("#787878", "+", "-.")]
def style(name, i=0):
    """The look of series name (a policy or partitioner), else of the i-th series of a figure."""
    color, marker, ls = SERIES_STYLES.get(name) or INDEX_STYLES[i % len(INDEX_STYLES)]
    return dict(color=color, marker=marker, ls=ls, lw=1.6, ms=6, mfc="none", mew=1.0)
def pow2_label(e):
    """2^e as the Go figures write it: 512, 1K, 64M, 2G."""
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if e >= shift:
            return f"{1 << (e - shift)}{unit}"
    return str(2 ** e) if e >= 0 else f"{2.0 ** e:g}"
def pow2_axis(ax, lo, hi):
    """A log2 x axis from lo to hi (powers of two) labelled as in the Go figures: every power
    up to 13 of them, else every second (or more)."""
    a, b = int(math.floor(math.log2(lo))), int(math.ceil(math.log2(hi)))
    step = max(1, math.ceil((b - a + 1) / 13))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in range(a, b + 1, step)]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: pow2_label(round(math.log2(v)))))
    ax.xaxis.set_minor_locator(FixedLocator([2.0 ** e for e in range(a, b + 1)]))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
def trace_order(tr):
    """Sort key of trace names: by node, the full subtrace before the cross one (as the Go figures' panels)."""
    m = re.match(r"node-(\d+)\.(\w+)\.arrow$", tr)
    return (int(m[1]), m[2] != "full", tr) if m else (math.inf, False, tr)
def trace_title(tr):
    """node-000.full.arrow -> 'crawl C, node 0, full subtrace'."""
    m = re.match(r"node-(\d+)\.(\w+)\.arrow$", tr)
    return f"crawl {CRAWL}, node {int(m[1])}, {m[2]} subtrace" if m else f"crawl {CRAWL}, {tr}"
