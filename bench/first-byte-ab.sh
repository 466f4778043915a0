#!/usr/bin/env bash
# First bytes on new connections, two `serve` builds side by side on one cache: what does a
# change cost a player's first request?
#
#   bench/first-byte-ab.sh OLD_BINARY [ROUNDS]     (default 5 rounds; needs nginx-light, python3)
#
# The origin is nginx serving 2 KB segments, fresh for a day. Both proxies serve one cache
# directory, filled through the new build in a `serve` of its own that is stopped before they
# start, so that neither has touched a segment before it is timed. Each round, for the old
# build and then the new one,
# times with bench/first_byte.py (connect to first byte, each request on a new connection):
# 40 cached segments no process has touched yet (the index's word), 40 requests of one segment
# a session has open (the session's word), and 40 requests of a segment the origin lacks (a
# 404 passed on by the responder, the task half of the executor). Prints the medians per round
# and over all rounds, and the ratio (above 1: the new build is faster).
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/first-byte-ab.sh OLD_BINARY [ROUNDS]}
rounds=${2:-5}
source bench/lib.sh

count=$((rounds * 80 + 1))
make_segments "$count"
origin=$(segment_origin)
port_fill=$(serve_segments fill)
urls "$work/fill.list" "http://127.0.0.1:$port_fill/http://127.0.0.1:$origin" 0 $((count - 1))
curl -s --no-progress-meter -Z --parallel-max 8 -K "$work/fill.list" > /dev/null
stop_listener fill
port_new=$(serve_segments new)
port_old=$(start_listener old "$old" serve --port 0 --max-size 20G --cache-dir "$segment_cache")
warm=$((count - 1))

# times PORT FIRST LAST : milliseconds to the first byte of segments FIRST..LAST, one per line.
times() {
    for i in $(seq "$2" "$3"); do bench/first_byte.py "http://127.0.0.1:$1/http://127.0.0.1:$origin/seg/$i.ts"; done
}
# missing PORT : 40 first bytes of a 404.
missing() {
    for _ in $(seq 40); do bench/first_byte.py "http://127.0.0.1:$1/http://127.0.0.1:$origin/seg/none.ts" 404; done
}

echo "first bytes, old $old against new $bin: $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
for round in $(seq "$rounds"); do
    for build in old new; do
        port=$([ "$build" = old ] && echo "$port_old" || echo "$port_new")
        first=$(( (round - 1) * 80 + $([ "$build" = old ] && echo 0 || echo 40) ))
        times "$port" "$first" $((first + 39)) > "$work/$build-untouched.$round"
        for _ in $(seq 40); do times "$port" "$warm" "$warm"; done > "$work/$build-open.$round"
        missing "$port" > "$work/$build-missing.$round"
        echo "round $round $build: untouched $(median_of $(cat "$work/$build-untouched.$round")) ms," \
            "open $(median_of $(cat "$work/$build-open.$round")) ms, 404 $(median_of $(cat "$work/$build-missing.$round")) ms"
    done
done
for case in untouched open missing; do
    o=$(median_of $(cat "$work"/old-$case.*))
    n=$(median_of $(cat "$work"/new-$case.*))
    echo "median first byte, $case: old $o ms, new $n ms, ratio $(ratio "$n" "$o")"
done
