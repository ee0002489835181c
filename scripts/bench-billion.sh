#!/usr/bin/env bash
# Replay at a billion requests (docs/benchmarks.md, "A billion requests"):
# generates a condensed trace with `crawltrace gen-trace` and replays it
#   lru    the exact LRU curve at 26 sizes (2^0..2^25, one pass),
#   min    the exact MIN curve at the same sizes (one pass, trace in memory),
#   sample a 0.1% sample (--sample 0.001) of every policy at the 26 sizes,
#   all    every policy at 2^10, 2^16 and 2^20, one process per policy (so
#          that each peak RSS is that policy's, and a run cut short still
#          leaves the policies done before it),
# each under /usr/bin/time, and prints a markdown table of wall time, CPU
# time (user + system) and peak RSS per run, a row as each run ends.
#
#   scripts/bench-billion.sh                      # 10^9 requests, ~8 GB trace
#   REQUESTS=10000000 scripts/bench-billion.sh    # a check at 10^7
#
# The trace: REQUESTS requests over KEYS keys (default REQUESTS/20), Zipf
# ALPHA (0.9), LOCALITY (0.3), the recipe of issue 23's 20M-request trace
# (2M keys) with half its keys per request (see docs/benchmarks.md).
# Environment: BENCH_DIR (${TMPDIR:-/tmp}/crawltrace-billion) holds the
# binary, the trace, the results and one log per run (with its progress
# lines); STAGES ("lru min sample all") picks and orders the stages;
# POLICIES (the twelve policies without the scatter variants); WORKERS
# (replay --workers, 0 = GOMAXPROCS); BIN (a crawltrace binary to use
# instead of building one); KEEP_TRACE=1 keeps the trace, which is
# otherwise removed at the end (also when a run fails).
#
# Needs 8 bytes of disk per request for the trace and, for min (and the
# per-size min and static runs), 16 bytes of memory per request plus the
# tables; replay refuses to start a run that the machine's available memory
# cannot hold.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-1000000000}
keys=${KEYS:-$((requests / 20))}
alpha=${ALPHA:-0.9}
locality=${LOCALITY:-0.3}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-billion}
stages=${STAGES:-lru min sample all}
policies=${POLICIES:-infinite,min,lru,clock,random,static,fifo,sieve,s3fifo,arc,2q,wtinylfu}
workers=${WORKERS:-0}
curve=2^0..2^25
three=2^10,2^16,2^20
mkdir -p "$dir"
bin=${BIN:-$dir/crawltrace}
[ -n "${BIN:-}" ] || go build -o "$bin" ./cmd/crawltrace
trace=$dir/trace-$requests.arrow
if [ "${KEEP_TRACE:-}" != 1 ]; then
	trap 'rm -f "$trace"' EXIT
fi

echo "bench-billion: $(git rev-parse --short HEAD 2>/dev/null || echo '?')${BIN:+ (binary $BIN)}, $(date -u +%FT%TZ), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "trace: $requests requests, $keys keys, alpha $alpha, locality $locality; stages: $stages"
echo
echo "| run | wall s | CPU s (user + sys) | peak RSS | peak anonymous RSS (sampled) |"
echo "|---|---|---|---|---|"

# timed LABEL CMD...: runs CMD under /usr/bin/time, its output and progress
# lines in $dir/LABEL.log, and prints its row.
timed() {
	local label=$1 log=$dir/$1.log tf=$dir/$1.time rc=0
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" >"$log" 2>&1 &
	local tp=$! cp="" anon=0 a
	# The largest RssAnon seen, every second: the peak RSS counts the pages of
	# the memory-mapped trace too, which the kernel can drop at will.
	while kill -0 "$tp" 2>/dev/null; do
		[ -n "$cp" ] || cp=$(pgrep -P "$tp" | head -n 1 || true)
		if [ -n "$cp" ]; then
			a=$(awk '/^RssAnon:/ {print $2}' "/proc/$cp/status" 2>/dev/null || true)
			[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
		fi
		sleep 1
	done
	wait "$tp" || rc=$?
	local e u s m
	read -r e u s m < <(tail -n 1 "$tf")
	local row
	row=$(awk -v l="$label" -v e="$e" -v u="$u" -v s="$s" -v m="$m" -v a="$anon" '
		function size(k) { return k >= 1048576 ? sprintf("%.2f GiB", k / 1048576) : sprintf("%.0f MiB", k / 1024) }
		BEGIN { printf "| %s | %.1f | %.1f | %s | %s |", l, e, u + s, size(m), size(a) }')
	if [ "$rc" != 0 ]; then
		row="$row failed (exit $rc): $(grep -v '^replay: [0-9]' "$log" | tail -n 1)"
	fi
	echo "$row"
}

if [ ! -f "$trace" ]; then
	timed gen-trace "$bin" gen-trace -o "$trace" --requests "$requests" --keys "$keys" \
		--alpha "$alpha" --locality "$locality"
	[ -f "$trace" ] || exit 1
fi
replay() { # label, replay flags...
	local label=$1
	shift
	timed "$label" "$bin" replay "$trace" --jobs "$workers" --no-plots --progress always \
		--force -o "$dir/out-$label" "$@"
}
for st in $stages; do
	case $st in
	lru) replay lru-curve --policies lru --sizes "$curve" ;;
	min) replay min-curve --policies min --sizes "$curve" ;;
	sample) replay sample-0.001 --policies "$policies" --sizes "$curve" --sample 0.001 ;;
	all)
		for p in ${policies//,/ }; do
			replay "$p-3-sizes" --policies "$p" --sizes "$three"
		done
		;;
	*)
		echo "bench-billion: unknown stage $st (want lru, min, sample, all)" >&2
		exit 2
		;;
	esac
done
echo
echo "results and logs: $dir; done $(date -u +%FT%TZ)"
