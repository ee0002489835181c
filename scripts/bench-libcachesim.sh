#!/usr/bin/env bash
# Side by side with libCacheSim's cachesim: CPU seconds (user+sys) of the
# whole process and miss ratio, per policy and cache size, on one generated
# 20M-request trace (issue 23; docs/benchmarks.md, "Side by side with
# libCacheSim").
#
# Usage: scripts/bench-libcachesim.sh [LIBCACHESIM_SRC]
#
# LIBCACHESIM_SRC (argument or environment variable) is a source tree of
# libCacheSim, e.g.
#   git clone https://github.com/1a1a11a/libCacheSim /tmp/libCacheSim
# (docs/benchmarks.md gives the commit measured). The script builds its
# cachesim (cmake Release, tests off; needs cmake, libglib2.0-dev and
# libzstd-dev: apt-get install cmake libglib2.0-dev libzstd-dev), builds
# crawltrace from this checkout, generates the trace with gen-trace, exports
# it as oracleGeneral for cachesim, then runs every cell (one policy, one
# size) through both programs, crawltrace then cachesim, for ROUNDS rounds,
# and prints min and median CPU seconds of each, their ratios (cachesim /
# crawltrace, of the minima and of the medians), both miss ratios, and the
# same for wall seconds.
#
# Each program reads its own format: crawltrace the condensed trace (8 bytes
# a request), cachesim the oracleGeneral file (24 bytes a request), unless
# CT_FORMAT=oracleGeneral.
# crawltrace runs `replay --workers 1` (one simulation thread), cachesim
# `--num-thread 1 --ignore-obj-size 1`.
#
# Environment:
#   BENCH_DIR  work directory: builds, trace, raw timings (default
#              /tmp/crawltrace-bench-libcachesim); the trace and the builds
#              are reused when present
#   ROUNDS     rounds (default 3)
#   POLICIES   crawltrace policies (default lru,clock,random,sieve,s3fifo,arc,min)
#   SIZES      cache sizes (default 1024,65536,1048576)
#   REQUESTS, KEYS  trace shape (default 20000000 and 2000000)
#   CT_FORMAT  the file crawltrace reads: condensed (default) or
#              oracleGeneral (the very file cachesim reads)
#   TABLE_ONLY=1    print the table of the last run in BENCH_DIR again
#              (with the same POLICIES and SIZES), running nothing
#
# Timings on a shared machine vary; compare the minima, and read the
# medians for the spread.
set -euo pipefail

src=${1:-${LIBCACHESIM_SRC:-}}
if [[ -z $src || ! -f $src/CMakeLists.txt || ! -d $src/libCacheSim ]]; then
	echo "usage: $0 LIBCACHESIM_SRC (or LIBCACHESIM_SRC=DIR $0): a libCacheSim source tree," >&2
	echo "  e.g. git clone https://github.com/1a1a11a/libCacheSim /tmp/libCacheSim" >&2
	[[ -n $src ]] && echo "  ($src is not one: no CMakeLists.txt or libCacheSim/ in it)" >&2
	exit 2
fi
src=$(cd "$src" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_DIR:-/tmp/crawltrace-bench-libcachesim}
rounds=${ROUNDS:-3}
policies=${POLICIES:-lru,clock,random,sieve,s3fifo,arc,min}
sizes=${SIZES:-1024,65536,1048576}
requests=${REQUESTS:-20000000}
keys=${KEYS:-2000000}
ctformat=${CT_FORMAT:-condensed}
case $ctformat in
condensed | oracleGeneral) ;;
*) echo "$0: CT_FORMAT must be condensed or oracleGeneral, not $ctformat" >&2; exit 2 ;;
esac
timebin=/usr/bin/time
[[ -x $timebin ]] || { echo "$0: needs GNU time at $timebin (apt-get install time)" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)

# libCacheSim's name for each crawltrace policy.
lcs_name() {
	case $1 in
	min) echo belady ;;
	*) echo "$1" ;;
	esac
}

raw=$work/raw.tsv
info=$work/run.info
IFS=, read -r -a pols <<<"$policies"
IFS=, read -r -a szs <<<"$sizes"
if [[ -z ${TABLE_ONLY:-} ]]; then

cachesim=$work/libcachesim-build/bin/cachesim
if [[ ! -x $cachesim ]]; then
	echo "building cachesim from $src" >&2
	cmake -S "$src" -B "$work/libcachesim-build" -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTS=OFF >"$work/cmake.log" 2>&1 ||
		{ echo "$0: cmake failed, see $work/cmake.log" >&2; exit 1; }
	make -C "$work/libcachesim-build" -j2 cachesim >"$work/make.log" 2>&1 ||
		{ echo "$0: make cachesim failed, see $work/make.log" >&2; exit 1; }
fi
echo "building crawltrace" >&2
(cd "$repo" && go build -o "$work/crawltrace" ./cmd/crawltrace)
ct=$work/crawltrace

trace=$work/gen-${requests}-${keys}.arrow
og=$work/gen-${requests}-${keys}.oracleGeneral
if [[ ! -s $trace ]]; then
	"$ct" gen-trace -o "$trace" --requests "$requests" --keys "$keys" --alpha 0.9 --locality 0.3 --progress never --force
fi
if [[ ! -s $og ]]; then
	"$ct" export "$trace" -o "$og" --progress never --force
fi

# cachesim writes TRACE.cachesim (and result/ for several caches) in the
# current directory.
cd "$work"
printf 'round\tpolicy\tsize\tprogram\tcpu_s\tmiss_ratio\twall_s\n' >"$raw"
tf=$work/time.out
out=$work/replay-out
cttrace=$trace
[[ $ctformat == oracleGeneral ]] && cttrace=$og
start="$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
	for p in "${pols[@]}"; do
		for s in "${szs[@]}"; do
			"$timebin" -f '%U %S %e' -o "$tf" "$ct" replay "$cttrace" --in-format "$ctformat" --policies "$p" --sizes "$s" \
				--jobs 1 -o "$out" --force --progress never >/dev/null
			cpu=$(awk '{printf "%.2f", $1 + $2}' "$tf")
			wall=$(awk '{printf "%.2f", $3}' "$tf")
			mr=$(awk -F, -v p="$p" 'NR > 1 && $2 == p {printf "%.4f", $7}' "$out/results.csv")
			printf '%d\t%s\t%s\tcrawltrace\t%s\t%s\t%s\n' "$r" "$p" "$s" "$cpu" "$mr" "$wall" >>"$raw"

			# cachesim logs progress on stderr and appends its result to
			# TRACE.cachesim; the miss ratio is read from its stdout line.
			line=$("$timebin" -f '%U %S %e' -o "$tf" "$cachesim" "$og" oracleGeneral "$(lcs_name "$p")" "$s" \
				--ignore-obj-size 1 --num-thread 1 2>/dev/null | grep 'miss ratio' | tail -1)
			cpu=$(awk '{printf "%.2f", $1 + $2}' "$tf")
			wall=$(awk '{printf "%.2f", $3}' "$tf")
			mr=$(sed -n 's/.*miss ratio \([0-9.]*\).*/\1/p' <<<"$line")
			printf '%d\t%s\t%s\tcachesim\t%s\t%s\t%s\n' "$r" "$p" "$s" "$cpu" "$mr" "$wall" >>"$raw"
			echo "round $r $p $s done" >&2
		done
	done
done

{
echo "# from $start to $(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg); $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# crawltrace $(cd "$repo" && git rev-parse --short HEAD)$(cd "$repo" && git diff --quiet HEAD -- . ':!docs' || echo '+uncommitted changes'), libCacheSim $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "$src")"
echo "# crawltrace reads the $ctformat trace, cachesim the oracleGeneral one"
echo "# CPU seconds (user+sys) and wall seconds of each whole process, min / median of $rounds interleaved rounds; ratio = cachesim / crawltrace, of the minima / of the medians"
} >"$info"
fi # TABLE_ONLY

# The table: per cell, min and median CPU seconds of each program, their
# ratios, and the miss ratios (the same in every round).
cat "$info"
echo
echo "| policy | size | crawltrace s | cachesim s | ratio | miss ratio crawltrace | miss ratio cachesim | wall crawltrace s | wall cachesim s | wall ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for p in "${pols[@]}"; do
	for s in "${szs[@]}"; do
		awk -F'\t' -v p="$p" -v s="$s" '
			function sort(a, n,   i, j, t) {
				for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			}
			function med(a, n) { return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
			NR > 1 && $2 == p && $3 == s {
				if ($4 == "crawltrace") { c[++nc] = $5; cm = $6; cw[nc] = $7 } else { l[++nl] = $5; lm = $6; lw[nl] = $7 }
			}
			END {
				sort(c, nc); sort(l, nl); sort(cw, nc); sort(lw, nl)
				ratio = (c[1] > 0 && med(c, nc) > 0) ? sprintf("%.2fx / %.2fx", l[1] / c[1], med(l, nl) / med(c, nc)) : "-"
				wall = "- | - | -"
				if (cw[1] != "" && cw[1] > 0 && med(cw, nc) > 0)
					wall = sprintf("%.2f / %.2f | %.2f / %.2f | %.2fx / %.2fx", cw[1], med(cw, nc), lw[1], med(lw, nl), lw[1] / cw[1], med(lw, nl) / med(cw, nc))
				printf "| %s | %s | %.2f / %.2f | %.2f / %.2f | %s | %s | %s | %s |\n", p, s, c[1], med(c, nc), l[1], med(l, nl), ratio, cm, lm, wall
			}' "$raw"
	done
done
