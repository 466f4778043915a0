#!/usr/bin/env bash
# Benchmarks `streamcache get` against peers run side by side, and prints ratios.
#
#   bench/get.sh [SIZE_MIB]        (default 512; needs curl and GNU time: apt-get install curl time)
#
# Cold: get vs curl from the same origin, capped at 100 MB/s per connection and uncapped on
# loopback, plus the HTTP clients' own drain speed. Warm: get vs cat of the same bytes.
# Memory: peak RSS of `get` of a 2 GiB resource.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-512}
swift build -c release --product streamcache >/dev/null
bin=$(swift build -c release --show-bin-path)/streamcache
work=$(mktemp -d /tmp/streamcache-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/origin"
head -c $((size_mib << 20)) /dev/urandom > "$work/origin/media.bin"
bytes=$((size_mib << 20))

start_origin() { # args: extra origin options; prints the port
    "$bin" origin "$work/origin" "$@" > "$work/origin.$$.$RANDOM" &
    local pid=$! file
    pids+=("$pid")
    file=$(ls -t "$work"/origin.* | head -1)
    for _ in $(seq 50); do grep -q listening "$file" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$file"
}

# measure NAME COMMAND... : runs it, prints wall seconds, CPU seconds and peak RSS (KiB) as "wall cpu rss"
measure() {
    local out="$work/time.$RANDOM"
    /usr/bin/time -f "%e %U %S %M" -o "$out" "$@" > /dev/null
    awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$out"
}
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
per_gib() { awk -v c="$1" -v b="$bytes" 'BEGIN { printf "%.2f", c * 1073741824 / b }'; }

capped=$(start_origin --rate 100M)
uncapped=$(start_origin)
url_capped="http://127.0.0.1:$capped/media.bin"
url_uncapped="http://127.0.0.1:$uncapped/media.bin"
cat "$work/origin/media.bin" > /dev/null

echo "streamcache get benchmark: ${size_mib} MiB resource, $(nproc) cores, $(date -u +%Y-%m-%d)"
printf '%-44s %9s %9s %9s %8s\n' "case" "seconds" "MB/s" "CPU s" "ratio"

read -r curl_c_wall curl_c_cpu _ < <(measure curl -s -o /dev/null "$url_capped")
read -r get_c_wall get_c_cpu _ < <(measure env STREAMCACHE_DIR="$work/cache1" "$bin" get "$url_capped" -o /dev/null)
printf '%-44s %9s %9s %9s %8s\n' "curl, origin capped at 100 MB/s" "$curl_c_wall" "$(rate "$curl_c_wall")" "$curl_c_cpu" "1.00"
printf '%-44s %9s %9s %9s %8s\n' "get cold, origin capped at 100 MB/s" "$get_c_wall" "$(rate "$get_c_wall")" "$get_c_cpu" "$(ratio "$get_c_wall" "$curl_c_wall")"

read -r curl_u_wall curl_u_cpu _ < <(measure curl -s -o /dev/null "$url_uncapped")
read -r ahc_wall ahc_cpu _ < <(measure "$bin" drain "$url_uncapped")
read -r urls_wall urls_cpu _ < <(measure "$bin" drain --client urlsession "$url_uncapped")
rm -rf "$work/cache2"
read -r get_u_wall get_u_cpu _ < <(measure env STREAMCACHE_DIR="$work/cache2" "$bin" get "$url_uncapped" -o /dev/null)
printf '%-44s %9s %9s %9s %8s\n' "curl, uncapped loopback" "$curl_u_wall" "$(rate "$curl_u_wall")" "$curl_u_cpu" "1.00"
printf '%-44s %9s %9s %9s %8s\n' "AsyncHTTPClient drain alone" "$ahc_wall" "$(rate "$ahc_wall")" "$ahc_cpu" "$(ratio "$ahc_wall" "$curl_u_wall")"
printf '%-44s %9s %9s %9s %8s\n' "URLSession drain alone" "$urls_wall" "$(rate "$urls_wall")" "$urls_cpu" "$(ratio "$urls_wall" "$curl_u_wall")"
printf '%-44s %9s %9s %9s %8s\n' "get cold, uncapped loopback" "$get_u_wall" "$(rate "$get_u_wall")" "$get_u_cpu" "$(ratio "$get_u_wall" "$curl_u_wall")"
echo "  get cold vs AsyncHTTPClient's own drain: $(ratio "$get_u_wall" "$ahc_wall")x"

read -r cat_wall cat_cpu _ < <(measure cat "$work/origin/media.bin")
read -r get_w_wall get_w_cpu _ < <(measure env STREAMCACHE_DIR="$work/cache2" "$bin" get "$url_uncapped" -o /dev/null)
printf '%-44s %9s %9s %9s %8s\n' "cat of the same bytes (page cache)" "$cat_wall" "$(rate "$cat_wall")" "$cat_cpu" "1.00"
printf '%-44s %9s %9s %9s %8s\n' "get warm" "$get_w_wall" "$(rate "$get_w_wall")" "$get_w_cpu" "$(ratio "$get_w_wall" "$cat_wall")"
echo "CPU seconds per GiB: get cold $(per_gib "$get_u_cpu"), get warm $(per_gib "$get_w_cpu"), curl $(per_gib "$curl_u_cpu"), cat $(per_gib "$cat_cpu")"

if [ "${SKIP_2G:-0}" != 1 ]; then
    rm -f "$work/origin/media.bin" "$work"/cache*/data/* 2>/dev/null || true
    head -c $((2048 << 20)) /dev/urandom > "$work/origin/big.bin"
    read -r big_wall _ big_rss < <(measure env STREAMCACHE_DIR="$work/cache3" "$bin" get "http://127.0.0.1:$uncapped/big.bin" -o /dev/null)
    echo "get of a 2 GiB resource: $big_wall s, peak RSS $((big_rss / 1024)) MiB (goal < 64 MiB)"
fi
