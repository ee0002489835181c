#!/usr/bin/env bash
# Reproduces the condense figures of docs/benchmarks.md: generates the raw
# traces (and the same URLs as text), then times `crawltrace condense`
# against `LC_ALL=C sort -u FILE | wc -l`, interleaved, min and median of
# REPS runs, with CPU time, CPU/wall and peak RSS per distinct URL, and runs
# a sharded condense (map, reduce, merge) for its read volume.
#
#   scripts/bench-condense.sh [SIZES]        # default: 10000000 50000000
#
# Environment: BENCH_DIR (default ${TMPDIR:-/tmp}/crawltrace-bench; the
# traces are kept there and reused: ~1.6 GB per 10M URLs), REPS (3),
# MEMORY (64MiB), SHARDS (4; 0 skips the read-volume run), GEN_ONLY (1:
# only build and make the traces, as scripts/bench-condense-duckdb.sh does),
# SHAPES (the traces of each size: "crawl uniform40", the default, and any
# of crawlpad, uniform40pad).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${*:-10000000 50000000}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-bench}
mkdir -p "$dir/bin"
go build -o "$dir/bin/crawltrace" ./cmd/crawltrace
go build -o "$dir/bin/tracetool" ./scripts/tracetool
traces=()
for n in $sizes; do
  m=$((n / 1000000))M
  # crawl-like: 6% distinct, 90% of repeats from the last 100,000 rows.
  # uniform: 40% distinct, every repeat any earlier URL.
  # crawlpad and uniform40pad (SHAPES only): the same shapes with other
  # URLs, 200 and 50,000 hosts, and query strings of 0-80 and 0-40 bytes.
  for shape in ${SHAPES:-crawl uniform40}; do
    case $shape in
      crawl) spec="crawl-$m -distinct 0.06 -locality 0.9" ;;
      uniform40) spec="uniform40-$m -distinct 0.4 -locality 0" ;;
      crawlpad) spec="crawlpad-$m -distinct 0.06 -locality 0.9 -hosts 200 -pad 80" ;;
      uniform40pad) spec="uniform40pad-$m -distinct 0.4 -locality 0 -hosts 50000 -pad 40" ;;
      *) echo "unknown shape $shape" >&2; exit 2 ;;
    esac
    set -- $spec
    name=$1; shift
    if [ ! -f "$dir/$name/urls.txt" ]; then
      rm -rf "${dir:?}/$name"
      "$dir/bin/tracetool" gen -o "$dir/$name" -urls "$n" "$@"
    fi
    traces+=("$dir/$name")
  done
done
[ "${GEN_ONLY:-}" = 1 ] && exit 0
echo "condense: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(go version | cut -d' ' -f3), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ)"
"$dir/bin/tracetool" bench -bin "$dir/bin/crawltrace" -memory "${MEMORY:-64MiB}" -reps "${REPS:-3}" -shards "${SHARDS:-4}" "${traces[@]}"
