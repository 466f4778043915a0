#!/usr/bin/env bash
# Soak test of `streamcache serve` on loopback: correctness and resource use under mixed load.
#
#   bench/soak.sh                  (SOAK_SECONDS=120 by default; needs curl and python3)
#
# For SOAK_SECONDS, bench/soak.py runs at once: 200 clients reading random ranges of a cold
# 64 MiB file (a quarter open-ended and given up after at most 2 MiB), every byte compared with
# the file; 1,000 idle connections that never finish a request (the proxy's 30 s idle timeout
# should close them; they reopen); 20 clients giving up after 1-3 s on a 2 kB/s origin; 10
# clients sending the red team's hostile cases one after another (Tests/Fixtures/scripted_origin.py
# as the hostile origin, `streamcache origin --fault changing-etag-only` for an 8 MiB file whose
# ETag changes on every response, with no Last-Modified; a 503, a web page, a playlist of 1.25 million entries and the proxy's own address as a mapped IPv4 address).
# Reports requests, bytes checked, mismatched bytes, errors by kind, the proxy's fds, RSS and
# threads (baseline after a warm-up request / peak / after the clients are gone), the time it
# takes to exit after SIGTERM, and the origin's bytes for the file vs the union of bytes asked.
# Ends with `soak: PASS`, or `soak: FAIL (reasons)` and status 1 when a byte was wrong, the fd
# count after is not within 10 of the baseline, or the exit after SIGTERM took over 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-120}
source bench/lib.sh

mkdir -p "$work/origin"
head -c $((64 << 20)) /dev/urandom > "$work/origin/media.bin"
head -c $((4 << 20)) /dev/urandom > "$work/origin/slow.bin"
head -c $((64 << 10)) /dev/urandom > "$work/origin/warmup.bin"
mkdir -p "$work/etag"
head -c $((8 << 20)) /dev/urandom > "$work/etag/etag.bin"
# A playlist whose variables double 32 times (1.6 KB that would expand to gigabytes).
{
    printf '#EXTM3U\n#EXT-X-VERSION:8\n#EXT-X-TARGETDURATION:2\n#EXT-X-DEFINE:NAME="v0",VALUE="%s"\n' "$(head -c 1000 /dev/zero | tr '\0' x)"
    for level in $(seq 32); do printf '#EXT-X-DEFINE:NAME="v%d",VALUE="{$v%d}{$v%d}"\n' "$level" $((level - 1)) $((level - 1)); done
    printf '#EXTINF:2.0,\n{$v32}.ts\n#EXT-X-ENDLIST\n'
} > "$work/origin/bomb.m3u8"
# 16 MB of one-character segments: 1.25 million entries, refused by their count.
python3 -c 'import sys; sys.stdout.write("#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + "#EXTINF:1,\na\n" * 1250000)' \
    > "$work/origin/huge.m3u8"
cat > "$work/hostile.json" <<'JSON'
{"/loop": {"status": 200, "size": 2000000, "notModifiedToIfRange": true,
           "headers": [["ETag", "\"l1\""], ["Cache-Control", "max-age=1"]]},
 "/down": {"status": 503, "body": "down\n"},
 "/page.html": {"status": 200, "text": "<script>fetch('/')</script>", "headers": [["Content-Type", "text/html"]]},
 "/coded": {"status": 200, "size": 300000, "transferCoding": "gzip, chunked"},
 "/endless": {"status": 200, "endless": true, "rate": 4000000}}
JSON

origin=$(start_listener origin "$bin" origin "$work/origin")
slow=$(start_listener origin-slow "$bin" origin "$work/origin" --rate 2000 --latency 500)
hostile=$(start_listener origin-hostile python3 -u Tests/Fixtures/scripted_origin.py "$work/hostile.json")
etag=$(start_listener origin-etag "$bin" origin "$work/etag" --fault changing-etag-only)
proxy=$(start_listener proxy "$bin" serve --port 0 --cache-dir "$work/cache" --idle-timeout 30 \
    --error-log "$work/error.log")
pid=$(cat "$work/proxy.pid")
[ -n "$origin" ] && [ -n "$slow" ] && [ -n "$hostile" ] && [ -n "$etag" ] && [ -n "$proxy" ] || { echo "soak: a server did not start" >&2; exit 1; }

echo "streamcache serve soak: ${seconds} s, $(nproc) cores, $(date -u +%Y-%m-%d), $bin"
python3 bench/soak.py run --proxy-port "$proxy" --origin-port "$origin" --slow-port "$slow" \
    --pid "$pid" --media "$work/origin/media.bin" --slow "$work/origin/slow.bin" \
    --hostile-port "$hostile" --etag-port "$etag" --etag "$work/etag/etag.bin" \
    --seconds "$seconds" --out "$work/run.json"
curl -s "http://127.0.0.1:$origin/_origin/stats" > "$work/origin-stats.json"
curl -s "http://127.0.0.1:$slow/_origin/stats" > "$work/slow-stats.json"

# Failed requests the proxy has logged so far (a give-up is one), to compare with after the exit.
logged_before=$(grep -vc '^#' "$work/error.log" 2>/dev/null || true)

# SIGTERM, then poll /proc until the proxy is gone (or a zombie waiting for its reaper).
running() { [ -e "/proc/$1/status" ] && [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" != Z ]; }
exit_seconds="over 10"
if running "$pid"; then
    kill -TERM "$pid"
    began=$(date +%s.%N)
    while running "$pid"; do
        elapsed=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        awk -v e="$elapsed" 'BEGIN { exit !(e > 10) }' && break
        sleep 0.05
    done
    if running "$pid"; then
        kill -KILL "$pid"
    else
        exit_seconds=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    fi
else
    exit_seconds="not running"
fi
if [ -s "$work/proxy.err" ]; then
    echo "proxy stderr ($(wc -l < "$work/proxy.err") lines, the last 5):"
    tail -n 5 "$work/proxy.err" | cut -c1-200 | sed 's/^/  /'
fi

python3 bench/soak.py report --run "$work/run.json" --origin-stats "$work/origin-stats.json" \
    --slow-stats "$work/slow-stats.json" --exit-seconds "$exit_seconds" \
    --error-log "$work/error.log" --logged-before "${logged_before:-0}"
