#!/usr/bin/env bash
# Benchmarks `streamcache download --section` against `yt-dlp --download-sections` run side by
# side, and prints what each fetched from the origin and how long it took.
#
#   bench/sections.sh [MINUTES] [SECTION]   (defaults 60 and 30:00-32:00; needs ffmpeg, curl,
#                                            GNU time and python3 with venv: apt-get install
#                                            ffmpeg curl time python3-venv)
#   EXACT=1 bench/sections.sh ...            also cuts at the section's own frames: yt-dlp
#                                            --force-keyframes-at-cuts against --exact
#
# The asset: MINUTES of 320x180 video at 25 frames a second (a keyframe every 2 s) and 64 kbit/s
# AAC audio, made by ffmpeg as HLS with MPEG-TS segments and as DASH (SegmentTemplate with a
# SegmentTimeline), 4 s segments. It is kept in /tmp/streamcache-bench-sections-MINUTES/ and
# reused by later runs.
# The origin: `streamcache origin` at 4 MiB/s per connection and 100 ms per response, as a CDN.
# For each format, each tool writes the SECTION as one .mp4:
#   yt-dlp --download-sections '*SECTION' URL   (it hands the cut to ffmpeg, which reads the
#                                                stream from the origin)
#   streamcache download URL --section SECTION -o FILE
# and with EXACT=1, in cases named FORMAT-exact, the same with yt-dlp's --force-keyframes-at-cuts
# (ffmpeg re-encodes the whole section) and streamcache's --exact (only the edges re-encoded).
# For each: wall and CPU seconds, origin body bytes and requests, and the ratio peer seconds /
# streamcache seconds (above 1: streamcache is faster). "floor" is the bytes of the segments the
# section overlaps (video and audio), which any tool that fetches whole segments must fetch.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
section=${2:-30:00-32:00}
source bench/lib.sh

ytdlp_venv

asset=/tmp/streamcache-bench-sections-$minutes
if [ -f "$asset/dash/manifest.mpd" ]; then
    generated="reused $asset"
else
    echo "generating the asset ($minutes min) into $asset ..." >&2
    started=$(date +%s.%N)
    mkdir -p "$work/asset/hls" "$work/asset/dash"
    ffmpeg -nostdin -hide_banner -loglevel error \
        -f lavfi -i "testsrc2=s=320x180:r=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
        -t "$((minutes * 60))" -c:v libx264 -preset ultrafast -g 50 -keyint_min 50 -sc_threshold 0 -b:v 400k \
        -c:a aac -b:a 64k -f hls -hls_time 4 -hls_playlist_type vod \
        -hls_segment_filename "$work/asset/hls/s%05d.ts" "$work/asset/hls/index.m3u8"
    ffmpeg -nostdin -hide_banner -loglevel error -i "$work/asset/hls/index.m3u8" -c copy \
        -tag:v avc1 -tag:a mp4a -bsf:a aac_adtstoasc -f dash -seg_duration 4 -use_template 1 -use_timeline 1 \
        -adaptation_sets "id=0,streams=v id=1,streams=a" "$work/asset/dash/manifest.mpd"
    rm -rf "$asset"
    mv "$work/asset" "$asset"
    generated="generated in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
fi
cat "$asset"/*/* > /dev/null
mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

# The segments the section overlaps: 4 s each, from the section's start to its end.
seconds_of() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }' <<< "$1"; }
first=$(( $(seconds_of "${section%-*}") / 4 ))
last=$(( ($(seconds_of "${section#*-}") + 3) / 4 - 1 ))
floor_hls=0
for n in $(seq "$first" "$last"); do floor_hls=$((floor_hls + $(stat -c %s "$asset/hls/$(printf 's%05d.ts' "$n")"))); done
floor_dash=0
for n in $(seq $((first + 1)) $((last + 1))); do
    for stream in 0 1; do
        floor_dash=$((floor_dash + $(stat -c %s "$asset/dash/$(printf 'chunk-stream%d-%05d.m4s' "$stream" "$n")")))
    done
done

mkdir -p "$work/origin"
ln -s "$asset" "$work/origin/asset"
port=$(start_listener origin "$bin" origin "$work/origin" --rate 4M --latency 100)

echo "streamcache download --section benchmark: $(nproc) cores, $(date -u +%Y-%m-%d)"
echo "asset: $minutes min at 320x180, 4 s segments, as TS HLS and DASH ($generated); section $section"
echo "origin: 4 MiB/s per connection, 100 ms per response"
echo "peer: yt-dlp $("$ytdlp" --version), ffmpeg $(ffmpeg -version | awk 'NR == 1 { print $3 }')"

bench() { download_case "$port" "$@"; }

: > "$work/results"
for format in hls dash; do
    if [ "$format" = hls ]; then path=asset/hls/index.m3u8; else path=asset/dash/manifest.mpd; fi
    url="http://127.0.0.1:$port/$path"
    bench "$format yt-dlp --download-sections" "$work/ytdlp-$format" \
        "$ytdlp" --ignore-config --download-sections "*$section" -P "$work/ytdlp-$format" -o section.mp4 "$url"
    bench "$format streamcache --section -o" "$work/sc-$format" \
        env STREAMCACHE_DIR="$work/cache-$format" "$bin" download "$url" --section "$section" \
        --library "$work/library-$format" -o "$work/sc-$format/section.mp4"
    if [ "${EXACT:-0}" = 1 ]; then
        bench "$format-exact yt-dlp --force-keyframes-at-cuts" "$work/ytdlp-exact-$format" \
            "$ytdlp" --ignore-config --download-sections "*$section" --force-keyframes-at-cuts \
            -P "$work/ytdlp-exact-$format" -o section.mp4 "$url"
        bench "$format-exact streamcache --section --exact -o" "$work/sc-exact-$format" \
            env STREAMCACHE_DIR="$work/cache-exact-$format" "$bin" download "$url" --section "$section" --exact \
            --library "$work/library-exact-$format" -o "$work/sc-exact-$format/section.mp4"
    fi
done

row() { printf '%-46s %8s %7s %10s %5s %8s %7s\n' "$@"; }
row "case" "seconds" "CPU s" "origin MiB" "reqs" "÷ floor" "ratio"
while IFS='|' read -r name wall cpu rss written sent requests status; do
    floor=$floor_hls
    [[ "$name" == dash* ]] && floor=$floor_dash
    if [ "$status" != ok ]; then
        row "$name" "FAILED" "" "$(mib "$sent")" "$requests" "" ""
        continue
    fi
    ours=$(awk -F'|' -v f="${name%% *}" '$1 ~ ("^" f " streamcache") && $8 == "ok" { print $2 }' "$work/results")
    if [ -n "$ours" ]; then r=$(ratio "$ours" "$wall"); else r=-; fi
    row "$name" "$wall" "$cpu" "$(mib "$sent")" "$requests" "$(awk -v s="$sent" -v f="$floor" 'BEGIN { printf "%.2f", s / f }')" "$r"
done < "$work/results"
echo "floor: the segments the section overlaps, $(mib "$floor_hls") MiB (HLS), $(mib "$floor_dash") MiB (DASH)"
echo "ratio: peer seconds / streamcache seconds (above 1: streamcache is faster)"
echo "goal: fewer origin bytes than yt-dlp, and >= 1.0x its speed"
