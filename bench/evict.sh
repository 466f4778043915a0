#!/usr/bin/env bash
# How long evicting 10 % of a large cache holds up the reads of a `serve` on the same cache.
#
#   bench/evict.sh [COUNT] [READS]   (defaults 100000 and 2000; needs curl and nginx-light)
#
# COUNT files of 2 KB (HLS segments) are fetched through `serve` from nginx, filling the cache.
# A new `serve` then reads cached resources it has not touched, one at a time: READS of them
# alone (the baseline), then batches of READS more for as long as `streamcache config
# --max-size` evicts 10 % of the bytes from another process on the same cache directory (least
# recently used first: the resources the fill touched first, not the ones read). Printed: each
# pass's time per read (median, 99th percentile, maximum), the reads over 20 ms, the largest
# hold-up (the slowest read during the eviction less the baseline's median), and the eviction's
# time. Nginx reads the same files from disk, one at a time, as the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-100000}
reads=${2:-2000}
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
# The passes read resources the fill touched last, which eviction keeps: the baseline the very
# last, the reads during the eviction those before, newest first.
urls "$work/base.list" "$prefix" $((count - reads)) $((count - 1))
urls "$work/nginx.list" "http://127.0.0.1:$origin" $((count - reads)) $((count - 1))
read_times "$work/nginx.list" > "$work/nginx.ms"
read_times "$work/base.list" > "$work/base.ms"

total=$("$bin" ls --cache-dir "$segment_cache" | head -1 | sed -E 's/.*, ([0-9.]+ [KMG]iB) cached.*/\1/')
budget=$(( count * 2048 * 9 / 10 ))
started=$(date +%s.%N)
"$bin" config --max-size "$budget" --cache-dir "$segment_cache" > "$work/evict.out" &
evictor=$!
: > "$work/during.ms"
last=$((count - reads - 1))
evict_running_at_end=no
while kill -0 "$evictor" 2>/dev/null; do
    if [ "$last" -lt $((count / 5)) ]; then evict_running_at_end=yes; break; fi
    urls "$work/during.list" "$prefix" $((last - reads + 1)) "$last"
    read_times "$work/during.list" >> "$work/during.ms"
    last=$((last - reads))
done
wait "$evictor"
ended=$(date +%s.%N)
stop_listener proxy

read -r n_med n_p99 n_max < <(ms_summary "$work/nginx.ms")
read -r b_med b_p99 b_max < <(ms_summary "$work/base.ms")
read -r d_med d_p99 d_max < <(ms_summary "$work/during.ms")
echo
echo "cache of $count resources ($total); eviction to $budget bytes: $(head -1 "$work/evict.out")"
printf "%-44s %s\n" "eviction (another process), seconds" "$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')"
printf "%-44s %-10s %-10s %s\n" "reads of untouched cached resources, ms" median p99 max
printf "%-44s %-10s %-10s %s\n" "nginx from disk" "$n_med" "$n_p99" "$n_max"
printf "%-44s %-10s %-10s %s\n" "serve, alone" "$b_med" "$b_p99" "$b_max"
printf "%-44s %-10s %-10s %s\n" "serve, during the eviction" "$d_med" "$d_p99" "$d_max"
printf "%-44s %s of %s\n" "reads over 20 ms during the eviction" "$(awk '$1 > 20' "$work/during.ms" | wc -l)" "$(wc -l < "$work/during.ms")"
echo "largest hold-up (slowest read during the eviction less the baseline's median): $(awk -v d="$d_max" -v b="$b_med" 'BEGIN { printf "%.2f", d - b }') ms (goal: never over 20 ms)"
[ "$evict_running_at_end" = yes ] && echo "note: the eviction outlasted the reads the cache had left to offer"
true
