#!/usr/bin/env bash
# Whether hostile manifests hold up the rest of `serve`: 8 clients ask again and again for a
# 16 MiB MPD (elements of `&amp;` entities, within the 16 MiB bound, costly to read, each read
# whole and answered), while one player asks
# 200 times for an unrelated small cached playlist (answered by a task, as every rewritten
# document is). Prints the player's p50 and p99 in ms, with and without the 8 clients.
#
#   bench/hostile-serve.sh        (STREAMCACHE_BIN=PATH measures another build)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

python3 Tests/Fixtures/hostile_documents.py entities 16 "$work/hostile.mpd"
python3 - "$work" <<'PY'
import sys
with open(f"{sys.argv[1]}/small.m3u8", "w") as out:
    out.write("#EXTM3U\n#EXT-X-TARGETDURATION:2\n" + "".join(f"#EXTINF:2.0,\ns{i}.ts\n" for i in range(50))
              + "#EXT-X-ENDLIST\n")
PY
origin=$(start_listener origin "$bin" origin "$work")
proxy=$(start_listener serve "$bin" serve --port 0 --cache-dir "$work/cache")
base="http://127.0.0.1:$proxy/http://127.0.0.1:$origin"
curl -s -o /dev/null "$base/small.m3u8"
curl -s -o /dev/null "$base/hostile.mpd"

# percentiles FILE: p50 and p99 of the seconds in FILE, in ms.
percentiles() {
    sort -n "$1" | awk '{ v[NR] = $1 } END { printf "p50 %.1f ms, p99 %.1f ms\n", v[int(NR * 0.5)] * 1000, v[int(NR * 0.99)] * 1000 }'
}
play() {
    for _ in $(seq 200); do curl -s -o /dev/null -w '%{time_total}\n' "$base/small.m3u8"; done > "$work/$1"
}
play quiet
for client in $(seq 8); do
    (while :; do curl -s -o /dev/null "$base/hostile.mpd"; done) &
    echo $! > "$work/hostile-$client.pid"
done
sleep 1
play busy
echo "small playlist alone:             $(percentiles "$work/quiet")"
echo "beside 8 clients of a 16 MiB MPD: $(percentiles "$work/busy")"
