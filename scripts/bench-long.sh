#!/bin/sh
# Long-crawl benchmarks of the recorder (docs/benchmarks.md, "Long crawls").
# Each size runs in its own process, so that the peak RSS reported
# (peak-RSS-MiB, the process's VmHWM) belongs to that size alone.
# Needs about 3 GB of memory and 2 GB of $TMPDIR at the largest sizes;
# takes 10-15 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
run() { # benchmark regexp, sizes
	for n in $2; do
		CRAWLTRACE_BENCH_SIZES=$n go test -run x -bench "$1" -benchtime 1x ./recorder | grep '^Benchmark'
	done
}
run 'FrontierQueued/memory' "1000000 5000000 20000000"
run 'FrontierQueued/disk' "1000000 5000000 20000000"
run 'DUEKinds' "2000000 20000000"
run 'Checkpoint$' "10000000"
go test -run x -bench CrawlCheckpoints -benchtime 1x -count 3 ./recorder | grep '^Benchmark'
