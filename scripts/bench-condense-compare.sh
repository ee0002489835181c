#!/usr/bin/env bash
# Compares `crawltrace condense` at two commits on the same raw traces,
# interleaved (A, B, A, B, ...), REPS runs each, and prints wall and CPU
# (user + system) min and median: the before/after table of
# docs/benchmarks.md.
#
#   scripts/bench-condense-compare.sh REV_A REV_B TRACE_DIR...
#
# TRACE_DIR is a trace made by scripts/bench-condense.sh (it holds crawl/).
# Environment: REPS (5), MEMORY (64MiB), BENCH_DIR (as bench-condense.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: $0 REV_A REV_B TRACE_DIR..." >&2; exit 2; }
a=$1 b=$2; shift 2
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-bench}/compare
mkdir -p "$dir"
. scripts/lib.sh
for rev in "$a" "$b"; do build_at "$dir" "$rev"; done
reps=${REPS:-5}
echo "| trace | $a wall min / median | CPU min / median | $b wall min / median | CPU min / median |"
echo "|---|---|---|---|---|"
# run_condense REV: one timed condense of trace $t by commit REV's binary.
run_condense() {
  rm -rf "$dir/out"
  # The input in the page cache first (see bench-condense-duckdb.sh).
  find "$t/crawl" -type f -exec cat {} + >/dev/null
  /usr/bin/time -f "%e %U %S" -a -o "$dir/times-$1" \
    "$dir/crawltrace-$1" condense "$t/crawl" -o "$dir/out" --memory "${MEMORY:-64MiB}" >/dev/null 2>&1
}
for t in "$@"; do
  interleave "$dir" "$reps" run_condense "$a" "$b"
  row="| $(basename "$t")"
  for rev in "$a" "$b"; do
    read -r wmin wmed cmin cmed < <(time_minmed "$dir/times-$rev")
    row+=" | $wmin / $wmed s | $cmin / $cmed s"
  done
  echo "$row |"
done
rm -rf "$dir/out"
