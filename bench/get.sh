#!/usr/bin/env bash
# Benchmarks `streamcache get` against peers run side by side, and prints ratios.
#
#   bench/get.sh [SIZE_MIB] [REPETITIONS]   (defaults 512 and 5; needs curl and GNU time:
#                                            apt-get install curl time)
#
# Each repetition runs every case once, the peer and `get` one after the other, so both see the
# same machine; the table gives the median of the repetitions with their range, and the ratio
# of the medians. Cold: get vs curl from the same origin, capped at 100 MB/s per connection and
# uncapped on loopback (a new cache each time), plus AsyncHTTPClient's own drain speed and curl
# keeping the bytes in a file (`get` keeps them in its cache: the least a cache must do), and
# curl keeping a file it then syncs (`get` syncs what it records, so a crash never leaves a
# recorded byte unwritten: the disk's write speed is its floor); each of these three writers runs
# right after recycle_pages, in a page cache filled first (fill_page_cache; see bench/lib.sh). Warm:
# get vs cat of the same bytes. Then CPU seconds per GiB, and the peak RSS of `get` of a 2 GiB
# resource.
# `get` writes to stdout (`-o -`), which `measure` discards: a file-writing tool is never
# pointed at /dev/null itself.
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

capped=$(start_listener origin-capped "$bin" origin "$work/origin" --rate 100M)
uncapped=$(start_listener origin "$bin" origin "$work/origin")
url_capped="http://127.0.0.1:$capped/media.bin"
url_uncapped="http://127.0.0.1:$uncapped/media.bin"
get() { measure env STREAMCACHE_DIR="$1" "$bin" get "$2" -o -; }

c_capped=() g_capped=() c_cold=() k_cold=() s_cold=() a_cold=() g_cold=() c_warm=() g_warm=()
curl_cpu=0 get_cold_cpu=0 cat_cpu=0 get_warm_cpu=0
for rep in $(seq "$reps"); do
    read -r wall _ < <(measure curl -s -o /dev/null "$url_capped")
    c_capped+=("$wall")
    read -r wall _ < <(get "$work/capped-$rep" "$url_capped")
    g_capped+=("$wall")
    rm -rf "$work/capped-$rep"

    read -r wall cpu _ < <(measure curl -s -o /dev/null "$url_uncapped")
    c_cold+=("$wall")
    curl_cpu=$(add "$curl_cpu" "$cpu")
    recycle_pages "$bytes"
    read -r wall _ < <(measure curl -s -o "$work/kept-$rep.bin" "$url_uncapped")
    k_cold+=("$wall")
    rm -f "$work/kept-$rep.bin"
    recycle_pages "$bytes"
    read -r wall _ < <(measure sh -c 'curl -s -o "$1" "$2" && sync "$1"' sh "$work/synced-$rep.bin" "$url_uncapped")
    s_cold+=("$wall")
    rm -f "$work/synced-$rep.bin"
    read -r wall _ < <(measure "$bin" drain "$url_uncapped")
    a_cold+=("$wall")
    recycle_pages "$bytes"
    read -r wall cpu _ < <(get "$work/cold-$rep" "$url_uncapped")
    g_cold+=("$wall")
    get_cold_cpu=$(add "$get_cold_cpu" "$cpu")

    read -r wall cpu _ < <(measure cat "$work/origin/media.bin")
    c_warm+=("$wall")
    cat_cpu=$(add "$cat_cpu" "$cpu")
    read -r wall cpu _ < <(get "$work/cold-$rep" "$url_uncapped")
    g_warm+=("$wall")
    get_warm_cpu=$(add "$get_warm_cpu" "$cpu")
    rm -rf "$work/cold-$rep"
    echo "repetition $rep of $reps done" >&2
done

echo "streamcache get benchmark: ${size_mib} MiB resource, $(nproc) cores, $(date -u +%Y-%m-%d)," \
    "median of $reps interleaved repetitions (min-max)"
table_format='%-34s %-48s %-24s %6s\n'
table_row "case" "peer" "streamcache get" "ratio"
time_row "cold, origin capped at 100 MB/s" "curl" "${c_capped[*]}" "${g_capped[*]}"
time_row "cold, uncapped loopback" "curl" "${c_cold[*]}" "${g_cold[*]}"
time_row "cold, uncapped loopback" "curl keeping a file" "${k_cold[*]}" "${g_cold[*]}"
time_row "cold, uncapped loopback" "curl keeping a synced file" "${s_cold[*]}" "${g_cold[*]}"
time_row "cold, uncapped loopback" "AsyncHTTPClient drain" "${a_cold[*]}" "${g_cold[*]}"
time_row "warm" "cat (page cache)" "${c_warm[*]}" "${g_warm[*]}"

total=$((bytes * reps))
gib() { awk -v c="$1" -v b="$total" 'BEGIN { printf "%.2f", c * 1073741824 / b }'; }
echo "CPU seconds per GiB: cold uncapped: curl $(gib "$curl_cpu"), get $(gib "$get_cold_cpu");" \
    "warm: cat $(gib "$cat_cpu"), get $(gib "$get_warm_cpu")"

if [ "${SKIP_2G:-0}" != 1 ]; then
    rm -f "$work/origin/media.bin"
    head -c $((2048 << 20)) /dev/urandom > "$work/origin/big.bin"
    read -r big_wall _ big_rss < <(get "$work/cache-big" "http://127.0.0.1:$uncapped/big.bin")
    echo "get of a 2 GiB resource: $big_wall s, peak RSS $((big_rss / 1024)) MiB (goal < 64 MiB)"
fi
