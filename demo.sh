#!/usr/bin/env bash
# StreamCache in one minute, offline: builds the release binary, makes a test episode, starts the
# bundled test origin (throttled like a real network) and the caching proxy, plays a range of the
# episode twice through the proxy, and shows what the second play cost: nothing from the origin.
#
#   ./demo.sh        (needs the Swift toolchain, curl, python3 and libsqlite3-dev; see the README)
set -euo pipefail
cd "$(dirname "$0")"

work=$(mktemp -d /tmp/streamcache-demo.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
echo "== building (the first build takes 10 to 30 minutes; a line at least every 10 s)"
# A line every 8 s with the step SwiftPM is at ("[N/M] Compiling …"): one step can take minutes.
# The whole log only if the build fails. (No `-e` here: while packages are fetched the log has no
# step yet, and the grep that finds none must not end the ticker.)
started=$SECONDS
(
    set +e
    while sleep 8; do
        step=$(grep -o '^\[[0-9]*/[0-9]*\]' "$work/build.log" 2>/dev/null | tail -1 | tr -d '[]')
        echo "   building for $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s, step ${step:-0/?}"
    done
) &
ticker=$!
pids+=("$ticker")
if ! swift build -c release --product streamcache > "$work/build.log" 2>&1; then
    kill "$ticker" 2>/dev/null || true
    cat "$work/build.log"
    exit 1
fi
kill "$ticker" 2>/dev/null || true
bin="$(swift build -c release --show-bin-path)/streamcache"
echo "== built $bin"

# wait_for_port FILE: the port of a server once it printed "listening on http://127.0.0.1:PORT".
wait_for_port() {
    for _ in $(seq 100); do grep -q listening "$1" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$1"
}

mkdir -p "$work/media"
head -c 20000000 /dev/urandom > "$work/media/episode.mp3"
"$bin" origin "$work/media" --rate 10M --latency 50 > "$work/origin.out" &
pids+=($!)
origin=$(wait_for_port "$work/origin.out")
"$bin" serve --port 0 --cache-dir "$work/cache" --access-log "$work/access.log" > "$work/serve.out" &
pids+=($!)
proxy=$(wait_for_port "$work/serve.out")
url="http://127.0.0.1:$proxy/http://127.0.0.1:$origin/episode.mp3"
echo "== origin on port $origin (10 MB/s), proxy on port $proxy"

for play in first second; do
    seconds=$(curl -s -r 0-4999999 -o "$work/$play.mp3" -w '%{time_total}' "$url")
    echo "== $play play of bytes 0-4999999 through the proxy: ${seconds} s"
done
cmp "$work/first.mp3" "$work/second.mp3" && cmp -n 5000000 "$work/first.mp3" "$work/media/episode.mp3" \
    && echo "== both plays got the episode's bytes"
echo "== what the origin sent (the second play cost it nothing):"
curl -s "http://127.0.0.1:$origin/_origin/stats" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print("   %d bytes in %d request(s), %d sent twice" % (s["bodyBytes"], len(s["requests"]), s["duplicateBytes"]))'
echo "== the proxy's access log:"
sed 's/^/   /' "$work/access.log"
echo "== streamcache ls:"
"$bin" ls --cache-dir "$work/cache" | sed 's/^/   /'
echo "== That was StreamCache: two plays of the same 5 MB through the proxy, the first from the origin,"
echo "   the second from the cache on disk, so the origin sent each byte once."
