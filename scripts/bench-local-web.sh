#!/usr/bin/env bash
# The same crawl of the local web through the CLI, live and deterministic,
# interleaved: live is `crawltrace testweb` on loopback crawled with real
# concurrency; deterministic is `crawl --local-web`, the web answered in
# process on a virtual clock. Prints wall, CPU and peak RSS of each crawl,
# and for the live one the CPU its test web process took meanwhile.
#   scripts/bench-local-web.sh [PAGES [HOSTS [PAGES_PER_HOST [RUNS]]]]
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-50000} hosts=${2:-400} per=${3:-200} runs=${4:-3}
work=$(mktemp -d)
trap 'kill $web 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/crawltrace" ./cmd/crawltrace
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/crawltrace" testweb --listen "127.0.0.1:$port" --hosts "$hosts" --pages "$per" --seeds-out "$work/seeds.txt" >/dev/null 2>&1 &
web=$!
for _ in $(seq 50); do [ -s "$work/seeds.txt" ] && break; sleep 0.1; done
common=(--nodes 4 --workers 16 --max-pages "$pages" --min-delay 0 --crawl-id bench --progress never)
webcpu() { awk '{print $14 + $15}' "/proc/$web/stat"; } # clock ticks
measure() { # name, crawl args...
  local name=$1; shift
  rm -rf "$work/out"
  local w0; w0=$(webcpu)
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$work/crawltrace" crawl -o "$work/out" "$@" "${common[@]}" >"$work/stats" 2>/dev/null
  local wcpu; wcpu=$(echo "scale=2; ($(webcpu) - $w0) / $(getconf CLK_TCK)" | bc)
  read -r wall user sys rss <"$work/time"
  printf '%-13s wall %6.2f s  cpu %6.2f s  rss %4d MiB  web cpu %6.2f s  %s  load %s\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) \
    "$wcpu" "$(grep -o 'urls logged: *[0-9]*' "$work/stats" | tr -s ' ')" "$(cut -d' ' -f1 /proc/loadavg)"
}
for i in $(seq "$runs"); do
  measure live --seeds "$work/seeds.txt" --resolve "*:127.0.0.1:$port" --allow-private
  measure deterministic --local-web "hosts=$hosts,pages=$per,seed=1"
done
