#!/usr/bin/env bash
# The warm path of two `serve` builds side by side: is a change slower where every byte is cached?
#
#   bench/warm-ab.sh OLD_BINARY [ROUNDS]     (default 7 rounds; needs curl, wrk and GNU time)
#
# Each round starts a new `serve` of the old build and then of the new one (a process's luck,
# where its threads run against wrk's, moved one build's ranges/s by 15% from one process to
# the next), each on its own cache of one 512 MiB file warmed by one whole read, and runs: wrk
# with 8 connections for 8 s asking 4 KiB ranges at random offsets; wrk with one connection for
# 4 s, for the server's CPU per range (steadier than a rate); and one curl of the whole file.
# Prints every round, then the medians and the ratio new/old (above 1: the new build is
# faster). The new build is this checkout's release binary (or STREAMCACHE_BIN). Build the old
# one from an earlier commit, for example:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && swift build -c release --product streamcache)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/warm-ab.sh OLD_BINARY [ROUNDS]}
rounds=${2:-7}
source bench/lib.sh

head -c $((512 << 20)) /dev/urandom > "$work/big.bin"
origin=$(start_listener origin "$bin" origin "$work")
target="http://127.0.0.1:$origin/big.bin"
cat > "$work/ranges.lua" <<'LUA'
math.randomseed(os.time())
request = function()
  local first = math.random(0, 536870912 - 4096)
  return wrk.format("GET", nil, {["Range"] = "bytes=" .. first .. "-" .. (first + 4095)})
end
LUA
# ranges_per_second URL CONNECTIONS SECONDS
ranges_per_second() {
    wrk -t"$(( $2 < 2 ? 1 : 2 ))" -c"$2" -d"$3"s -s "$work/ranges.lua" "$1" | awk '/Requests\/sec/ { print $2 }'
}

echo "warm path, old $old against new $bin: 512 MiB file, $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
for round in $(seq "$rounds"); do
    for build in old new; do
        binary=$([ "$build" = old ] && echo "$old" || echo "$bin")
        port=$(start_listener "$build" "$binary" serve --port 0 --cache-dir "$work/cache-$build")
        pid=$(cat "$work/$build.pid")
        url="http://127.0.0.1:$port/$target"
        curl -s -o /dev/null "$url"
        ranges=$(ranges_per_second "$url" 8 8)
        before=$(cpu_of "$pid")
        single=$(ranges_per_second "$url" 1 4)
        us=$(awk -v a="$before" -v b="$(cpu_of "$pid")" -v r="$single" 'BEGIN { printf "%.1f", (b - a) * 1e6 / (r * 4) }')
        whole=$({ /usr/bin/time -f %e curl -s -o /dev/null "$url"; } 2>&1)
        echo "$build $ranges $us $whole" >> "$work/results"
        echo "round $round $build: 4 KiB ranges/s $ranges, CPU us per range (one connection) $us, whole file ${whole} s"
        stop_listener "$build"
        rm -rf "${work:?}/cache-$build"
    done
done
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
median = lambda build, column: statistics.median(float(r[column]) for r in rows if r[0] == build)
ranges_old, ranges_new = median("old", 1), median("new", 1)
cpu_old, cpu_new = median("old", 2), median("new", 2)
whole_old, whole_new = median("old", 3), median("new", 3)
print(f"median 4 KiB ranges/s:   old {ranges_old:.0f}, new {ranges_new:.0f}, ratio {ranges_new / ranges_old:.2f}")
print(f"median CPU us per range: old {cpu_old:.1f}, new {cpu_new:.1f}, ratio {cpu_old / cpu_new:.2f}")
print(f"median whole file s:     old {whole_old:.3f}, new {whole_new:.3f}, ratio {whole_old / whole_new:.2f}")
PY
