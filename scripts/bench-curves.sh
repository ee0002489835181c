#!/usr/bin/env bash
# One-pass miss-rate curves against one run at one size (issue 35;
# docs/benchmarks.md, "One-pass curves against one size"): CPU seconds
# (user+sys) and wall seconds of the whole `crawltrace replay` process for
# lru and min, each at the paper's 26 sizes 2^0..2^25 in one pass and at
# the one size 2^20, on one generated 20M-request trace, interleaved
# (lru curve, lru 2^20, min curve, min 2^20, then the next round), and
# prints min and median of each and the curve's ratio to the one size.
#
# Usage: scripts/bench-curves.sh
#
# Environment:
#   BENCH_DIR  work directory: build, trace, raw timings (default
#              /tmp/crawltrace-bench-curves); the trace is reused when present
#   CT         a crawltrace binary to time instead of building this checkout
#   ROUNDS     rounds (default 3)
#   POLICIES   policies (default lru,min)
#   SIZE       the one size (default 1048576)
#   REQUESTS, KEYS  trace shape (default 20000000 and 2000000, as in
#              scripts/bench-libcachesim.sh)
#
# On a shared machine run it under a lock that keeps other benchmarks out
# (e.g. flock), and compare the minima.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_DIR:-/tmp/crawltrace-bench-curves}
rounds=${ROUNDS:-3}
policies=${POLICIES:-lru,min}
one=${SIZE:-1048576}
requests=${REQUESTS:-20000000}
keys=${KEYS:-2000000}
timebin=/usr/bin/time
[[ -x $timebin ]] || { echo "$0: needs GNU time at $timebin (apt-get install time)" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)

ct=${CT:-}
if [[ -z $ct ]]; then
	echo "building crawltrace" >&2
	(cd "$repo" && go build -o "$work/crawltrace" ./cmd/crawltrace)
	ct=$work/crawltrace
fi
trace=$work/gen-${requests}-${keys}.arrow
if [[ ! -s $trace ]]; then
	"$ct" gen-trace -o "$trace" --requests "$requests" --keys "$keys" --alpha 0.9 --locality 0.3 --progress never --force
fi
curve=1
for ((i = 1; i < 26; i++)); do curve+=",$((1 << i))"; done

raw=$work/raw.tsv
tf=$work/time.out
printf 'round\tpolicy\trun\tcpu_s\twall_s\n' >"$raw"
IFS=, read -r -a pols <<<"$policies"
echo "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
	for p in "${pols[@]}"; do
		for run in curve one; do
			sizes=$one
			[[ $run == curve ]] && sizes=$curve
			"$timebin" -f '%U %S %e' -o "$tf" "$ct" replay "$trace" --policies "$p" --sizes "$sizes" \
				--jobs 1 -o "$work/out-$p-$run" --force --progress never >/dev/null
			read -r u s e <"$tf"
			printf '%d\t%s\t%s\t%s\t%s\n' "$r" "$p" "$run" "$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}')" "$e" >>"$raw"
		done
	done
done
echo "end   $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"

# The one-size run's miss ratio must be the curve's at that size.
for p in "${pols[@]}"; do
	a=$(awk -F, -v p="$p" -v s="$one" 'NR > 1 && $2 == p && $3 == s {print $7}' "$work/out-$p-curve/results.csv")
	b=$(awk -F, -v p="$p" -v s="$one" 'NR > 1 && $2 == p && $3 == s {print $7}' "$work/out-$p-one/results.csv")
	if [[ $a != "$b" ]]; then
		echo "$0: $p at $one: the curve's miss ratio $a, the one size's $b" >&2
		exit 1
	fi
done

# min and median of a column (4: cpu, 5: wall) for policy p and run.
stat() {
	awk -F'\t' -v p="$1" -v run="$2" -v c="$3" 'NR > 1 && $2 == p && $3 == run {print $c}' "$raw" | sort -g |
		awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f", v[1], m}'
}
echo
echo "| policy | curve CPU s | one size CPU s | ratio CPU | curve wall s | one size wall s | ratio wall |"
echo "|---|---|---|---|---|---|---|"
for p in "${pols[@]}"; do
	read -r cc cm <<<"$(stat "$p" curve 4)"
	read -r oc om <<<"$(stat "$p" one 4)"
	read -r cw cwm <<<"$(stat "$p" curve 5)"
	read -r ow owm <<<"$(stat "$p" one 5)"
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2fx", a / b}'; }
	echo "| $p | $cc / $cm | $oc / $om | $(ratio "$cc" "$oc") / $(ratio "$cm" "$om") | $cw / $cwm | $ow / $owm | $(ratio "$cw" "$ow") / $(ratio "$cwm" "$owm") |"
done
echo
echo "min / median of $rounds interleaved rounds; curve: 26 sizes 2^0..2^25 in one pass; one size: $one."
