#!/usr/bin/env bash
# Benchmarks `streamcache get` against peers run side by side, and prints ratios.
#
#   bench/get.sh [SIZE_MIB]        (default 512; needs curl and GNU time: apt-get install curl time)
#
# Cold: get vs curl from the same origin, capped at 100 MB/s per connection and uncapped on
# loopback, plus the HTTP clients' own drain speed. Warm: get vs cat of the same bytes.
# Memory: peak RSS of `get` of a 2 GiB resource.
# `get` writes to stdout (`-o -`), which `measure` discards: a file-writing tool is never
# pointed at /dev/null itself.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-512}
bytes=$((size_mib << 20))
source bench/lib.sh

mkdir -p "$work/origin"
head -c "$bytes" /dev/urandom > "$work/origin/media.bin"

capped=$(start_listener origin-capped "$bin" origin "$work/origin" --rate 100M)
uncapped=$(start_listener origin "$bin" origin "$work/origin")
url_capped="http://127.0.0.1:$capped/media.bin"
url_uncapped="http://127.0.0.1:$uncapped/media.bin"
cat "$work/origin/media.bin" > /dev/null

echo "streamcache get benchmark: ${size_mib} MiB resource, $(nproc) cores, $(date -u +%Y-%m-%d)"
row "case" "seconds" "MB/s" "CPU s" "ratio"

read -r curl_c_wall curl_c_cpu _ < <(measure curl -s -o /dev/null "$url_capped")
read -r get_c_wall get_c_cpu _ < <(measure env STREAMCACHE_DIR="$work/cache1" "$bin" get "$url_capped" -o -)
row "curl, origin capped at 100 MB/s" "$curl_c_wall" "$(rate "$curl_c_wall")" "$curl_c_cpu" "1.00"
row "get cold, origin capped at 100 MB/s" "$get_c_wall" "$(rate "$get_c_wall")" "$get_c_cpu" "$(ratio "$get_c_wall" "$curl_c_wall")"

read -r curl_u_wall curl_u_cpu _ < <(measure curl -s -o /dev/null "$url_uncapped")
read -r ahc_wall ahc_cpu _ < <(measure "$bin" drain "$url_uncapped")
rm -rf "$work/cache2"
read -r get_u_wall get_u_cpu _ < <(measure env STREAMCACHE_DIR="$work/cache2" "$bin" get "$url_uncapped" -o -)
row "curl, uncapped loopback" "$curl_u_wall" "$(rate "$curl_u_wall")" "$curl_u_cpu" "1.00"
row "AsyncHTTPClient drain alone" "$ahc_wall" "$(rate "$ahc_wall")" "$ahc_cpu" "$(ratio "$ahc_wall" "$curl_u_wall")"
row "get cold, uncapped loopback" "$get_u_wall" "$(rate "$get_u_wall")" "$get_u_cpu" "$(ratio "$get_u_wall" "$curl_u_wall")"
echo "  get cold vs AsyncHTTPClient's own drain: $(ratio "$get_u_wall" "$ahc_wall")x"

# Warm runs take a fraction of a second: the best of 5 each, against timer resolution and noise.
read -r cat_wall cat_cpu _ < <(for _ in 1 2 3 4 5; do measure cat "$work/origin/media.bin"; done | sort -n | head -1)
read -r get_w_wall get_w_cpu _ < <(for _ in 1 2 3 4 5; do
    measure env STREAMCACHE_DIR="$work/cache2" "$bin" get "$url_uncapped" -o -
done | sort -n | head -1)
row "cat of the same bytes (page cache), best of 5" "$cat_wall" "$(rate "$cat_wall")" "$cat_cpu" "1.00"
row "get warm, best of 5" "$get_w_wall" "$(rate "$get_w_wall")" "$get_w_cpu" "$(ratio "$get_w_wall" "$cat_wall")"
echo "CPU seconds per GiB: get cold $(per_gib "$get_u_cpu"), get warm $(per_gib "$get_w_cpu"), curl $(per_gib "$curl_u_cpu"), cat $(per_gib "$cat_cpu")"

if [ "${SKIP_2G:-0}" != 1 ]; then
    rm -f "$work/origin/media.bin" "$work"/cache*/data/* 2>/dev/null || true
    head -c $((2048 << 20)) /dev/urandom > "$work/origin/big.bin"
    read -r big_wall _ big_rss < <(measure env STREAMCACHE_DIR="$work/cache3" "$bin" get "http://127.0.0.1:$uncapped/big.bin" -o -)
    echo "get of a 2 GiB resource: $big_wall s, peak RSS $((big_rss / 1024)) MiB (goal < 64 MiB)"
fi
