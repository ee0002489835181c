#!/usr/bin/env bash
# Times the demo's crawl with and without --warc through the CLI, the
# figure of docs/benchmarks.md ("A crawl kept as WARC"): the demo's local
# web (`crawltrace testweb --hosts 400 --pages-per-host 200 --web-seed 1`,
# one process, shared), the demo's crawl (4 nodes x 16 workers, --max-pages
# 50000, --min-delay 0), REPS interleaved rounds of (without, with), each
# crawl timed whole (wall, and CPU: user + system of the crawl process; the
# test web's is not counted). It prints a markdown table (min and median
# of the wall times, the pages/s they give, the CPU times) and with /
# without by each.
#
#   scripts/bench-crawl-warc.sh
#
# With CALLGRIND=1 it counts instead of timing, a figure the machine's
# load does not move: one crawl each way (MAX_PAGES default 10000) under
# valgrind's callgrind (GODEBUG=asyncpreemptoff=1: Go's preemption signals
# stop it), the instructions the crawl process executed. valgrind runs
# sha1 without the SHA extensions, so the count weighs the WARC's digests
# more than their time on a CPU that has them (on the demo's crawl, 7% of
# the instructions with --warc, 2% of the CPU time in a profile).
#
# Environment: REPS (3), MAX_PAGES (50000), BENCH_DIR (a scratch directory;
# default a new one under TMPDIR, removed at the end), CRAWLTRACE_BIN (a
# crawltrace binary to time instead of the one built from this checkout),
# WEB_PORT (18091), CALLGRIND (unset).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-3}
max_pages=${MAX_PAGES:-50000}
[ -n "${CALLGRIND:-}" ] && max_pages=${MAX_PAGES:-10000}
web_port=${WEB_PORT:-18091}
. scripts/lib.sh
bench_setup warc
start_testweb "$work/seeds.txt" --hosts 400 --pages-per-host 200 --web-seed 1 --listen "127.0.0.1:$web_port"

field() { grep -o "\"$1\": *[0-9.e+]*" "$2" | grep -o '[0-9.e+]*$'; }

# run MODE: one crawl; prints "pages/s wall cpu pages warc_bytes".
run() {
  local out=$work/out-$1 extra=()
  [ "$1" = warc ] && extra=(--warc)
  rm -rf "$out"
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$bin" crawl -o "$out" --nodes 4 --workers 16 \
    --resolve "*:127.0.0.1:$web_port" --allow-private --seeds "$work/seeds.txt" \
    --max-pages "$max_pages" --min-delay 0 --progress never "${extra[@]}" 2>"$work/log" >/dev/null
  local w=0
  [ "$1" = warc ] && w=$(field warc_bytes "$out/stats.json")
  printf "%s %s %s %s\n" "$(field pages_per_second "$out/stats.json")" \
    "$(awk '{printf "%.2f %.2f", $1, $2 + $3}' "$work/time")" "$(field fetch_attempts "$out/stats.json")" "$w"
}

if [ -n "${CALLGRIND:-}" ]; then
  command -v valgrind >/dev/null || { echo "CALLGRIND needs valgrind" >&2; exit 2; }
  for mode in plain warc; do
    extra=()
    [ "$mode" = warc ] && extra=(--warc)
    rm -rf "$work/out-$mode"
    GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.$mode" \
      "$bin" crawl -o "$work/out-$mode" --nodes 4 --workers 16 --resolve "*:127.0.0.1:$web_port" --allow-private \
      --seeds "$work/seeds.txt" --max-pages "$max_pages" --min-delay 0 --progress never "${extra[@]}" >/dev/null 2>"$work/vg-$mode"
    grep -o 'Collected : [0-9]*' "$work/vg-$mode" | grep -o '[0-9]*$' >"$work/ir-$mode"
  done
  ir_p=$(cat "$work/ir-plain") ir_w=$(cat "$work/ir-warc")
  echo "| crawl ($max_pages pages, callgrind) | instructions |"
  echo "|---|---|"
  echo "| without --warc | $ir_p |"
  echo "| with --warc | $ir_w |"
  echo
  echo "with / without: $(echo "scale=2; $ir_w / $ir_p" | bc)x"
  exit 0
fi

: >"$work/plain"
: >"$work/warc"
for r in $(seq "$reps"); do
  run plain >>"$work/plain"
  run warc >>"$work/warc"
done
read -r pw_min pw_med < <(cut -d' ' -f2 "$work/plain" | minmed)
read -r ww_min ww_med < <(cut -d' ' -f2 "$work/warc" | minmed)
read -r pc_min pc_med < <(cut -d' ' -f3 "$work/plain" | minmed)
read -r wc_min wc_med < <(cut -d' ' -f3 "$work/warc" | minmed)
pages=$(cut -d' ' -f4 "$work/plain" | head -1)
rate() { echo "scale=0; $pages / $1" | bc; }
echo "| crawl | wall min / median (s) | pages/s at min / median | CPU min / median (s) | WARC bytes |"
echo "|---|---|---|---|---|"
echo "| without --warc | $pw_min / $pw_med | $(rate "$pw_min") / $(rate "$pw_med") | $pc_min / $pc_med | |"
echo "| with --warc | $ww_min / $ww_med | $(rate "$ww_min") / $(rate "$ww_med") | $wc_min / $wc_med | $(cut -d' ' -f5 "$work/warc" | head -1) |"
echo
echo "with / without: wall by min $(echo "scale=2; $ww_min / $pw_min" | bc)x, by median $(echo "scale=2; $ww_med / $pw_med" | bc)x; CPU by median $(echo "scale=2; $wc_med / $pc_med" | bc)x"
echo "runs (pages/s wall CPU pages WARC-bytes): without $(tr '\n' ';' <"$work/plain"); with $(tr '\n' ';' <"$work/warc")"
