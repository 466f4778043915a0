#!/usr/bin/env bash
# The cold relay of two `serve` builds side by side: a large file new to each cache, relayed to
# curl and written to the cache on disk.
#
#   bench/relay-ab.sh OLD_BINARY [SIZE_MIB] [REPETITIONS]   (defaults 256 and 5; needs curl and
#                                                           GNU time)
#
# One origin (`streamcache origin` of this checkout) serves hard links of one file, a new one for
# every run. Each repetition runs the old build's `serve`, then the new one's, on caches of their
# own in the bench folder, each right after recycle_pages and a sync (see bench/lib.sh), and times
# curl through it. Prints every repetition (seconds, and CPU seconds per GiB of the server and
# its curl), then the medians and the ratios (above 1: the new build is faster or cheaper). The
# new build is this checkout's release binary (or STREAMCACHE_BIN). Build the old one from an
# earlier commit:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && swift build -c release --product streamcache)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/relay-ab.sh OLD_BINARY [SIZE_MIB] [REPETITIONS]}
size_mib=${2:-256}
reps=${3:-5}
bytes=$((size_mib << 20))
source bench/lib.sh

mkdir -p "$work/origin"
head -c "$bytes" /dev/urandom > "$work/origin/media.bin"
fill_page_cache
origin=$(start_listener origin "$bin" origin "$work/origin")
old_port=$(start_listener serve-old "$old" serve --port 0 --cache-dir "$work/cache-old")
new_port=$(start_listener serve-new "$bin" serve --port 0 --cache-dir "$work/cache-new")

# relay PORT PID NAME : one cold relay of a new hard link; prints "seconds cpu-per-GiB".
relay() {
    ln "$work/origin/media.bin" "$work/origin/$3.bin"
    recycle_pages "$bytes"
    sync
    local before wall cpu
    before=$(cpu_of "$2")
    read -r wall cpu _ < <(measure curl -s -o /dev/null "http://127.0.0.1:$1/http://127.0.0.1:$origin/$3.bin")
    awk -v w="$wall" -v c="$(add "$(add "$(cpu_of "$2")" "-$before")" "$cpu")" -v b="$bytes" \
        'BEGIN { printf "%.3f %.2f\n", w, c * 1073741824 / b }'
}

echo "cold relay of $size_mib MiB, old $old against new $bin, $reps repetitions, $(nproc) cores, $(date -u +%Y-%m-%d)"
old_wall=() new_wall=() old_cpu=() new_cpu=()
for rep in $(seq "$reps"); do
    read -r wall cpu < <(relay "$old_port" "$(cat "$work/serve-old.pid")" "old-$rep")
    old_wall+=("$wall") old_cpu+=("$cpu")
    read -r wall cpu < <(relay "$new_port" "$(cat "$work/serve-new.pid")" "new-$rep")
    new_wall+=("$wall") new_cpu+=("$cpu")
    echo "repetition $rep: old ${old_wall[-1]} s, ${old_cpu[-1]} CPU s/GiB; new ${new_wall[-1]} s, ${new_cpu[-1]} CPU s/GiB"
done
echo "medians: old $(spread "${old_wall[@]}") s, $(median_of "${old_cpu[@]}") CPU s/GiB;" \
    "new $(spread "${new_wall[@]}") s, $(median_of "${new_cpu[@]}") CPU s/GiB"
echo "new against old (above 1: better): speed $(ratio "$(median_of "${new_wall[@]}")" "$(median_of "${old_wall[@]}")")×," \
    "CPU $(ratio "$(median_of "${new_cpu[@]}")" "$(median_of "${old_cpu[@]}")")×"
