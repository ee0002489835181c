#!/bin/sh
# Multi-process crawl benchmarks (restart, fail-over, throughput): real
# crawltrace processes over loopback. Each iteration is a whole crawl of
# 24 hosts x 40 pages, so run one iteration per count.
set -e
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'Cluster' -benchtime 1x -count "${COUNT:-3}" -timeout 30m ./cmd/crawltrace "$@"
