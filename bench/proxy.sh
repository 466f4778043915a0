#!/usr/bin/env bash
# Benchmarks `streamcache serve` against peers run side by side, and prints ratios.
#
#   bench/proxy.sh [SIZE_MIB] [REPETITIONS]   (defaults 512 and 5; needs curl, nginx-light, wrk
#                                              and GNU time)
#
# Each repetition runs every case once, the peer and the proxy one after the other, so both
# see the same machine; the table gives the median of the repetitions with their range, and
# the ratio of the medians.
# Cold: through the proxy vs curl straight from the origin, capped at 100 MB/s per connection
# and uncapped on loopback (a new URL per repetition: hard links of one file); uncapped also vs
# nginx doing the same job (proxy_cache: relays the body and writes it to disk). Warm: the whole
# file through the proxy vs nginx serving it from disk, and 4 KiB random ranges per second
# with wrk vs nginx. The page cache is filled first (fill_page_cache), and each cold case that
# writes a cache runs right after recycle_pages and a sync (see bench/lib.sh). Then: time to
# first byte of a cold range; CPU seconds per GiB of the servers (from /proc) and their clients,
# and for the cold relays also of the whole machine until each cache is on disk (see cold_relay);
# the proxy's RSS at start and its peak while it streams 2 GiB cold and warm.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-512}
reps=${2:-5}
bytes=$((size_mib << 20))
source bench/lib.sh

mkdir -p "$work/origin"
head -c "$bytes" /dev/urandom > "$work/origin/media.bin"
cat "$work/origin/media.bin" > /dev/null
fill_page_cache
for rep in $(seq "$reps"); do
    ln "$work/origin/media.bin" "$work/origin/capped-$rep.bin"
    ln "$work/origin/media.bin" "$work/origin/cold-$rep.bin"
    ln "$work/origin/media.bin" "$work/origin/relay-$rep.bin"
done

capped=$(start_listener origin-capped "$bin" origin "$work/origin" --rate 100M)
uncapped=$(start_listener origin "$bin" origin "$work/origin")
nginx=$(start_nginx "$work/origin")
nginx_cache=$(start_nginx_cache "$uncapped")
proxy=$(start_listener proxy "$bin" serve --port 0 --cache-dir "$work/cache")
proxy_pid=$(cat "$work/proxy.pid")
nginx_pid=$(cat "$work/nginx.pid")
nginx_cache_pid=$(cat "$work/nginx-cache.pid")

# Small warm ranges: 4 KiB at random offsets, 8 connections.
cat > "$work/ranges.lua" <<LUA
math.randomseed(42)
request = function()
    local first = math.random(0, $bytes - 4096)
    return wrk.format("GET", nil, { ["Range"] = "bytes=" .. first .. "-" .. (first + 4095) })
end
LUA
wrk_rate() { # URL : prints requests per second, and fails on any non-206 answer
    local out
    out=$(wrk -t 2 -c 8 -d 5s -s "$work/ranges.lua" "$1")
    if grep -q "Non-2xx" <<< "$out"; then echo "wrk saw errors from $1:" >&2; echo "$out" >&2; exit 1; fi
    awk '/Requests\/sec/ { printf "%.0f\n", $2 }' <<< "$out"
}
# Warm runs are short: timed by curl itself.
curl_time() { curl -s -o /dev/null -w '%{time_total}\n' "$1" | awk '{ printf "%.3f\n", $1 }'; }

c_capped=() p_capped=() c_cold=() p_cold=() r_cold=() n_warm=() p_warm=() n_rps=() p_rps=()
curl_cpu=0 serve_cold_cpu=0 relay_cold_cpu=0 nginx_warm_cpu=0 serve_warm_cpu=0
serve_cold_machine=0 relay_cold_machine=0
uncapped_pid=$(cat "$work/origin.pid")
# cold_relay SERVER_PID URL : one cold case of a caching server, through curl, right after
# recycle_pages and a sync; prints "wall cpu machine": its seconds; the CPU seconds of the server
# (from /proc) and its curl; and those of the whole machine, less the origin's, from the start
# until a sync after it has written the server's cache to disk. A server that leaves its cache
# file dirty (nginx does; `serve` syncs as it writes) has the kernel's flusher threads write it
# later, work that no server's /proc figure holds; the machine's figure holds it for both.
cold_relay() {
    recycle_pages "$bytes"
    sync
    local server machine origin wall cpu
    server=$(cpu_of "$1") machine=$(machine_cpu) origin=$(cpu_of "$uncapped_pid")
    read -r wall cpu _ < <(measure curl -s -o /dev/null "$2")
    server=$(add "$(cpu_of "$1")" "-$server")
    sync
    awk -v w="$wall" -v s="$server" -v c="$cpu" -v m="$(add "$(machine_cpu)" "-$machine")" \
        -v o="$(add "$(cpu_of "$uncapped_pid")" "-$origin")" 'BEGIN { print w, s + c, m - o }'
}
for rep in $(seq "$reps"); do
    read -r wall _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$capped/capped-$rep.bin")
    c_capped+=("$wall")
    read -r wall _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$proxy/http://127.0.0.1:$capped/capped-$rep.bin")
    p_capped+=("$wall")

    read -r wall cpu _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$uncapped/cold-$rep.bin")
    c_cold+=("$wall")
    curl_cpu=$(add "$curl_cpu" "$cpu")
    read -r wall cpu machine < <(cold_relay "$proxy_pid" "http://127.0.0.1:$proxy/http://127.0.0.1:$uncapped/cold-$rep.bin")
    p_cold+=("$wall")
    serve_cold_cpu=$(add "$serve_cold_cpu" "$cpu") serve_cold_machine=$(add "$serve_cold_machine" "$machine")
    # The same job done by nginx: a caching reverse proxy that relays and writes the body.
    read -r wall cpu machine < <(cold_relay "$nginx_cache_pid" "http://127.0.0.1:$nginx_cache/relay-$rep.bin")
    r_cold+=("$wall")
    relay_cold_cpu=$(add "$relay_cold_cpu" "$cpu") relay_cold_machine=$(add "$relay_cold_machine" "$machine")

    before=$(cpu_of "$nginx_pid")
    n_warm+=("$(curl_time "http://127.0.0.1:$nginx/cold-$rep.bin")")
    nginx_warm_cpu=$(add "$nginx_warm_cpu" "$(awk -v a="$before" -v b="$(cpu_of "$nginx_pid")" 'BEGIN { print b - a }')")
    before=$(cpu_of "$proxy_pid")
    p_warm+=("$(curl_time "http://127.0.0.1:$proxy/http://127.0.0.1:$uncapped/cold-$rep.bin")")
    serve_warm_cpu=$(add "$serve_warm_cpu" "$(awk -v a="$before" -v b="$(cpu_of "$proxy_pid")" 'BEGIN { print b - a }')")

    n_rps+=("$(wrk_rate "http://127.0.0.1:$nginx/cold-$rep.bin")")
    p_rps+=("$(wrk_rate "http://127.0.0.1:$proxy/http://127.0.0.1:$uncapped/cold-$rep.bin")")
    echo "repetition $rep of $reps done" >&2
done

echo "streamcache serve benchmark: ${size_mib} MiB file, $(nproc) cores, $(date -u +%Y-%m-%d)," \
    "median of $reps interleaved repetitions (min-max)"
table_format='%-44s %-40s %-30s %6s\n'
table_row "case" "peer" "streamcache serve" "ratio"
time_row "cold, origin capped at 100 MB/s" "curl" "${c_capped[*]}" "${p_capped[*]}"
time_row "cold, uncapped loopback" "curl" "${c_cold[*]}" "${p_cold[*]}"
time_row "cold, uncapped loopback" "nginx proxy_cache" "${r_cold[*]}" "${p_cold[*]}"
time_row "warm, whole file" "nginx" "${n_warm[*]}" "${p_warm[*]}"
table_row "warm, 4 KiB random ranges/s (wrk, 8 conns)" "nginx $(spread "${n_rps[@]}")" \
    "$(spread "${p_rps[@]}")" "$(awk -v a="$(median_of "${p_rps[@]}")" -v b="$(median_of "${n_rps[@]}")" 'BEGIN { printf "%.2f", a / b }')"

# CPU seconds per GiB delivered: the server's own (from /proc) plus its client's, for each path.
total=$((bytes * reps))
gib() { awk -v c="$1" -v b="$total" 'BEGIN { printf "%.2f", c * 1073741824 / b }'; }
echo "CPU seconds per GiB, cold uncapped: curl from the origin $(gib "$curl_cpu")," \
    "nginx proxy_cache and its curl $(gib "$relay_cold_cpu"), serve and its curl $(gib "$serve_cold_cpu")"
echo "  the same with each cache written to disk (the whole machine until a sync, less the origin):" \
    "nginx proxy_cache $(gib "$relay_cold_machine"), serve $(gib "$serve_cold_machine")"
echo "CPU seconds per GiB, warm (the server alone): nginx $(gib "$nginx_warm_cpu"), serve $(gib "$serve_warm_cpu")"

# Time to first byte of a cold 1 MiB range: the median of 5 offsets, each of a resource new to
# the cache (a hard link of its own for each server), against nginx proxy_cache doing the same.
ttfb() { curl -s -o /dev/null -r "$2-$(($2 + 1048575))" -w '%{time_starttransfer}\n' "$1"; }
ms() { awk '{ printf "%.1f", $1 * 1000 }'; }
d_ttfb=() n_ttfb=() p_ttfb=()
for i in 1 2 3 4 5; do
    offset=$((bytes / 7 * i))
    ln "$work/origin/media.bin" "$work/origin/ttfb-nginx-$i.bin"
    ln "$work/origin/media.bin" "$work/origin/ttfb-serve-$i.bin"
    d_ttfb+=("$(ttfb "http://127.0.0.1:$uncapped/media.bin" "$offset")")
    n_ttfb+=("$(ttfb "http://127.0.0.1:$nginx_cache/ttfb-nginx-$i.bin" "$offset")")
    p_ttfb+=("$(ttfb "http://127.0.0.1:$proxy/http://127.0.0.1:$uncapped/ttfb-serve-$i.bin" "$offset")")
done
echo "time to first byte of a cold 1 MiB range (median of 5): direct $(median_of "${d_ttfb[@]}" | ms) ms," \
    "nginx proxy_cache $(median_of "${n_ttfb[@]}" | ms) ms, through the proxy $(median_of "${p_ttfb[@]}" | ms) ms"
kill "$proxy_pid" && rm -rf "$work/cache"

if [ "${SKIP_2G:-0}" != 1 ]; then
    truncate -s 2G "$work/origin/big.bin"
    big=$(start_listener proxy-big "$bin" serve --port 0 --cache-dir "$work/cache-big")
    baseline=$(awk '/VmRSS|RssAnon|RssFile/ { printf "%s %d MiB  ", $1, $2 / 1024 }' "/proc/$(cat "$work/proxy-big.pid")/status")
    echo "proxy RSS at start: $baseline(file: the binary and shared libraries; anon: heap)"
    big_pid=$(cat "$work/proxy-big.pid")
    # The heap's peak, sampled every 20 ms while COMMAND runs (VmHWM counts the mapped binary
    # and libraries too).
    anon_peak() {
        local peak=0 now
        "$@" > /dev/null &
        local client=$!
        while kill -0 "$client" 2>/dev/null; do
            now=$(awk '/RssAnon/ { print $2 }' "/proc/$big_pid/status")
            [ "$now" -gt "$peak" ] && peak=$now
            sleep 0.02
        done
        wait "$client"
        echo $((peak / 1024))
    }
    for pass in cold warm; do
        start=$(date +%s.%N)
        anon=$(anon_peak curl -s -o /dev/null "http://127.0.0.1:$big/http://127.0.0.1:$uncapped/big.bin")
        b_wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        rss=$(awk '/VmHWM/ { print $2 }' "/proc/$big_pid/status")
        echo "proxy streaming 2 GiB $pass: $b_wall s, peak RSS $((rss / 1024)) MiB so far (goal < 48 MiB), heap peak $anon MiB"
    done
fi
