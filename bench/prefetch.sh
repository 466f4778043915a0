#!/usr/bin/env bash
# The first frame of items through `serve`: cold, after `streamcache prefetch`, and fully cached,
# on an origin with latency and a rate per connection; and a stream's throughput beside 100
# prefetches.
#
#   bench/prefetch.sh [ITEMS] [LATENCY_MS]   (defaults 6 and 100; needs ffmpeg, curl, python3)
#
# ITEMS items of each kind (an fMP4 HLS stream of one variant and an audio rendition, an MP4 with
# its movie box at the end, an MP3), 60 s each, are served by `streamcache origin --rate 4M
# --latency LATENCY_MS`, last modified a year ago (fresh by the heuristic a cache applies, as a
# CDN's files are by their fields). For each state, each item's first frame is timed as ffmpeg
# decodes it through `serve`, less what ffmpeg takes for the same item from the origin's folder
# (its own start-up): once cold, the median of five plays prefetched and cached (those plays ask
# the origin nothing). The origin's requests and body bytes in each state are counted. Prints
# the median first frame per state and kind (at least 1 ms: below that, runs of ffmpeg differ more
# than the items do), and the ratios: prefetched against fully cached
# (goal: within 1.2x) and cold against prefetched (goal: at least 5x). The HLS items have one
# variant because ffmpeg, unlike AVPlayer, ExoPlayer and hls.js, opens every variant of a
# multivariant playlist and reads a segment of each before its first frame: with three variants
# it would time the two a player does not start with.
# Then a 64 MiB file is read through `serve` alone, and again while `POST /prefetch` fetches the
# first seconds of 100 items of another cache-cold origin path (goal: at least 90% of alone).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-6}
latency=${2:-100}
source bench/lib.sh

origin_dir="$work/origin"
mkdir -p "$origin_dir"
echo "making $items items of each kind ..." >&2
video=(-f lavfi -i "testsrc2=size=640x360:rate=25:duration=60")
audio=(-f lavfi -i "sine=frequency=440:duration=60")
mkdir -p "$origin_dir/hls"
(
    cd "$origin_dir/hls"
    ffmpeg -nostdin -hide_banner -loglevel error "${video[@]}" "${audio[@]}" \
        -map 0:v -map 1:a -c:v libx264 -preset ultrafast -g 50 -b:v 1500k -c:a aac -b:a 96k \
        -f hls -hls_time 4 -hls_playlist_type vod -hls_segment_type fmp4 -master_pl_name master.m3u8 \
        -var_stream_map "v:0,agroup:aud a:0,agroup:aud,default:yes" \
        -hls_segment_filename "v%v/seg%03d.m4s" "v%v/index.m3u8"
)
ffmpeg -nostdin -hide_banner -loglevel error "${video[@]}" "${audio[@]}" -c:v libx264 -preset ultrafast \
    -g 50 -b:v 1500k -c:a aac -b:a 96k "$origin_dir/item.mp4"
ffmpeg -nostdin -hide_banner -loglevel error "${audio[@]}" -c:a libmp3lame -b:a 128k "$origin_dir/item.mp3"
# Each item its own path (links of the one made), so every one is new to a cache.
names=()
for n in $(seq "$items"); do
    ln -s hls "$origin_dir/hls$n"
    ln "$origin_dir/item.mp4" "$origin_dir/video$n.mp4"
    ln "$origin_dir/item.mp3" "$origin_dir/audio$n.mp3"
    names+=("hls$n/master.m3u8" "video$n.mp4" "audio$n.mp3")
done
head -c $((64 << 20)) /dev/urandom > "$origin_dir/large.bin"
mkdir -p "$origin_dir/many"
for n in $(seq 100); do ln "$origin_dir/item.mp3" "$origin_dir/many/$n.mp3"; done
find "$origin_dir" -exec touch -h -d '1 year ago' {} +

origin=$(start_listener origin "$bin" origin "$origin_dir" --rate 4M --latency "$latency")
kind_of() { case $1 in hls*) echo hls ;; video*) echo mp4 ;; *) echo mp3 ;; esac; }

# decode SOURCE NAME : seconds ffmpeg takes to decode the first frame of item NAME at SOURCE.
decode() {
    local frames
    case $2 in *.mp3) frames=(-map 0:a:0 -frames:a 1) ;; *) frames=(-map 0:v:0 -frames:v 1) ;; esac
    python3 - "$1" "${frames[@]}" <<'PY'
import subprocess, sys, time
started = time.monotonic()
subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", sys.argv[1], *sys.argv[2:],
                "-f", "null", "-"], check=False)
print(f"{time.monotonic() - started:.4f}")
PY
}

# first_frame PORT NAME : seconds until ffmpeg has the first frame of NAME through serve, less
# what it takes from the origin's folder.
first_frame() {
    local served local_
    served=$(decode "http://127.0.0.1:$1/http://127.0.0.1:$origin/$2" "$2")
    local_=$(decode "$origin_dir/$2" "$2")
    awk -v a="$served" -v b="$local_" 'BEGIN { d = a - b; printf "%.3f\n", d < 0.001 ? 0.001 : d }'
}

# state_run NAME PORT REPEATS : times every item's first frame, the median of REPEATS plays (a
# cold item plays cold once); appends "state kind seconds" lines.
state_run() {
    local before_bytes before_requests after_bytes after_requests times
    read -r before_bytes before_requests < <(origin_stats "$origin")
    for name in "${names[@]}"; do
        times=()
        for _ in $(seq "$3"); do times+=("$(first_frame "$2" "$name")"); done
        echo "$1 $(kind_of "$name") $(median_of "${times[@]}")" >> "$work/frames"
    done
    read -r after_bytes after_requests < <(origin_stats "$origin")
    echo "$1 $((after_requests - before_requests)) $((after_bytes - before_bytes))" >> "$work/origin-use"
}

: > "$work/frames"
: > "$work/origin-use"
echo "cold ..." >&2
cold=$(start_listener serve-cold "$bin" serve --port 0 --cache-dir "$work/cache-cold")
state_run cold "$cold" 1

echo "prefetched ..." >&2
warm=$(start_listener serve-warm "$bin" serve --port 0 --cache-dir "$work/cache-warm")
read -r b0 r0 < <(origin_stats "$origin")
started=$(date +%s.%N)
STREAMCACHE_DIR="$work/cache-warm" STREAMCACHE_LIBRARY="$work/library" "$bin" prefetch --seconds 5 \
    "${names[@]/#/http://127.0.0.1:$origin/}" > /dev/null
prefetch_seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
read -r b1 r1 < <(origin_stats "$origin")
state_run prefetched "$warm" 5

echo "fully cached ..." >&2
full=$(start_listener serve-full "$bin" serve --port 0 --cache-dir "$work/cache-full")
for name in "${names[@]}"; do
    ffmpeg -nostdin -hide_banner -loglevel error -i "http://127.0.0.1:$full/http://127.0.0.1:$origin/$name" \
        -map 0 -c copy -f null - || true
done
state_run cached "$full" 5

echo "prefetch benchmark: $(nproc) cores, $(date -u +%Y-%m-%d); origin 4 MiB/s a connection, ${latency} ms a response"
echo "items: $items each of fMP4 HLS (one variant, audio rendition), MP4 (moov at the end), MP3; 60 s each"
echo "prefetch of $((items * 3)) items, 5 s each: $prefetch_seconds s, $((r1 - r0)) origin requests, $(((b1 - b0) >> 10)) KiB"
printf '%-12s %-6s %12s\n' state kind "first frame"
for state in cold prefetched cached; do
    for kind in hls mp4 mp3; do
        printf '%-12s %-6s %10s s\n' "$state" "$kind" \
            "$(spread $(awk -v s="$state" -v k="$kind" '$1 == s && $2 == k { print $3 }' "$work/frames"))"
    done
    read -r _ requests bytes < <(grep "^$state " "$work/origin-use")
    echo "  $state: $requests origin requests, $((bytes >> 10)) KiB while timing"
done
for kind in hls mp4 mp3; do
    median() { median_of $(awk -v s="$1" -v k="$kind" '$1 == s && $2 == k { print $3 }' "$work/frames"); }
    # Below 20 ms, first frames are within the spread of ffmpeg's own runs: a ratio of two such
    # figures says nothing, their difference does.
    against_cached=$(awk -v p="$(median prefetched)" -v c="$(median cached)" 'BEGIN {
        if (p < 0.02 && c < 0.02) printf "and fully cached both under 20 ms, %.0f ms apart", (p > c ? p - c : c - p) * 1000
        else printf "%.2fx the fully cached time", p / c }')
    echo "$kind: prefetched $against_cached (goal <= 1.2x)," \
        "cold $(ratio "$(median prefetched)" "$(median cold)")x the prefetched (goal >= 5x)"
done

# A stream's throughput alone, then beside 100 prefetches through the same server.
alone=$(measure curl -s -o /dev/null "http://127.0.0.1:$warm/http://127.0.0.1:$origin/large.bin" | awk '{ print $1 }')
body=$(printf '"http://127.0.0.1:%s/many/%s.mp3",' $(for n in $(seq 100); do echo "$origin $n"; done))
ln "$origin_dir/large.bin" "$origin_dir/large2.bin"
curl -s -o /dev/null -X POST --data "{\"urls\": [${body%,}], \"seconds\": 5}" "http://127.0.0.1:$warm/prefetch"
beside=$(measure curl -s -o /dev/null "http://127.0.0.1:$warm/http://127.0.0.1:$origin/large2.bin" | awk '{ print $1 }')
echo "64 MiB through serve at 4 MiB/s: alone $alone s, beside 100 prefetches $beside s:" \
    "$(ratio "$beside" "$alone")x of alone (goal >= 0.9x)"
