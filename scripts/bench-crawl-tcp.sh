#!/usr/bin/env bash
# Times a crawl of N nodes in one process (`crawl --nodes N`) against the
# same crawl as N processes over loopback TCP (`crawl --node-id I --peers
# ...`), the anchor of docs/benchmarks.md ("A crawl over TCP"): the same
# local web (`crawltrace testweb`, one process, shared), the same budget
# (--max-pages) and flags, REPS interleaved rounds, each whole run timed
# from the first start to the last exit, by wall and by CPU (user +
# system of every crawler process; the test web's is not counted).
# It prints a markdown table (min and median of each, and TCP / in-process
# by median), and for the TCP runs where the time went (`tracetool span`:
# the last fetch, the last stop).
#
#   scripts/bench-crawl-tcp.sh [N ...]    # default: 3 8
#
# N=3 crawls the web of issue 31: testweb --hosts 200 --pages 100 --seed 3
# --traps 0, --max-pages 20000 --min-delay 0; larger N crawl a
# proportionally larger web (hosts and budget scaled by N/3).
# Environment: REPS (3), BENCH_DIR (a scratch directory; default a new
# one under TMPDIR, removed at the end), CRAWLTRACE_BIN (a crawltrace
# binary to time instead of the one built from this checkout), PORT_BASE
# (19100: node I of a TCP run listens on PORT_BASE+I), WEB_PORT (18090).
set -euo pipefail
cd "$(dirname "$0")/.."
ns=${*:-3 8}
reps=${REPS:-3}
port_base=${PORT_BASE:-19100}
web_port=${WEB_PORT:-18090}
. scripts/lib.sh
bench_setup tcp
go build -o "$work/tracetool" ./scripts/tracetool

# run MODE N OUT: one whole crawl; prints "wall cpu".
run() {
  local mode=$1 n=$2 out=$3 hosts=$4 budget=$5
  rm -rf "$out"
  local common=(--resolve "*:127.0.0.1:$web_port" --allow-private --seeds "$work/seeds-$n.txt"
    --max-pages "$budget" --min-delay 0 --progress never)
  if [ "$mode" = inproc ]; then
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$bin" crawl -o "$out" --nodes "$n" "${common[@]}" 2>"$work/log" >/dev/null
    awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/time"
  else
    local peers= i
    for i in $(seq 0 $((n - 1))); do peers+="127.0.0.1:$((port_base + i)),"; done
    peers=${peers%,}
    local t0 t1 pids=()
    t0=$(date +%s.%N)
    for i in $(seq 0 $((n - 1))); do
      /usr/bin/time -f "%e %U %S" -o "$work/time.$i" "$bin" crawl -o "$out" --node-id "$i" --peers "$peers" \
        --token bench --crawl-id "bench-$n" "${common[@]}" 2>"$work/log.$i" >/dev/null &
      pids+=($!)
    done
    wait "${pids[@]}"
    t1=$(date +%s.%N)
    cat "$work"/time.* | awk -v w="$(echo "$t1 - $t0" | bc)" '{c += $2 + $3} END {printf "%.3f %.3f\n", w, c}'
    rm -f "$work"/time.*
  fi
}

echo "| nodes | mode | wall min / median (s) | CPU min / median (s) | pages |"
echo "|---|---|---|---|---|"
summary=()
for n in $ns; do
  hosts=$((200 * n / 3))
  budget=$((20000 * n / 3))
  start_testweb "$work/seeds-$n.txt" --hosts "$hosts" --pages 100 --seed 3 --traps 0 --listen "127.0.0.1:$web_port"
  : >"$work/inproc.$n"
  : >"$work/tcp.$n"
  spans=
  for r in $(seq "$reps"); do
    run inproc "$n" "$work/out-inproc" "$hosts" "$budget" >>"$work/inproc.$n"
    run tcp "$n" "$work/out-tcp" "$hosts" "$budget" >>"$work/tcp.$n"
    spans+=$("$work/tracetool" span "$work/out-tcp" | tail -1)$'\n'
  done
  pages_in=$(grep -o '"fetch_attempts": *[0-9]*' "$work/out-inproc/stats.json" | grep -o '[0-9]*$')
  pages_tcp=$(cat "$work"/out-tcp/node-*/stats.json | grep -o '"fetch_attempts": *[0-9]*' | grep -o '[0-9]*$' | paste -sd+ | bc)
  read -r iw_min iw_med < <(cut -d' ' -f1 "$work/inproc.$n" | minmed)
  read -r ic_min ic_med < <(cut -d' ' -f2 "$work/inproc.$n" | minmed)
  read -r tw_min tw_med < <(cut -d' ' -f1 "$work/tcp.$n" | minmed)
  read -r tc_min tc_med < <(cut -d' ' -f2 "$work/tcp.$n" | minmed)
  echo "| $n | in one process | $iw_min / $iw_med | $ic_min / $ic_med | $pages_in |"
  echo "| $n | $n processes over TCP | $tw_min / $tw_med | $tc_min / $tc_med | $pages_tcp |"
  summary+=("N=$n: TCP / in-process, median wall $(echo "scale=2; $tw_med / $iw_med" | bc)x, median CPU $(echo "scale=2; $tc_med / $ic_med" | bc)x")
  summary+=("N=$n: TCP rounds (wall CPU): $(tr '\n' ';' <"$work/tcp.$n"); in-process: $(tr '\n' ';' <"$work/inproc.$n")")
  while IFS= read -r l; do [ -n "$l" ] && summary+=("N=$n TCP: $l"); done <<<"$spans"
done
echo
printf '%s\n' "${summary[@]}"
