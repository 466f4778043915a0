#!/usr/bin/env bash
# First touches of cached resources, two `serve` builds side by side on one cache: does a change
# make a player's first request of each cached segment cheaper?
#
#   bench/touch-ab.sh OLD_BINARY [ROUNDS] [COUNT]   (defaults 5 rounds of 4,000 resources; needs
#                                                    curl and nginx-light)
#
# The origin is nginx serving 2 KB files, fresh for a day (as bench/many.sh's). The new build
# fills one cache with all of them first. Each round then starts the old build's `serve` and
# the new one's, one after the other, each a new process on that cache, and has 8 clients (curl
# --parallel) fetch COUNT cached resources that process has not touched: each answered from the
# index on the event loop, no session, no origin. Prints every round (requests per second, and
# the server's CPU per request, user and kernel), then the medians and the ratio new/old (above
# 1: the new build is faster). The new build is this checkout's release binary (or
# STREAMCACHE_BIN). Build the old one from an earlier commit:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && swift build -c release --product streamcache)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/touch-ab.sh OLD_BINARY [ROUNDS] [COUNT]}
rounds=${2:-5}
count=${3:-4000}
source bench/lib.sh

make_segments $((2 * rounds * count))
origin=$(segment_origin)
port=$(serve_segments fill)
urls "$work/list" "http://127.0.0.1:$port/http://127.0.0.1:$origin" 0 $((2 * rounds * count - 1))
curl -s --no-progress-meter --fail -Z --parallel-max 8 -K "$work/list"
stop_listener fill

echo "first touches, old $old against new $bin: $count cached 2 KB resources per round, $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
ab_next=0
for round in $(seq "$rounds"); do
    for build in old new; do
        binary=$([ "$build" = old ] && echo "$old" || echo "$bin")
        ab_round "$build" "$binary" "$segment_cache" "$count"
        ab_report "$round" us 1000000 request
    done
done
ab_summary us 1000000 request
