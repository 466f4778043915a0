#!/usr/bin/env bash
# Peak memory of `streamcache serve` under many players, each streaming a different cold file at
# a player's pace.
#
#   bench/players.sh [PLAYERS] [SIZE_MIB] [RATE]   (defaults 200, 8 and 500k; needs curl and
#                                                   GNU time)
#
# PLAYERS curl clients start at once, each reading its own cold SIZE_MIB file (hard links of one
# file, so each is a new resource) through `serve` at RATE bytes per second, from an origin on
# loopback that sends as fast as it can. Every body is checked against the file. It prints the
# proxy's RSS before, its peak (sampled, and the kernel's VmHWM) with the heap part
# (RssAnon), and RSS per player.
set -euo pipefail
cd "$(dirname "$0")/.."
players=${1:-200}
size_mib=${2:-8}
rate=${3:-500k}
source bench/lib.sh

mkdir -p "$work/origin" "$work/bodies"
head -c $((size_mib << 20)) /dev/urandom > "$work/origin/media.bin"
for i in $(seq "$players"); do ln "$work/origin/media.bin" "$work/origin/episode-$i.bin"; done
expected=$(md5sum < "$work/origin/media.bin")

origin=$(start_listener origin "$bin" origin "$work/origin")
proxy=$(start_listener proxy "$bin" serve --port 0 --max-size 20G --cache-dir "$work/cache")
proxy_pid=$(cat "$work/proxy.pid")
field() { awk -v name="$1:" '$1 == name { printf "%.1f", $2 / 1024 }' "/proc/$proxy_pid/status"; }
rss_start=$(field VmRSS)
anon_start=$(field RssAnon)

started=$(date +%s.%N)
pids=()
for i in $(seq "$players"); do
    curl -s --limit-rate "$rate" -o "$work/bodies/$i" \
        "http://127.0.0.1:$proxy/http://127.0.0.1:$origin/episode-$i.bin" &
    pids+=($!)
done
peak_rss=0 peak_anon=0
while kill -0 "${pids[@]}" 2>/dev/null; do
    peak_rss=$(awk -v a="$peak_rss" -v b="$(field VmRSS)" 'BEGIN { print (b > a ? b : a) }')
    peak_anon=$(awk -v a="$peak_anon" -v b="$(field RssAnon)" 'BEGIN { print (b > a ? b : a) }')
    sleep 0.2
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
ended=$(date +%s.%N)
wrong=0
for i in $(seq "$players"); do [ "$(md5sum < "$work/bodies/$i")" = "$expected" ] || wrong=$((wrong + 1)); done
hwm=$(field VmHWM)

echo "$players players, each a different cold $size_mib MiB file at $rate/s: $(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", b - a }') s, $failed failed, $wrong bodies wrong"
echo "serve RSS MiB: at start $rss_start (heap $anon_start); peak sampled $peak_rss (heap $peak_anon), VmHWM $hwm"
echo "per player: $(awk -v p="$peak_rss" -v s="$rss_start" -v n="$players" 'BEGIN { printf "%.2f", (p - s) / n }') MiB above the start"
[ "$failed" -eq 0 ] && [ "$wrong" -eq 0 ]
