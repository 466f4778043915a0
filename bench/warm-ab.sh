#!/usr/bin/env bash
# The warm path of two `serve` builds side by side: is a change slower where every byte is cached?
#
#   bench/warm-ab.sh OLD_BINARY [ROUNDS]     (default 7 rounds; needs curl, wrk and GNU time)
#
# Both proxies serve one 512 MiB file from their own cache, warmed by one whole read. Each round
# runs, for the old build and then the new one: wrk with 8 connections for 8 s asking 4 KiB
# ranges at random offsets, and one curl of the whole file. Prints every round, then the medians
# and the ratio new/old (above 1: the new build is faster). The new build is this checkout's
# release binary (or STREAMCACHE_BIN). Build the old one from an earlier commit, for example:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && swift build -c release --product streamcache)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/warm-ab.sh OLD_BINARY [ROUNDS]}
rounds=${2:-7}
source bench/lib.sh

head -c $((512 << 20)) /dev/urandom > "$work/big.bin"
origin=$(start_listener origin "$bin" origin "$work")
port_old=$(start_listener old "$old" serve --port 0 --cache-dir "$work/cache-old")
port_new=$(start_listener new "$bin" serve --port 0 --cache-dir "$work/cache-new")
target="http://127.0.0.1:$origin/big.bin"
for port in "$port_old" "$port_new"; do curl -s -o /dev/null "http://127.0.0.1:$port/$target"; done
cat > "$work/ranges.lua" <<'LUA'
math.randomseed(os.time())
request = function()
  local first = math.random(0, 536870912 - 4096)
  return wrk.format("GET", nil, {["Range"] = "bytes=" .. first .. "-" .. (first + 4095)})
end
LUA

echo "warm path, old $old against new $bin: 512 MiB file, $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
for round in $(seq "$rounds"); do
    for build in old new; do
        port=$([ "$build" = old ] && echo "$port_old" || echo "$port_new")
        url="http://127.0.0.1:$port/$target"
        ranges=$(wrk -t2 -c8 -d8s -s "$work/ranges.lua" "$url" | awk '/Requests\/sec/ { print $2 }')
        whole=$({ /usr/bin/time -f %e curl -s -o /dev/null "$url"; } 2>&1)
        echo "$build $ranges $whole" >> "$work/results"
        echo "round $round $build: 4 KiB ranges/s $ranges, whole file ${whole} s"
    done
done
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
median = lambda build, column: statistics.median(float(r[column]) for r in rows if r[0] == build)
ranges_old, ranges_new = median("old", 1), median("new", 1)
whole_old, whole_new = median("old", 2), median("new", 2)
print(f"median 4 KiB ranges/s: old {ranges_old:.0f}, new {ranges_new:.0f}, ratio {ranges_new / ranges_old:.2f}")
print(f"median whole file s:   old {whole_old:.3f}, new {whole_new:.3f}, ratio {whole_old / whole_new:.2f}")
PY
