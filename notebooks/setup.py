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
# Overlapping lines stay distinguishable: each line has its own dash style and marker,
# and later lines are thinner, so an identical earlier line shows around them.
import re
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]
def style(i):
    return dict(ls=STYLES[i % len(STYLES)], marker=MARKERS[i % len(MARKERS)],
                lw=max(1.0, 3.0 - 0.4 * i), ms=max(3.0, 8.0 - i))
def trace_title(tr):
    """node-000.full.arrow -> 'crawl C, node 0, full subtrace'."""
    m = re.match(r"node-(\d+)\.(\w+)\.arrow$", tr)
    return f"crawl {CRAWL}, node {int(m[1])}, {m[2]} subtrace" if m else f"crawl {CRAWL}, {tr}"
