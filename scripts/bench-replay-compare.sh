#!/usr/bin/env bash
# Compares `crawltrace replay` at two commits on one trace, one policy at
# each size, interleaved (A, B, A, B, ...), REPS runs each, and prints wall
# and CPU (user + system) seconds, min and median, and the miss ratio each
# commit gives (which must agree): the before/after tables of
# docs/benchmarks.md's replay sections.
#
#   scripts/bench-replay-compare.sh REV_A REV_B TRACE POLICY SIZE...
#
# TRACE is a condensed trace, e.g. the one scripts/bench-libcachesim.sh
# generates ($BENCH_DIR/gen-20000000-2000000.arrow). Each run is
# `replay TRACE --policies POLICY --sizes SIZE --jobs 1`.
# Environment: REPS (5), BENCH_DIR (default /tmp/crawltrace-bench);
# BUILD_ONLY=1 builds the two binaries and stops (build before taking a
# benchmark lock, then run again: a binary already built is reused unless
# REBUILD=1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 5 ] || { echo "usage: $0 REV_A REV_B TRACE POLICY SIZE..." >&2; exit 2; }
a=$1 b=$2 trace=$3 policy=$4; shift 4
[ -s "$trace" ] || { echo "$0: no trace at $trace" >&2; exit 2; }
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-bench}/replay-compare
mkdir -p "$dir"
. scripts/lib.sh
for rev in "$a" "$b"; do
  [ -x "$dir/crawltrace-$rev" ] && [ -z "${REBUILD:-}" ] && continue
  build_at "$dir" "$rev"
done
[ -n "${BUILD_ONLY:-}" ] && exit 0
reps=${REPS:-5}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg); $policy on $(basename "$trace"), $reps interleaved rounds"
echo "| size | $a wall min / median | CPU min / median | miss ratio | $b wall min / median | CPU min / median | miss ratio |"
echo "|---|---|---|---|---|---|---|"
# run_replay REV: one timed replay at size $s by commit REV's binary.
run_replay() {
  /usr/bin/time -f "%e %U %S" -a -o "$dir/times-$1" \
    "$dir/crawltrace-$1" replay "$trace" --policies "$policy" --sizes "$s" --jobs 1 \
    -o "$dir/out-$1" --force --progress never >/dev/null
}
for s in "$@"; do
  interleave "$dir" "$reps" run_replay "$a" "$b"
  row="| $s"
  for rev in "$a" "$b"; do
    mr=$(awk -F, -v p="$policy" 'NR > 1 && $2 == p {printf "%.4f", $7}' "$dir/out-$rev/results.csv")
    read -r wmin wmed cmin cmed < <(time_minmed "$dir/times-$rev")
    row+=" | $wmin / $wmed | $cmin / $cmed"
    row+=" | $mr"
  done
  echo "$row |"
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
