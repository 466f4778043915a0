#!/usr/bin/env bash
# Benchmarks `streamcache download` of a DASH MPD against yt-dlp run side by side, and prints
# ratios.
#
#   bench/dash.sh [SIZE_MIB]       (default 256; needs ffmpeg, curl, GNU time and python3 with
#                                   venv: apt-get install ffmpeg curl time python3-venv)
#
# The asset: a DASH presentation made by ffmpeg's dash muxer (SegmentTemplate with a
# SegmentTimeline, 4 s fragmented MP4 segments): 1280x720 video at 16 Mbit/s CBR (about SIZE_MIB),
# 640x360 at 2 Mbit/s and 128 kbit/s AAC audio. It is kept in
# /tmp/streamcache-bench-dash-asset-SIZE_MIB/ and reused by later runs.
# The origin: `streamcache origin` at 4 MiB/s per connection and 100 ms per response, as a CDN.
# Each tool downloads the top video representation and the audio into its own folder:
#   yt-dlp -N 4 URL      (its generic extractor reads the MPD; default format choice
#                         bestvideo*+bestaudio: the 720p representation and the audio, 4
#                         fragments at once, then its default merge of the two into one .mp4)
#   yt-dlp -N 4 -f bv    (the 720p representation alone: no merge)
#   streamcache download URL --jobs 4 --library DIR
# For each: wall and CPU seconds, peak RSS, bytes written, origin body bytes and requests, and
# the ratio peer seconds / streamcache seconds (above 1: streamcache is faster).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-256}
jobs=4
source bench/lib.sh

ytdlp_venv

# 16 Mbit/s CBR video and the fragmented MP4 overhead come to about 2,010,000 bytes per second.
asset=/tmp/streamcache-bench-dash-asset-$size_mib
if [ -f "$asset/manifest.mpd" ]; then
    generated="reused $asset"
else
    seconds=$(awk -v m="$size_mib" 'BEGIN { s = int(m * 1048576 / 2010000 / 4 + 0.5) * 4; print (s < 4 ? 4 : s) }')
    echo "generating the asset ($seconds s of video) into $asset ..." >&2
    started=$(date +%s.%N)
    mkdir -p "$work/asset"
    ffmpeg -nostdin -hide_banner -loglevel error \
        -f lavfi -i "testsrc2=s=1280x720:r=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
        -t "$seconds" -filter_complex "[0:v]split=2[hi][lo0];[lo0]scale=640:360[lo]" \
        -map "[hi]" -map "[lo]" -map 1:a \
        -c:v libx264 -preset ultrafast -g 100 -keyint_min 100 -sc_threshold 0 -x264-params nal-hrd=cbr \
        -b:v:0 16M -maxrate:v:0 16M -bufsize:v:0 16M -b:v:1 2M -maxrate:v:1 2M -bufsize:v:1 2M \
        -c:a aac -b:a 128k -f dash -seg_duration 4 -adaptation_sets "id=0,streams=v id=1,streams=a" \
        "$work/asset/manifest.mpd"
    rm -rf "$asset"
    mv "$work/asset" "$asset"
    generated="generated ${seconds} s of video in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
fi
bytes=$(cat "$asset"/*-stream0*.m4s | wc -c)
segments=$(ls "$asset" | grep -c '^chunk-stream0-')
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
cat "$asset"/* > /dev/null

mkdir -p "$work/origin"
ln -s "$asset" "$work/origin/asset"
port=$(start_listener origin "$bin" origin "$work/origin" --rate 4M --latency 100)
url="http://127.0.0.1:$port/asset/manifest.mpd"

echo "streamcache download (DASH) benchmark: $(nproc) cores, $(date -u +%Y-%m-%d)"
echo "asset: 720p $(mib "$bytes") MiB in $segments segments of 4 s, with 360p and audio ($generated)"
echo "origin: 4 MiB/s per connection, 100 ms per response; $jobs connections need at least" \
    "$(awk -v b="$bytes" -v n="$segments" -v j="$jobs" 'BEGIN { printf "%.1f", (b / 4194304 + n * 0.1) / j }') s for the 720p video"
echo "peer: yt-dlp $("$ytdlp" --version) (python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))"

bench() { download_case "$port" "$@"; }

: > "$work/results"
bench "yt-dlp -N $jobs (video+audio, merged)" "$work/ytdlp" \
    "$ytdlp" --ignore-config -N "$jobs" -P "$work/ytdlp" "$url"
bench "yt-dlp -N $jobs -f bv (video only)" "$work/ytdlp-bv" \
    "$ytdlp" --ignore-config -N "$jobs" -f bv -P "$work/ytdlp-bv" "$url"
bench "streamcache download --jobs $jobs" "$work/library" \
    sh -c 'out=$1; shift; exec "$@" > "$out"' sh "$work/streamcache.out" \
    env STREAMCACHE_DIR="$work/cache" "$bin" download "$url" --jobs "$jobs" --library "$work/library"
ours=$(awk -F'|' '$1 ~ /^streamcache/ && $8 == "ok" { print $2 }' "$work/results")

row() { printf '%-40s %8s %7s %8s %9s %10s %5s %7s\n' "$@"; }
row "case" "seconds" "CPU s" "RSS MiB" "out MiB" "origin MiB" "reqs" "ratio"
while IFS='|' read -r name wall cpu rss written sent requests status; do
    if [ "$status" != ok ]; then
        row "$name" "FAILED" "" "" "$(mib "$written")" "$(mib "$sent")" "$requests" ""
        continue
    fi
    if [ -n "$ours" ]; then r=$(ratio "$ours" "$wall"); else r=-; fi
    row "$name" "$wall" "$cpu" "$((rss / 1024))" "$(mib "$written")" "$(mib "$sent")" "$requests" "$r"
done < "$work/results"
echo "ratio: peer seconds / streamcache seconds (above 1: streamcache is faster)"
echo "goal: >= 1.0x yt-dlp -N $jobs"
