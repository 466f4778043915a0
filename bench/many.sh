#!/usr/bin/env bash
# Benchmarks `streamcache serve` with many small resources (HLS segments), against nginx side by
# side, and prints ratios (above 1: StreamCache is faster).
#
#   bench/many.sh [COUNT] [REPETITIONS]   (defaults 50000 and 5; needs curl, nginx-light and
#                                          GNU time)
#
# The origin is nginx serving COUNT files of 2 KB (SEGMENT_BYTES bytes if set, as 204800 for
# a segment of a real stream), fresh for a day (`Cache-Control: max-age`, as a CDN serves the
# segments of a recorded stream). The cases:
# * cold: 8 clients (curl --parallel) fetch distinct resources through `serve` and through
#   nginx proxy_cache, a slice of COUNT/REPETITIONS each per repetition, one after the other,
#   and between them through `relay-floor` (bench/peers: SwiftNIO and AsyncHTTPClient
#   relaying each answer with no cache, what the parts `serve` is built on cost a request):
#   requests per second, and each server's CPU time per resource (and of it, its time in the kernel),
#   and the whole machine's until a sync has put each run's cache on disk, less the origin's
#   (every run of this and the next case starts and ends with a sync: rate_on_disk);
# * cached: a new `serve` process on the filled cache; 8 clients fetch 2,000 distinct resources
#   it has not touched yet, against nginx serving the same files from disk: requests per
#   second; then the time to first byte of 20 untouched resources one at a time, each on a new
#   connection, against nginx (bench/first_byte.py), and of 20 more with curl;
# * memory: the new process's RSS at start, after touching every resource, and 12 s later
#   (its sessions closed, freed memory handed back);
# * `streamcache ls` of the cache: seconds for the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-50000}
reps=${2:-5}
source bench/lib.sh

make_segments "$count"
origin=$(segment_origin)
nginx_cache=$(start_nginx_cache "$origin")
proxy=$(serve_segments proxy)
# The peer is a package of its own (bench/peers), built here whichever StreamCache binary runs.
swift build -c release --package-path bench/peers --product relay-floor > /dev/null
relay_bin=$(swift build -c release --package-path bench/peers --show-bin-path)/relay-floor
relay=$(start_listener relay "$relay_bin")

# rate FILE : fetches the config's URLs with 8 connections; prints requests per second and
# fails on any answer but 200.
rate() {
    local started ended codes
    started=$(date +%s.%N)
    codes=$(curl -s --no-progress-meter -Z --parallel-max 8 -K "$1" -w '%{http_code}\n')
    ended=$(date +%s.%N)
    if grep -qv '^200$' <<< "$codes"; then
        echo "a request of $1 failed: $(grep -v '^200$' <<< "$codes" | sort | uniq -c)" >&2
        tail -n 5 "$work"/*.err "$work"/*-errors.log >&2
        exit 1
    fi
    awk -v n="$(wc -l <<< "$codes")" -v a="$started" -v b="$ended" 'BEGIN { printf "%.0f\n", n / (b - a) }'
}
rss_mib() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# rate_on_disk FILE : rate FILE between two syncs; prints the rate and the CPU seconds of the
# whole machine, less the origin's, from the start until the second sync has written what the
# run cached (nginx leaves its cache files for the kernel's flusher threads to write later,
# work that no figure of its process holds; `serve` syncs each file as it caches it).
rate_on_disk() {
    sync
    local machine origin rate
    machine=$(machine_cpu) origin=$(cpu_of "$origin_pid")
    rate=$(rate "$1")
    sync
    awk -v r="$rate" -v a="$machine" -v b="$(machine_cpu)" -v o="$origin" -v p="$(cpu_of "$origin_pid")" \
        'BEGIN { printf "%s %.3f\n", r, b - a - (p - o) }'
}

# side_by_side PEER STEP [RELAY] : per repetition the next STEP resources, through PEER (a URL
# prefix), then through RELAY (a URL prefix of a relay keeping nothing) if given, and then
# through `serve`, each between two syncs (rate_on_disk); their rates go to peer_rates,
# relay_rates and proxy_rates, the machine's CPU seconds to peer_machine and proxy_machine.
side_by_side() {
    peer_rates=() relay_rates=() proxy_rates=() peer_machine=0 proxy_machine=0
    local rate machine
    for rep in $(seq 0 $((reps - 1))); do
        local first=$((rep * $2)) last=$(((rep + 1) * $2 - 1))
        urls "$work/peer.list" "$1" "$first" "$last"
        urls "$work/proxy.list" "http://127.0.0.1:$proxy/http://127.0.0.1:$origin" "$first" "$last"
        read -r rate machine < <(rate_on_disk "$work/peer.list")
        peer_rates+=("$rate") peer_machine=$(add "$peer_machine" "$machine")
        if [ -n "${3:-}" ]; then
            urls "$work/relay.list" "$3" "$first" "$last"
            relay_rates+=("$(rate "$work/relay.list")")
        fi
        read -r rate machine < <(rate_on_disk "$work/proxy.list")
        proxy_rates+=("$rate") proxy_machine=$(add "$proxy_machine" "$machine")
    done
}

nginx_cache_pid=$(cat "$work/nginx-cache.pid") cold_pid=$(cat "$work/proxy.pid") origin_pid=$(cat "$work/nginx.pid")
relay_pid=$(cat "$work/relay.pid")
n_cpu=$(cpu_of "$nginx_cache_pid") p_cpu=$(cpu_of "$cold_pid") r_cpu=$(cpu_of "$relay_pid")
n_sys=$(system_cpu_of "$nginx_cache_pid") p_sys=$(system_cpu_of "$cold_pid")
side_by_side "http://127.0.0.1:$nginx_cache" $((count / reps)) "http://127.0.0.1:$relay/http://127.0.0.1:$origin"
n_cold=("${peer_rates[@]}") p_cold=("${proxy_rates[@]}") r_cold=("${relay_rates[@]}")
# CPU milliseconds per cold resource, the server alone (each works only in its own runs).
per_resource() { awk -v a="$1" -v b="$2" -v n="$(((count / reps) * reps))" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }'; }
n_cpu=$(per_resource "$n_cpu" "$(cpu_of "$nginx_cache_pid")") p_cpu=$(per_resource "$p_cpu" "$(cpu_of "$cold_pid")")
r_cpu=$(per_resource "$r_cpu" "$(cpu_of "$relay_pid")")
n_sys=$(per_resource "$n_sys" "$(system_cpu_of "$nginx_cache_pid")")
p_sys=$(per_resource "$p_sys" "$(system_cpu_of "$cold_pid")")
n_machine=$(per_resource 0 "$peer_machine") p_machine=$(per_resource 0 "$proxy_machine")
stop_listener proxy

proxy=$(serve_segments proxy2)
proxy_pid=$(cat "$work/proxy2.pid")
rss_start=$(rss_mib "$proxy_pid")
# 2,000 resources per repetition, fewer for a small COUNT; 40 more are left for the first byte.
touched=$(( count / reps / 2 < 2000 ? count / reps / 2 : 2000 ))
side_by_side "http://127.0.0.1:$origin" "$touched"
n_warm=("${peer_rates[@]}") p_warm=("${proxy_rates[@]}")
curl_first_byte() { curl -s -o /dev/null -w '%{time_starttransfer}\n' "$1" | awk '{ printf "%.3f\n", $1 * 1000 }'; }
n_ttfb=() p_ttfb=() n_curl=() p_curl=()
for i in $(seq $((reps * touched)) $((reps * touched + 39))); do
    # 20 resources timed by a socket client, 20 more by curl.
    if [ $((i - reps * touched)) -lt 20 ]; then
        n_ttfb+=("$(bench/first_byte.py "http://127.0.0.1:$origin/seg/$i.ts")")
        p_ttfb+=("$(bench/first_byte.py "http://127.0.0.1:$proxy/http://127.0.0.1:$origin/seg/$i.ts")")
    else
        n_curl+=("$(curl_first_byte "http://127.0.0.1:$origin/seg/$i.ts")")
        p_curl+=("$(curl_first_byte "http://127.0.0.1:$proxy/http://127.0.0.1:$origin/seg/$i.ts")")
    fi
done
urls "$work/proxy.list" "http://127.0.0.1:$proxy/http://127.0.0.1:$origin" 0 $((count - 1))
rate "$work/proxy.list" > /dev/null
rss_touched=$(rss_mib "$proxy_pid")
# Sessions close 2 s after their last reader; `serve` hands freed memory back every 10 s.
sleep 12
rss_settled=$(rss_mib "$proxy_pid")
kill "$proxy_pid"
while kill -0 "$proxy_pid" 2>/dev/null; do sleep 0.1; done

ls_s=()
for _ in $(seq "$reps"); do ls_s+=("$(measure "$bin" ls --cache-dir "$segment_cache" | awk '{ print $1 }')"); done
summary=$("$bin" ls --cache-dir "$segment_cache" | head -1)

table_format="%-52s %-30s %-28s %s\n"
table_row case peer "streamcache serve" ratio
rate_row() {
    local peer=($3) ours=($4)
    table_row "$1" "$2 $(spread "${peer[@]}")" "$(spread "${ours[@]}")" \
        "$(ratio "$(median_of "${peer[@]}")" "$(median_of "${ours[@]}")")"
}
segments=${SEGMENT_BYTES:+$SEGMENT_BYTES-byte}
rate_row "cold ${segments:-2 KB} resources, req/s, 8 clients" "nginx proxy_cache" "${n_cold[*]}" "${p_cold[*]}"
echo "CPU ms per cold resource, the server alone (of it in the kernel): nginx proxy_cache $n_cpu ($n_sys), serve $p_cpu ($p_sys)"
echo "  the whole machine's less the origin's, each cache on disk (server, curl, writeback): nginx proxy_cache $n_machine, serve $p_machine"
echo "  relay-floor (SwiftNIO and AsyncHTTPClient, no cache): $(spread "${r_cold[@]}") req/s," \
    "$(ratio "$(median_of "${n_cold[@]}")" "$(median_of "${r_cold[@]}")") of nginx proxy_cache's; $r_cpu CPU ms per resource"
rate_row "cached, first touch of each, req/s, 8 clients" nginx "${n_warm[*]}" "${p_warm[*]}"
table_row "first byte of an untouched cached resource, ms" "nginx $(spread "${n_ttfb[@]}")" \
    "$(spread "${p_ttfb[@]}")" "$(ratio "$(median_of "${p_ttfb[@]}")" "$(median_of "${n_ttfb[@]}")")"
table_row "  the same, as curl's time_starttransfer, ms" "nginx $(spread "${n_curl[@]}")" \
    "$(spread "${p_curl[@]}")" "$(ratio "$(median_of "${p_curl[@]}")" "$(median_of "${n_curl[@]}")")"
echo "serve RSS MiB: at start $rss_start, after touching all $count resources $rss_touched, 12 s later $rss_settled"
echo "streamcache ls of $count resources: $(spread "${ls_s[@]}") s ($summary)"
