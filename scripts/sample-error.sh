#!/usr/bin/env bash
# Reproduces the sampled-curve error table of docs/benchmarks.md ("Sampled
# miss-rate curves"): replays each trace exactly and with `--sample RATE`
# (or `--sample-max-keys N`), and prints, per trace and policy, the mean and
# largest absolute difference of the miss rates over the sizes the sample
# resolves (>= 1/R, R the row's sample rate), the mean over all the sizes
# the sampled run writes (below 1/R: lru's and clock's exact rows up to 64
# keys, no row for the others), and the wall time of both runs.
#
#   scripts/sample-error.sh TRACE...          # condensed traces
#   scripts/sample-error.sh gen:5000000:500000 demo-out/condensed/node-000.full.arrow
#
# gen:REQUESTS:KEYS stands for a `crawltrace gen-trace` trace (Zipf 0.9,
# locality 0.3), generated into BENCH_DIR once. Environment: RATE (0.01),
# MAX_KEYS (unset: fixed rate; set: --sample-max-keys MAX_KEYS instead of
# RATE), POLICIES (the twelve policies without the scatter variants),
# SIZES (2^0..2^25), BENCH_DIR (${TMPDIR:-/tmp}/crawltrace-sample).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-sample}
rate=${RATE:-0.01}
policies=${POLICIES:-infinite,min,lru,clock,random,static,fifo,sieve,s3fifo,arc,2q,wtinylfu}
sizes=${SIZES:-2^0..2^25}
mkdir -p "$dir"
bin=$dir/crawltrace
go build -o "$bin" ./cmd/crawltrace
sample=(--sample "$rate")
label="--sample $rate"
if [ -n "${MAX_KEYS:-}" ]; then
  sample=(--sample-max-keys "$MAX_KEYS")
  label="--sample-max-keys $MAX_KEYS"
fi
echo "sample-error: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $label, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| trace | policy | MAE, sizes >= 1/R | max error | MAE, all sizes | rate |"
echo "|---|---|---|---|---|---|"
for t in "$@"; do
  if [[ $t == gen:* ]]; then
    IFS=: read -r _ n k <<<"$t"
    f=$dir/gen-$n-$k.arrow
    [ -f "$f" ] || "$bin" gen-trace -o "$f" --requests "$n" --keys "$k" --alpha 0.9 --locality 0.3 >/dev/null
    t=$f
  fi
  name=$(basename "$t")
  out=$dir/out-$name
  s0=$(date +%s.%N)
  "$bin" replay "$t" --policies "$policies" --sizes "$sizes" --no-plots --progress never --force -o "$out/exact" >/dev/null
  s1=$(date +%s.%N)
  "$bin" replay "$t" --policies "$policies" --sizes "$sizes" "${sample[@]}" --no-plots --progress never --force -o "$out/sampled" >/dev/null
  s2=$(date +%s.%N)
  # results.csv: trace,policy,size,requests,hits,misses,miss_rate,...,sample_rate (12th)
  awk -F, -v trace="$name" '
    FNR == 1 { next }
    NR == FNR { exact[$2 "," $3] = $7; next }
    {
      k = $2 "," $3; if (!(k in exact)) next
      e = $7 - exact[k]; if (e < 0) e = -e
      all[$2] += e; nall[$2]++
      if ($12 != "" && $3 + 0 >= 1 / $12) { res[$2] += e; nres[$2]++; if (e > mx[$2]) mx[$2] = e }
      if (!($2 in seen)) { seen[$2] = 1; order[++np] = $2 }
      r[$2] = $12
    }
    END {
      for (i = 1; i <= np; i++) {
        p = order[i]
        printf "| %s | %s | %s | %s | %.4f | %.4g |\n", trace, p,
          (nres[p] ? sprintf("%.4f", res[p] / nres[p]) : "-"), (nres[p] ? sprintf("%.4f", mx[p]) : "-"), all[p] / nall[p], r[p]
      }
    }' "$out/exact/results.csv" "$out/sampled/results.csv"
  awk -v n="$name" -v a="$s0" -v b="$s1" -v c="$s2" 'BEGIN { printf "| %s | (wall time) | exact %.2f s | sampled %.2f s | | |\n", n, b - a, c - b }'
done
