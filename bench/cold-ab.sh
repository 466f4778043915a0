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
# ticks PID : user and kernel CPU ticks process PID has used so far.
ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

echo "cold path, old $old against new $bin: $count cold 2 KB resources per round, $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
next=0
for round in $(seq "$rounds"); do
    for build in old new; do
        binary=$([ "$build" = old ] && echo "$old" || echo "$bin")
        port=$(start_listener "$build-$round" "$binary" serve --port 0 --max-size 20G --cache-dir "$shm/$build-$round")
        pid=$(cat "$work/$build-$round.pid")
        urls "$work/list" "http://127.0.0.1:$port/http://127.0.0.1:$origin" "$next" $((next + count - 1))
        next=$((next + count))
        read -r user_before kernel_before < <(ticks "$pid")
        started=$(date +%s.%N)
        codes=$(curl -s --no-progress-meter -Z --parallel-max 8 -K "$work/list" -w '%{http_code}\n')
        ended=$(date +%s.%N)
        read -r user_after kernel_after < <(ticks "$pid")
        if grep -qv '^200$' <<< "$codes"; then
            echo "a request through the $build build failed: $(grep -v '^200$' <<< "$codes" | sort | uniq -c)" >&2
            exit 1
        fi
        awk -v b="$build" -v r="$round" -v n="$count" -v a="$started" -v e="$ended" -v hz="$hz" \
            -v u=$((user_after - user_before)) -v k=$((kernel_after - kernel_before)) \
            'BEGIN { printf "%s %.0f %.3f %.3f\n", b, n / (e - a), u / hz * 1000 / n, k / hz * 1000 / n }' \
            >> "$work/results"
        tail -n 1 "$work/results" | awk -v r="$round" \
            '{ printf "round %s %s: %s req/s, CPU ms per resource %.3f (user %.3f, kernel %.3f)\n", r, $1, $2, $3 + $4, $3, $4 }'
        stop_listener "$build-$round"
        rm -rf "${shm:?}/$build-$round"
    done
done
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
median = lambda build, pick: statistics.median(pick(r) for r in rows if r[0] == build)
rate_old, rate_new = median("old", lambda r: float(r[1])), median("new", lambda r: float(r[1]))
cpu_old = median("old", lambda r: float(r[2]) + float(r[3]))
cpu_new = median("new", lambda r: float(r[2]) + float(r[3]))
print(f"median req/s:                 old {rate_old:.0f}, new {rate_new:.0f}, ratio {rate_new / rate_old:.2f}")
print(f"median CPU ms per resource:   old {cpu_old:.3f}, new {cpu_new:.3f}, ratio {cpu_old / cpu_new:.2f}")
PY
