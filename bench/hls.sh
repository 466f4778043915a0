#!/usr/bin/env bash
# Benchmarks `streamcache packages download` against peers run side by side, and prints ratios.
#
#   bench/hls.sh [SIZE_MIB]        (default 1024; needs ffmpeg, curl, GNU time and python3 with
#                                   venv: apt-get install ffmpeg curl time python3-venv)
#
# The asset: an HLS VOD made by ffmpeg, a multivariant playlist with two variants in 4 s MPEG-TS
# segments, audio muxed in each: 1280x720 at 16 Mbit/s CBR (about SIZE_MIB in all) and 640x360
# at 2 Mbit/s. Generating it takes about a minute per GiB on 2 cores; it is kept in
# /tmp/streamcache-bench-hls-asset-SIZE_MIB/ and reused by later runs.
# The origin: `streamcache origin` at 4 MiB/s per connection and 100 ms per response, as a CDN.
# Each tool downloads the highest variant with its audio into its own folder:
#   ffmpeg -i URL -map 0:v:0 -map 0:a:0 -c copy out.ts   (the 720p variant is listed first)
#   yt-dlp URL           (default format choice bestvideo*+bestaudio/best: the 720p variant;
#                         native HLS downloader, then its default remux of the .ts into .mp4)
#   yt-dlp -N 4 URL      (4 fragments at once, as our --jobs 4)
#   streamcache packages download URL --jobs 4 --library DIR
# For each: wall and CPU seconds, peak RSS, bytes it leaves (and, on a line of their own, the
# bytes that reached the disk, its cache's included), MB/s (top variant bytes / seconds),
# origin body bytes and requests (differences of GET /_origin/stats), and the ratio
# peer seconds / streamcache seconds (above 1: streamcache is faster).
# yt-dlp (with requests, as in its release binaries) is installed from PyPI into
# /tmp/streamcache-bench-venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-1024}
jobs=4
source bench/lib.sh

ytdlp_venv

# The asset, generated once per size. 16 Mbit/s CBR video, 128 kbit/s AAC and the MPEG-TS
# overhead come to about 2,059,000 bytes per second of the 720p variant (measured).
asset=/tmp/streamcache-bench-hls-asset-$size_mib
if [ -f "$asset/master.m3u8" ]; then
    generated="reused $asset"
else
    seconds=$(awk -v m="$size_mib" 'BEGIN { s = int(m * 1048576 / 2059000 / 4 + 0.5) * 4; print (s < 4 ? 4 : s) }')
    echo "generating the asset ($seconds s of video) into $asset ..." >&2
    started=$(date +%s.%N)
    mkdir -p "$work/asset"
    (
        cd "$work/asset"
        ffmpeg -nostdin -hide_banner -loglevel error \
            -f lavfi -i "testsrc2=s=1280x720:r=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
            -t "$seconds" -filter_complex "[0:v]split=2[hi][lo0];[lo0]scale=640:360[lo]" \
            -map "[hi]" -map "[lo]" -map 1:a -map 1:a \
            -c:v libx264 -preset ultrafast -g 100 -keyint_min 100 -sc_threshold 0 -x264-params nal-hrd=cbr \
            -b:v:0 16M -maxrate:v:0 16M -bufsize:v:0 16M -b:v:1 2M -maxrate:v:1 2M -bufsize:v:1 2M \
            -c:a aac -b:a 128k \
            -f hls -hls_time 4 -hls_playlist_type vod -hls_segment_type mpegts \
            -master_pl_name master.m3u8 -var_stream_map "v:0,a:0,name:720p v:1,a:1,name:360p" \
            -hls_segment_filename "%v/seg%05d.ts" "%v/index.m3u8"
    )
    rm -rf "$asset"
    mv "$work/asset" "$asset"
    generated="generated ${seconds} s of video in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
fi
bytes=$(du -sb "$asset/720p" | cut -f1)
low_bytes=$(du -sb "$asset/360p" | cut -f1)
segments=$(grep -c '^#EXTINF' "$asset/720p/index.m3u8")
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# mbps SECONDS : the 720p variant's bytes per second, in MB/s (the origin caps are low: one decimal).
mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }
cat "$asset"/*/*.ts > /dev/null

mkdir -p "$work/origin"
ln -s "$asset" "$work/origin/asset"
port=$(start_listener origin "$bin" origin "$work/origin" --rate 4M --latency 100)
url="http://127.0.0.1:$port/asset/master.m3u8"

echo "streamcache packages download benchmark: $(nproc) cores, $(date -u +%Y-%m-%d)"
echo "asset: 720p $(mib "$bytes") MiB in $segments segments of 4 s, 360p $(mib "$low_bytes") MiB ($generated)"
echo "origin: 4 MiB/s per connection, 100 ms per response; one connection needs at least" \
    "$(awk -v b="$bytes" -v n="$segments" 'BEGIN { printf "%.0f", b / 4194304 + n * 0.1 }') s for the 720p variant," \
    "$jobs at once $(awk -v b="$bytes" -v n="$segments" -v j="$jobs" 'BEGIN { printf "%.0f", (b / 4194304 + n * 0.1) / j }') s"
echo "peers: ffmpeg $(ffmpeg -version | awk 'NR == 1 { print $3 }'), yt-dlp $("$ytdlp" --version) (python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))"

bench() { download_case "$port" "$@"; }

: > "$work/results"
: > "$work/disk-written"
bench "ffmpeg -c copy (top variant)" "$work/ffmpeg" \
    ffmpeg -nostdin -hide_banner -loglevel error -i "$url" -map 0:v:0 -map 0:a:0 -c copy "$work/ffmpeg/out.ts"
bench "yt-dlp (defaults)" "$work/ytdlp" "$ytdlp" --ignore-config -P "$work/ytdlp" "$url"
bench "yt-dlp -N $jobs" "$work/ytdlp-n$jobs" "$ytdlp" --ignore-config -N "$jobs" -P "$work/ytdlp-n$jobs" "$url"
# Its stdout is kept for the asset id (the last line); `exec` leaves no shell in between.
bench "streamcache packages download --jobs $jobs" "$work/library" \
    sh -c 'out=$1; shift; exec "$@" > "$out"' sh "$work/streamcache.out" \
    env STREAMCACHE_DIR="$work/cache" "$bin" packages download "$url" --jobs "$jobs" --library "$work/library"
ours=$(awk -F'|' '$1 ~ /^streamcache/ && $8 == "ok" { print $2 }' "$work/results")
asset_id=$(tail -1 "$work/streamcache.out" 2>/dev/null || true)
cache_bytes=$(du -sb "$work/cache" 2>/dev/null | cut -f1 || echo 0)

hls_row() { printf '%-38s %8s %7s %8s %9s %6s %10s %5s %7s\n' "$@"; }
hls_row "case" "seconds" "CPU s" "RSS MiB" "out MiB" "MB/s" "origin MiB" "reqs" "ratio"
while IFS='|' read -r name wall cpu rss written sent requests status; do
    if [ "$status" != ok ]; then
        hls_row "$name" "FAILED" "" "" "$(mib "$written")" "" "$(mib "$sent")" "$requests" ""
        continue
    fi
    if [ -n "$ours" ]; then r=$(ratio "$ours" "$wall"); else r=-; fi
    hls_row "$name" "$wall" "$cpu" "$((rss / 1024))" "$(mib "$written")" "$(mbps "$wall")" "$(mib "$sent")" "$requests" "$r"
done < "$work/results"
echo "written to disk (from a sync before each run to one after it), MiB:" \
    "$(awk -F'|' '{ printf "%s%s %s", (NR > 1 ? "; " : ""), $1, ($2 == "" ? "?" : sprintf("%.1f", $2 / 1048576)) }' "$work/disk-written")"
if [ -n "$ours" ]; then
    echo "streamcache: asset id ${asset_id:-?}; cache folder $(mib "${cache_bytes:-0}") MiB (not in 'out MiB')"
fi
echo "ratio: peer seconds / streamcache seconds (above 1: streamcache is faster); the 720p variant is $(mib "$bytes") MiB"
echo "goal: >= 2x faster than ffmpeg and yt-dlp defaults, >= 1.0x yt-dlp -N $jobs; peak RSS < 64 MiB"
