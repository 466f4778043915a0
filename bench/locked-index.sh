#!/usr/bin/env bash
# Warm answers of `serve` while another process holds the index's write lock.
#
#   bench/locked-index.sh [COUNT] [READS]   (defaults 20000 and 1000; needs curl and nginx-light)
#
# COUNT files of 2 KB (HLS segments) are fetched through `serve` from nginx, filling the cache.
# A new `serve` then reads READS cached resources it has not touched (each answered from the
# index and the file), one at a time: alone, and again while another process holds the index's
# write lock (`BEGIN IMMEDIATE` on index.sqlite) for 5 s at a time, taken again at once until
# the reads are done. Printed: each pass's time per read (median, 99th percentile, maximum) and
# the reads over 20 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-20000}
reads=${2:-1000}
source bench/lib.sh

make_segments "$count"
origin=$(segment_origin)
echo "filling the cache through serve"
proxy=$(serve_segments fill)
urls "$work/fill.list" "http://127.0.0.1:$proxy/http://127.0.0.1:$origin" 0 $((count - 1))
curl -s --no-progress-meter -Z --parallel-max 8 -K "$work/fill.list" -w '%{http_code}\n' | grep -v '^200$' | sort | uniq -c || true
stop_listener fill

proxy=$(serve_segments proxy)
prefix="http://127.0.0.1:$proxy/http://127.0.0.1:$origin"
urls "$work/alone.list" "$prefix" 0 $((reads - 1))
urls "$work/locked.list" "$prefix" "$reads" $((2 * reads - 1))
read_times "$work/alone.list" > "$work/alone.ms"

# The lock holder: takes the write lock, keeps it 5 s, takes it again, until told to stop.
python3 - "$segment_cache/index.sqlite" "$work/stop-locking" > "$work/locker.out" <<'PY' &
import os, sqlite3, sys, time
index, stop = sys.argv[1], sys.argv[2]
db = sqlite3.connect(index, timeout=30, isolation_level=None)
held = 0
while not os.path.exists(stop):
    db.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    time.sleep(5)
    db.execute("ROLLBACK")
    held += 1
print(f"held the lock {held} times for 5 s")
PY
locker=$!
for _ in $(seq 100); do grep -q locked "$work/locker.out" 2>/dev/null && break; sleep 0.05; done
read_times "$work/locked.list" > "$work/locked.ms"
touch "$work/stop-locking"
wait "$locker"
stop_listener proxy

read -r a_med a_p99 a_max < <(ms_summary "$work/alone.ms")
read -r l_med l_p99 l_max < <(ms_summary "$work/locked.ms")
echo
echo "cache of $count resources; $reads untouched cached resources read one at a time per pass; $(tail -1 "$work/locker.out")"
printf "%-44s %-10s %-10s %s\n" "reads, ms" median p99 max
printf "%-44s %-10s %-10s %s\n" "serve, alone" "$a_med" "$a_p99" "$a_max"
printf "%-44s %-10s %-10s %s\n" "serve, the index's write lock held" "$l_med" "$l_p99" "$l_max"
printf "%-44s %s of %s\n" "reads over 20 ms with the lock held" "$(awk '$1 > 20' "$work/locked.ms" | wc -l)" "$(wc -l < "$work/locked.ms")"
