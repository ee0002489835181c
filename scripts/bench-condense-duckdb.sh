#!/usr/bin/env bash
# Times exact `crawltrace condense` against DuckDB's exact
# `count(DISTINCT url)` over the same URLs, the anchor of docs/benchmarks.md
# ("Against DuckDB"): for each trace, REPS rounds of, interleaved,
#
#   crawltrace condense RAW -o OUT --memory MEMORY
#   crawltrace condense RAW -o OUT --memory MEMORY --no-verify
#   node: SELECT count(DISTINCT url) FROM read_csv('urls.txt', ...)
#         (DuckDB with 2 threads, in-memory database)
#
# each whole process timed with /usr/bin/time (wall, user, system, peak
# RSS), and prints a markdown table: wall and CPU (user + system) min and
# median, peak RSS (the largest of the runs), and the ratios DuckDB /
# condense (median wall and median CPU; above 1 condense is faster) and
# condense / --no-verify. It checks that DuckDB and condense count the same
# distinct URLs.
#
#   scripts/bench-condense-duckdb.sh [SIZES]     # default: 10000000 50000000
#
# The traces are those of scripts/bench-condense.sh (made there, or reused:
# crawl-like 6% distinct and uniform 40% distinct, each with urls.txt, the
# same URLs one a line).
# Environment: BENCH_DIR (as bench-condense.sh), REPS (3), MEMORY (condense
# --memory; 1GiB, its default), CONDENSE_BIN (a crawltrace binary to time
# instead of the one built from this checkout, e.g. an earlier commit's),
# DUCKDB_THREADS (2), SHAPES (as bench-condense.sh: "crawl uniform40", or
# any of crawl, uniform40, crawlpad, uniform40pad), CRAWLTRACE_DUCKDB (the npm prefix of
# @duckdb/node-api, as for internal/duckdbtest; .ci/duckdb installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${*:-10000000 50000000}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/crawltrace-bench}
reps=${REPS:-3}
memory=${MEMORY:-1GiB}
threads=${DUCKDB_THREADS:-2}
duckdb=${CRAWLTRACE_DUCKDB:-${XDG_CACHE_HOME:-$HOME/.cache}/crawltrace/duckdb}
[ -f "$duckdb/node_modules/@duckdb/node-api/package.json" ] ||
  { echo "no @duckdb/node-api under $duckdb: run .ci/duckdb or set CRAWLTRACE_DUCKDB" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }

GEN_ONLY=1 scripts/bench-condense.sh $sizes >&2
bin=${CONDENSE_BIN:-$dir/bin/crawltrace}
traces=()
for n in $sizes; do
  m=$((n / 1000000))M
  for shape in ${SHAPES:-crawl uniform40}; do
    traces+=("$shape-$m")
  done
done

# The DuckDB side: one node process, the whole of it timed (start-up,
# reading and parsing the text, the distinct count).
js=$dir/duckdb-count.js
cat >"$js" <<'EOF'
const path = require('path');
const { DuckDBInstance } = require(path.join(process.env.DUCKDB_DIR, 'node_modules', '@duckdb', 'node-api'));
(async () => {
  const inst = await DuckDBInstance.create(':memory:', { threads: process.env.DUCKDB_THREADS });
  const con = await inst.connect();
  const file = process.argv[2].replace(/'/g, "''");
  const q = `SELECT count(DISTINCT url) AS n FROM read_csv('${file}', columns = {'url': 'VARCHAR'}, header = false, delim = '\t', quote = '', escape = '', auto_detect = false)`;
  const rows = (await con.runAndReadAll(q)).getRowObjectsJson();
  process.stdout.write(String(rows[0].n) + '\n');
})().catch((e) => { console.error('duckdb: ' + e.message); process.exit(1); });
EOF

rev=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
[ -n "${CONDENSE_BIN:-}" ] && rev=$CONDENSE_BIN
echo "condense: $rev --memory $memory, $(go version | cut -d' ' -f3), DuckDB $(node -p "require('$duckdb/node_modules/@duckdb/node-api/package.json').version") with $threads threads, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(date -u +%FT%TZ), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| trace | distinct | condense wall min / median | CPU min / median | peak RSS | \`--no-verify\` wall min / median | CPU min / median | peak RSS | DuckDB wall min / median | CPU min / median | peak RSS | DuckDB / condense (median wall) | (median CPU) | RSS condense / DuckDB | condense / \`--no-verify\` (median wall) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# Every timed run starts with its input in the page cache, read just
# before: the traces of both sizes are larger together than this machine's
# spare memory, so a run that found part of its input evicted (by another
# trace's runs, or a pageout scheme) read it from the disk, and such runs
# took up to twice as long.
warm() { find "$1" -type f -exec cat {} + >/dev/null; }
tm=$(mktemp -d "$dir/times.XXXXXX")
trap 'rm -rf "$tm" "$dir/out-duckdb-bench"' EXIT
out=$dir/out-duckdb-bench
for t in "${traces[@]}"; do
  raw=$dir/$t/crawl text=$dir/$t/urls.txt
  : >"$tm/full"; : >"$tm/nv"; : >"$tm/duck"
  want=
  for i in $(seq "$reps"); do
    rm -rf "$out"
    warm "$raw"
    /usr/bin/time -f '%e %U %S %M' -a -o "$tm/full" "$bin" condense "$raw" -o "$out" --memory "$memory" >/dev/null 2>"$tm/err" ||
      { cat "$tm/err" >&2; exit 1; }
    got=$(node -p "require('$out/report.json').total.distinct_urls")
    [ -z "$want" ] && want=$got
    [ "$got" = "$want" ] || { echo "$t: condense counted $got distinct URLs, earlier $want" >&2; exit 1; }
    rm -rf "$out"
    warm "$raw"
    /usr/bin/time -f '%e %U %S %M' -a -o "$tm/nv" "$bin" condense "$raw" -o "$out" --memory "$memory" --no-verify >/dev/null 2>"$tm/err" ||
      { cat "$tm/err" >&2; exit 1; }
    rm -rf "$out"
    warm "$text"
    got=$(DUCKDB_DIR=$duckdb DUCKDB_THREADS=$threads /usr/bin/time -f '%e %U %S %M' -a -o "$tm/duck" node "$js" "$text" 2>"$tm/err") ||
      { cat "$tm/err" >&2; exit 1; }
    [ "$got" = "$want" ] || { echo "$t: DuckDB counted $got distinct URLs, condense $want" >&2; exit 1; }
  done
  # Per command: wall min, wall median, CPU min, CPU median, peak RSS (KiB).
  summary() {
    local k w c m
    k=$(( ($(wc -l <"$1") + 1) / 2 ))
    w=$(awk '{ print $1 }' "$1" | sort -g | sed -n "1p;${k}p" | paste -sd' ')
    c=$(awk '{ print $2 + $3 }' "$1" | sort -g | sed -n "1p;${k}p" | paste -sd' ')
    m=$(awk '{ print $4 }' "$1" | sort -g | tail -1)
    echo "$w $c $m"
  }
  read -r fw fwm fc fcm fm <<<"$(summary "$tm/full")"
  read -r nw nwm nc ncm nm <<<"$(summary "$tm/nv")"
  read -r dw dwm dc dcm dm <<<"$(summary "$tm/duck")"
  awk -v t="$t" -v d="$want" -v fw="$fw" -v fwm="$fwm" -v fc="$fc" -v fcm="$fcm" -v fm="$fm" \
    -v nw="$nw" -v nwm="$nwm" -v nc="$nc" -v ncm="$ncm" -v nm="$nm" \
    -v dw="$dw" -v dwm="$dwm" -v dc="$dc" -v dcm="$dcm" -v dm="$dm" 'BEGIN {
    printf "| %s | %d | %.2f / %.2f s | %.2f / %.2f s | %d MB | %.2f / %.2f s | %.2f / %.2f s | %d MB | %.2f / %.2f s | %.2f / %.2f s | %d MB | %.2fx | %.2fx | %.2f | %.2fx |\n",
      t, d, fw, fwm, fc, fcm, fm * 1.024 / 1000, nw, nwm, nc, ncm, nm * 1.024 / 1000, dw, dwm, dc, dcm, dm * 1.024 / 1000,
      dwm / fwm, dcm / fcm, fm / dm, fwm / nwm }'
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
