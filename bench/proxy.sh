#!/usr/bin/env bash
# Benchmarks `streamcache serve` against peers run side by side, and prints ratios.
#
#   bench/proxy.sh [SIZE_MIB]      (default 512; needs curl, nginx-light, wrk and GNU time)
#
# Warm: a whole file through the proxy vs nginx serving it from disk, and small random ranges
# per second with wrk vs nginx. Cold: through the proxy vs curl straight from the origin, capped
# at 100 MB/s per connection and uncapped on loopback; time to first byte of a cold range.
# Memory: the proxy's RSS at start and its peak while it streams 2 GiB. CPU seconds per GiB of
# the servers (from /proc) and their clients, cold and warm.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-512}
bytes=$((size_mib << 20))
source bench/lib.sh

mkdir -p "$work/origin"
head -c "$bytes" /dev/urandom > "$work/origin/media.bin"
cat "$work/origin/media.bin" > /dev/null

capped=$(start_listener origin-capped "$bin" origin "$work/origin" --rate 100M)
uncapped=$(start_listener origin "$bin" origin "$work/origin")
nginx=$(start_nginx "$work/origin")
proxy_capped=$(start_listener proxy-capped "$bin" serve --cache-dir "$work/cache-capped")
proxy=$(start_listener proxy "$bin" serve --cache-dir "$work/cache")
direct_capped="http://127.0.0.1:$capped/media.bin"
direct="http://127.0.0.1:$uncapped/media.bin"
through_capped="http://127.0.0.1:$proxy_capped/$direct_capped"
through="http://127.0.0.1:$proxy/$direct"
from_nginx="http://127.0.0.1:$nginx/media.bin"

echo "streamcache serve benchmark: ${size_mib} MiB file, $(nproc) cores, $(date -u +%Y-%m-%d)"
proxy_row() { printf '%-50s %9s %11s %8s\n' "$@"; }
proxy_row "case (curl -o /dev/null unless said)" "seconds" "MB/s" "ratio"

read -r c_wall _ < <(measure curl -s -o /dev/null "$direct_capped")
read -r p_wall _ < <(measure curl -s -o /dev/null "$through_capped")
proxy_row "direct from the origin capped at 100 MB/s" "$c_wall" "$(rate "$c_wall")" "1.00"
proxy_row "through the proxy, cold, origin capped" "$p_wall" "$(rate "$p_wall")" "$(ratio "$p_wall" "$c_wall")"
kill "$(cat "$work/proxy-capped.pid")" && rm -rf "$work/cache-capped"

proxy_pid=$(cat "$work/proxy.pid")
read -r d_wall d_cpu _ < <(measure curl -s -o /dev/null "$direct")
serve_before=$(cpu_of "$proxy_pid")
read -r u_wall u_cpu _ < <(measure curl -s -o /dev/null "$through")
serve_cold_cpu=$(awk -v a="$serve_before" -v b="$(cpu_of "$proxy_pid")" -v c="$u_cpu" 'BEGIN { print b - a + c }')
proxy_row "direct from the origin, uncapped loopback" "$d_wall" "$(rate "$d_wall")" "1.00"
proxy_row "through the proxy, cold, uncapped loopback" "$u_wall" "$(rate "$u_wall")" "$(ratio "$u_wall" "$d_wall")"

# Warm runs are short: timed by curl itself (microseconds), the best of 5.
curl_best() { for _ in 1 2 3 4 5; do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done | sort -n | head -1; }
nginx_pid=$(cat "$work/nginx.pid")
nginx_before=$(cpu_of "$nginx_pid")
n_wall=$(curl_best "$from_nginx")
nginx_warm_cpu=$(awk -v a="$nginx_before" -v b="$(cpu_of "$nginx_pid")" 'BEGIN { print (b - a) / 5 }')
serve_before=$(cpu_of "$proxy_pid")
w_wall=$(curl_best "$through")
serve_warm_cpu=$(awk -v a="$serve_before" -v b="$(cpu_of "$proxy_pid")" 'BEGIN { print (b - a) / 5 }')
proxy_row "nginx from disk (page cache), best of 5" "$n_wall" "$(rate "$n_wall")" "1.00"
proxy_row "through the proxy, warm, best of 5" "$w_wall" "$(rate "$w_wall")" "$(ratio "$w_wall" "$n_wall")"
# CPU seconds per GiB delivered: the server's own (from /proc) plus its client's, for each path.
echo "CPU seconds per GiB, cold uncapped: curl from the origin $(per_gib "$d_cpu"), serve and its curl $(per_gib "$serve_cold_cpu")"
echo "CPU seconds per GiB, warm (the server alone): nginx $(per_gib "$nginx_warm_cpu"), serve $(per_gib "$serve_warm_cpu")"

# Small warm ranges: 4 KiB at random offsets, 8 connections for 10 s.
cat > "$work/ranges.lua" <<LUA
math.randomseed(42)
request = function()
    local first = math.random(0, $bytes - 4096)
    return wrk.format("GET", nil, { ["Range"] = "bytes=" .. first .. "-" .. (first + 4095) })
end
LUA
wrk_rate() { # URL : prints requests per second, and fails on any non-206 answer
    local out
    out=$(wrk -t 2 -c 8 -d 10s -s "$work/ranges.lua" "$1")
    if grep -q "Non-2xx" <<< "$out"; then echo "wrk saw errors from $1:" >&2; echo "$out" >&2; exit 1; fi
    awk '/Requests\/sec/ { print $2 }' <<< "$out"
}
n_rps=$(wrk_rate "$from_nginx")
p_rps=$(wrk_rate "$through")
proxy_row "4 KiB random ranges/s with wrk: nginx" "-" "$n_rps/s" "1.00"
proxy_row "4 KiB random ranges/s with wrk: proxy, warm" "-" "$p_rps/s" "$(awk -v a="$p_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", a / b }')"

# Time to first byte of a cold 1 MiB range: the median of 5 offsets, each new to the cache.
ttfb() { curl -s -o /dev/null -r "$2-$(($2 + 1048575))" -w '%{time_starttransfer}\n' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] * 1000 }'; }
offsets=$(for i in 1 2 3 4 5; do echo $((bytes / 7 * i)); done)
mkdir -p "$work/origin/ttfb" && cp "$work/origin/media.bin" "$work/origin/ttfb/media.bin"
d_ttfb=$(for o in $offsets; do ttfb "http://127.0.0.1:$uncapped/ttfb/media.bin" "$o"; done | median)
p_ttfb=$(for o in $offsets; do ttfb "http://127.0.0.1:$proxy/http://127.0.0.1:$uncapped/ttfb/media.bin" "$o"; done | median)
echo "time to first byte of a cold 1 MiB range (median of 5): direct ${d_ttfb} ms, through the proxy ${p_ttfb} ms"
kill "$(cat "$work/proxy.pid")" && rm -rf "$work/cache" "$work/origin/ttfb"

if [ "${SKIP_2G:-0}" != 1 ]; then
    truncate -s 2G "$work/origin/big.bin"
    big=$(start_listener proxy-big "$bin" serve --cache-dir "$work/cache-big")
    baseline=$(awk '/VmRSS|RssAnon|RssFile/ { printf "%s %d MiB  ", $1, $2 / 1024 }' "/proc/$(cat "$work/proxy-big.pid")/status")
    echo "proxy RSS at start: $baseline(file: the binary and shared libraries; anon: heap)"
    read -r b_wall _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$big/http://127.0.0.1:$uncapped/big.bin")
    rss=$(awk '/VmHWM/ { print $2 }' "/proc/$(cat "$work/proxy-big.pid")/status")
    echo "proxy streaming 2 GiB cold: $b_wall s, peak RSS $((rss / 1024)) MiB (goal < 48 MiB)"
    read -r b_wall _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$big/http://127.0.0.1:$uncapped/big.bin")
    rss=$(awk '/VmHWM/ { print $2 }' "/proc/$(cat "$work/proxy-big.pid")/status")
    echo "proxy streaming the same 2 GiB warm: $b_wall s, peak RSS $((rss / 1024)) MiB (goal < 48 MiB)"
fi
