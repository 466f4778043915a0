#!/usr/bin/env bash
# The cold path of two `serve` builds side by side: does a change make cold small resources
# (HLS segments) cheaper?
#
#   bench/cold-ab.sh OLD_BINARY [ROUNDS] [COUNT]   (defaults 3 rounds of 1,000 resources; needs
#                                                   curl and nginx-light)
#
# The origin is nginx serving 2 KB files, fresh for a day (as bench/many.sh's). Each round starts
# the old build's `serve` and then the new one's, each on a new cache in /dev/shm (tmpfs: no
# `fdatasync` cost and no file system's mood in the figures, so that what differs is the
# builds), and has 8 clients (curl --parallel) fetch COUNT resources neither has seen. Prints
# every round (requests per second, and the server's CPU per resource, user and kernel), then
# the medians and the ratio new/old (above 1: the new build is faster). The new build is this
# checkout's release binary (or STREAMCACHE_BIN). Build the old one from an earlier commit:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && swift build -c release --product streamcache)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/cold-ab.sh OLD_BINARY [ROUNDS] [COUNT]}
rounds=${2:-3}
count=${3:-1000}
source bench/lib.sh

make_segments $((2 * rounds * count))
origin=$(segment_origin)
shm=$(mktemp -d /dev/shm/streamcache-cold-ab.XXXXXX)
trap 'rm -rf "$shm"; cleanup' EXIT

echo "cold path, old $old against new $bin: $count cold 2 KB resources per round, $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
for round in $(seq "$rounds"); do
    for build in old new; do
        binary=$([ "$build" = old ] && echo "$old" || echo "$bin")
        ab_round "$build" "$binary" "$shm/$build-$round" "$count"
        ab_report "$round" ms 1000 resource
        rm -rf "${shm:?}/$build-$round"
    done
done
ab_summary ms 1000 resource
