# Helpers of the benchmark scripts, sourced (". scripts/lib.sh") from the
# repository root: how a benchmark's binaries are built, its scratch
# directory and test web kept, and its rounds summed up, written once.
# shellcheck shell=bash

# minmed prints the minimum and the median (for an even count, the mean
# of the middle two) of the numbers on stdin, two decimals each.
minmed() {
  sort -g | awk '{a[NR] = $1} END {printf "%.2f %.2f\n", a[1], (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# time_minmed FILE: of the `/usr/bin/time -f "%e %U %S"` lines in FILE,
# prints "WALL_MIN WALL_MEDIAN CPU_MIN CPU_MEDIAN" (CPU: user + system).
time_minmed() {
  echo "$(awk '{print $1}' "$1" | minmed) $(awk '{print $2 + $3}' "$1" | minmed)"
}

# interleave DIR REPS RUN REV...: empties DIR/times-REV for every REV,
# then runs REPS rounds, each calling `RUN REV` for every REV in turn (A,
# B, A, B, ...: a change in the machine's load falls on all alike). RUN
# appends its timed command's `/usr/bin/time -f "%e %U %S"` line to
# DIR/times-REV, for time_minmed.
interleave() {
  local dir=$1 reps=$2 run=$3 rev
  shift 3
  for rev in "$@"; do : > "$dir/times-$rev"; done
  for _ in $(seq "$reps"); do
    for rev in "$@"; do "$run" "$rev"; done
  done
}

# need_time exits with status 2 unless /usr/bin/time (GNU time) is there.
need_time() {
  [ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }
}

# build_at DIR REV builds cmd/crawltrace as of commit REV into
# DIR/crawltrace-REV, through a temporary worktree DIR/src-REV.
build_at() {
  local wt="$1/src-$2"
  rm -rf "$wt"
  git worktree add --detach -q "$wt" "$2"
  (cd "$wt" && go build -o "$1/crawltrace-$2" ./cmd/crawltrace)
  git worktree remove --force "$wt"
}

# bench_setup NAME sets work, the scratch directory (BENCH_DIR, or a new
# one under TMPDIR named after NAME, removed at exit), and bin, the
# crawltrace to time (CRAWLTRACE_BIN, or one built from this checkout
# into work). At exit it also stops the test web start_testweb started.
bench_setup() {
  need_time
  work=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/crawltrace-$1.XXXXXX")}
  mkdir -p "$work"
  bin=${CRAWLTRACE_BIN:-$work/crawltrace}
  if [ -z "${CRAWLTRACE_BIN:-}" ]; then go build -o "$bin" ./cmd/crawltrace; fi
  web_pid=
  trap bench_cleanup EXIT
}

bench_cleanup() {
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null || true
  [ -z "${BENCH_DIR:-}" ] && rm -rf "$work"
}

# start_testweb SEEDS ARGS... stops the test web started before, if any,
# starts `$bin testweb ARGS... --seeds-out SEEDS` (its log in
# $work/web.log), and waits up to 10 s for its seeds file.
start_testweb() {
  local seeds=$1
  shift
  [ -n "$web_pid" ] && kill "$web_pid" && wait "$web_pid" 2>/dev/null || true
  "$bin" testweb "$@" --seeds-out "$seeds" >"$work/web.log" 2>&1 &
  web_pid=$!
  for _ in $(seq 100); do [ -s "$seeds" ] && break; sleep 0.1; done
}
