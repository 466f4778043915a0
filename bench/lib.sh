# Shared by the benchmark scripts: the release binary, a scratch folder, listeners and timing.
# Source it from a script that has `set -euo pipefail` and has cd'ed to the package root.

# STREAMCACHE_BIN=PATH benchmarks that binary instead (for example an earlier build, to compare).
if [ -n "${STREAMCACHE_BIN:-}" ]; then
    bin=$STREAMCACHE_BIN
else
    swift build -c release --product streamcache >/dev/null
    bin=$(swift build -c release --show-bin-path)/streamcache
fi
# BENCH_DIR=PATH puts the scratch folder (origin files, caches) there instead of /tmp: /dev/shm
# takes the file system out of a comparison (see below).
work=$(mktemp -d "${BENCH_DIR:-/tmp}/streamcache-bench.XXXXXX")
# ext4 without a journal (as here) skips the inodes of files deleted in the last minutes one by
# one at every file it creates in their group: 0.4-0.7 ms per file created after the last
# benchmark's files were deleted (a minute later and more), against 0.02 ms otherwise,
# which made whichever server created its files there the slower. So the servers' folders go
# where ext4 puts a new top-level folder (`chattr +T`: away from /tmp's group), and the clean-up
# below writes its deletions at once (`sync`). It still happens (a group ext4 picks may hold
# files deleted minutes ago, by a test run for one): `many.sh` shows each server's system time
# beside its CPU time, where it shows.
chattr +T "$work" 2>/dev/null || true
# Servers run in the background from command substitutions, so each leaves its pid in $work/*.pid.
cleanup() {
    for file in "$work"/*.pid; do [ -e "$file" ] && kill "$(cat "$file")" 2>/dev/null || true; done
    rm -rf "$work"
    sync
}
trap cleanup EXIT

# start_listener NAME COMMAND... : runs a server that prints "listening on http://HOST:PORT"
# in the background, waits for that line, and prints the port. Its pid is in $work/NAME.pid.
start_listener() {
    local name=$1
    shift
    "$@" > "$work/$name.out" 2> "$work/$name.err" &
    echo $! > "$work/$name.pid"
    for _ in $(seq 100); do grep -q listening "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/$name.out"
}

# run_nginx NAME HTTP-DIRECTIVES SERVER-DIRECTIVES : nginx (one process) with one server on a free
# port, in $work/NAME; prints the port. Its pid is in $work/NAME.pid.
run_nginx() {
    local name=$1 http=$2 server=$3 port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local dir="$work/$name"
    mkdir -p "$dir"
    cat > "$dir/nginx.conf" <<CONF
daemon off;
master_process off;
pid $dir/nginx-own.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    $http
    server { listen 127.0.0.1:$port; $server }
}
CONF
    /usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" > "$dir/out" 2>&1 &
    echo $! > "$work/$name.pid"
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    echo "$port"
}

# start_nginx ROOT : nginx serving ROOT from disk (sendfile); prints the port.
start_nginx() { run_nginx nginx "sendfile on;" "root $1;"; }

# start_nginx_cache ORIGIN-PORT : nginx as a caching reverse proxy of the origin on ORIGIN-PORT
# (proxy_cache: each body is written to its cache on disk as it is relayed, never synced);
# prints the port.
start_nginx_cache() {
    run_nginx nginx-cache \
        "proxy_cache_path $work/nginx-cache/cache keys_zone=media:10m max_size=20g use_temp_path=off;" \
        "location / { proxy_pass http://127.0.0.1:$1; proxy_cache media; proxy_cache_valid 200 206 1h;
          proxy_http_version 1.1; proxy_set_header Connection \"\"; }"
}

# stop_listener NAME : stops the server started as NAME and waits until it has exited.
stop_listener() {
    kill "$(cat "$work/$1.pid")"
    while kill -0 "$(cat "$work/$1.pid")" 2>/dev/null; do sleep 0.1; done
}

# Many small resources (bench/many.sh, bench/evict.sh): HLS segments of 2 KB.
#
# make_segments COUNT : COUNT files of 2 KB (SEGMENT_BYTES bytes if set) in $work/origin/seg,
# each unlike the others.
make_segments() {
    local bytes=${SEGMENT_BYTES:-2048}
    echo "making $1 files of $bytes bytes"
    python3 - "$work/origin/seg" "$1" "$bytes" <<'PY'
import os, sys
folder, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(folder)
block = os.urandom(size)
for i in range(count):
    with open(f"{folder}/{i}.ts", "wb") as f:
        f.write(i.to_bytes(4, "big") + block[4:])
PY
}
# segment_origin : nginx serving the segments, fresh for a day (as a CDN serves a recorded
# stream's); prints the port.
segment_origin() { run_nginx nginx "sendfile on;" "root $work/origin; expires 1d;"; }
# serve_segments NAME : `serve` on $segment_cache with room for every segment; prints the port.
segment_cache=$work/serve/cache
serve_segments() {
    mkdir -p "$(dirname "$segment_cache")"
    start_listener "$1" "$bin" serve --port 0 --max-size 20G --cache-dir "$segment_cache" --error-log "$work/$1-errors.log"
}
# urls FILE PREFIX FIRST LAST : a curl config fetching segments FIRST..LAST under PREFIX.
urls() {
    seq "$3" "$4" | awk -v p="$2" '{ printf "url = \"%s/seg/%d.ts\"\noutput = \"/dev/null\"\n", p, $1 }' > "$1"
}

# read_times FILE : fetches a curl config's URLs one at a time; prints each one's milliseconds,
# and fails on any answer but 200.
read_times() {
    local lines
    lines=$(curl -s --no-progress-meter -K "$1" -w '%{http_code} %{time_total}\n')
    if grep -qv '^200 ' <<< "$lines"; then
        echo "a request of $1 failed: $(grep -v '^200 ' <<< "$lines" | sort | uniq -c | head -3)" >&2
        exit 1
    fi
    awk '{ printf "%.3f\n", $2 * 1000 }' <<< "$lines"
}
# ms_summary FILE : "median p99 max" of the file's values, one a line.
ms_summary() {
    sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.2f %.2f %.2f\n", v[int((NR + 1) / 2)], v[int(NR * 0.99)], v[NR] }'
}

# fill_page_cache : reads a sparse file as large as the memory available less 3 GiB, so that the
# page cache holds it and the machine's memory is full, as a machine that has run for a while
# has it: a new cache file then takes memory the kernel reclaims from that cache, not free
# memory. On a virtual machine that hands free memory back to its host (a balloon device's free
# page reporting, as here), writing into free memory costs the kernel about eight times as much
# (dd of 512 MiB into a new file: 1.2 s against 0.14 s); with the memory full, six dd runs in a
# row took 0.14-0.21 s. Takes about 30 s here. FILL_PAGE_CACHE=0 turns it off.
fill_page_cache() {
    [ "${FILL_PAGE_CACHE:-1}" = 0 ] && return
    local gib
    gib=$(awk '/MemAvailable/ { print int($2 / 1048576) - 3 }' /proc/meminfo)
    [ "$gib" -gt 0 ] || return 0
    echo "filling the page cache with $gib GiB (FILL_PAGE_CACHE=0 skips it)" >&2
    truncate -s "${gib}G" "$work/page-cache-fill.bin"
    cat "$work/page-cache-fill.bin" > /dev/null
}

# recycle_pages BYTES : writes BYTES to a scratch file and deletes it, so that the next cold case
# writes its cache into memory the machine has just used (see fill_page_cache), for when files
# deleted since (an eviction, a repetition's cache) left memory free. Both peers of a cold case
# get the same, right before their run. Alone it narrows the effect, no more: the kernel
# reports a third of what was freed within 0.3 s. RECYCLE_PAGES=0 turns it off.
recycle_pages() {
    [ "${RECYCLE_PAGES:-1}" = 0 ] && return
    head -c "$1" /dev/zero > "$work/recycle.bin"
    rm -f "$work/recycle.bin"
}

# measure COMMAND... : runs it with stdout discarded; prints "wall-seconds cpu-seconds peak-rss-KiB".
measure() {
    local out="$work/time.$RANDOM"
    /usr/bin/time -f "%e %U %S %M" -o "$out" "$@" > /dev/null
    awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$out"
}
# ratio OURS-SECONDS PEER-SECONDS : our speed relative to the peer's (above 1: faster).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
# cpu_of PID : the CPU seconds (user + system) process PID has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# machine_cpu : the CPU seconds every processor of the machine has been busy so far (user, nice,
# system, interrupts; not idle, I/O wait or steal), whichever process or kernel thread ran.
machine_cpu() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.3f", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat; }
# system_cpu_of PID : the CPU seconds process PID has spent in the kernel so far.
system_cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", $15 / hz }' "/proc/$1/stat"; }
# stats VALUE... : "median min max" of the values.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# spread VALUE... : "median (min–max)", for a table cell.
spread() { stats "$@" | awk '{ printf "%s (%s-%s)", $1, $2, $3 }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
median_of() { stats "$@" | awk '{ print $1 }'; }
# The table of medians: set table_format (a printf format of four columns) first.
table_row() { printf "$table_format" "$@"; }
# time_row LABEL PEER-NAME "PEER SECONDS..." "OUR SECONDS..." : a row of seconds (faster is
# better), with the ratio of the medians.
time_row() {
    local peer=($3) ours=($4)
    table_row "$1" "$2 $(spread "${peer[@]}") s" "$(spread "${ours[@]}") s" \
        "$(ratio "$(median_of "${ours[@]}")" "$(median_of "${peer[@]}")")"
}

# Two builds side by side (bench/cold-ab.sh, bench/touch-ab.sh), on segments of $origin.
#
# ab_round BUILD BINARY CACHE_DIR COUNT : one side of a round: BINARY's `serve` on CACHE_DIR, and
# 8 clients (curl --parallel) fetching the next COUNT segments (from $ab_next on); fails on any
# answer but 200. Appends "BUILD REQ/S USER KERNEL" (CPU seconds per request) to $work/results.
ab_next=0
ab_round() {
    local build=$1 count=$4 port pid started ended codes cpu kernel
    port=$(start_listener "$build-ab" "$2" serve --port 0 --max-size 20G --cache-dir "$3")
    pid=$(cat "$work/$build-ab.pid")
    urls "$work/list" "http://127.0.0.1:$port/http://127.0.0.1:$origin" "$ab_next" $((ab_next + count - 1))
    ab_next=$((ab_next + count))
    cpu=$(cpu_of "$pid") kernel=$(system_cpu_of "$pid")
    started=$(date +%s.%N)
    codes=$(curl -s --no-progress-meter -Z --parallel-max 8 -K "$work/list" -w '%{http_code}\n')
    ended=$(date +%s.%N)
    if grep -qv '^200$' <<< "$codes"; then
        echo "a request through the $build build failed: $(grep -v '^200$' <<< "$codes" | sort | uniq -c)" >&2
        exit 1
    fi
    awk -v b="$build" -v n="$count" -v a="$started" -v e="$ended" \
        -v cpu="$(add "$(cpu_of "$pid")" "-$cpu")" -v kernel="$(add "$(system_cpu_of "$pid")" "-$kernel")" \
        'BEGIN { printf "%s %.0f %.9f %.9f\n", b, n / (e - a), (cpu - kernel) / n, kernel / n }' >> "$work/results"
    stop_listener "$build-ab"
}
# ab_report ROUND UNIT SCALE WHAT : the last side's line, CPU per WHAT in UNIT (seconds times SCALE).
ab_report() {
    tail -n 1 "$work/results" | awk -v r="$1" -v unit="$2" -v s="$3" -v what="$4" '{
        printf "round %s %s: %s req/s, CPU %s per %s %.3f (user %.3f, kernel %.3f)\n", r, $1, $2, unit, what, ($3 + $4) * s, $3 * s, $4 * s
    }'
}
# ab_summary UNIT SCALE WHAT : the medians of both builds and their ratios (above 1: new is faster).
ab_summary() {
    awk -v unit="$1" -v s="$2" -v what="$3" '
        { rate[$1] = rate[$1] " " $2; cpu[$1] = cpu[$1] " " ($3 + $4) * s }
        function median(list,    v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        END {
            ro = median(rate["old"]); rn = median(rate["new"]); co = median(cpu["old"]); cn = median(cpu["new"])
            printf "median req/s:               old %.0f, new %.0f, ratio %.2f\n", ro, rn, rn / ro
            printf "median CPU %s per %s: old %.3f, new %.3f, ratio %.2f\n", unit, what, co, cn, co / cn
        }' "$work/results"
}

# ytdlp_venv : yt-dlp (with requests, as in its release binaries) in /tmp/streamcache-bench-venv,
# installed from PyPI on first use; sets $venv and $ytdlp.
ytdlp_venv() {
    venv=/tmp/streamcache-bench-venv
    if [ ! -x "$venv/bin/yt-dlp" ]; then
        if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
            [ "$(id -u)" = 0 ] || { echo "python3 has no venv: apt-get install python3-venv" >&2; exit 1; }
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv > /dev/null
        fi
        echo "installing yt-dlp into $venv ..." >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check yt-dlp requests
    fi
    ytdlp=$venv/bin/yt-dlp
}

# origin_stats PORT : prints the body bytes and requests `streamcache origin` on PORT has sent so far.
origin_stats() {
    curl -sf "http://127.0.0.1:$1/_origin/stats" \
        | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["bodyBytes"], len(s["requests"]))'
}

# disk_sectors : the 512-byte sectors written so far to the block device that holds $work;
# empty where that device has no statistics (tmpfs, overlay).
disk_sectors() {
    local device
    device=$(basename "$(df --output=source "$work" | tail -1)")
    [ -r "/sys/class/block/$device/stat" ] && awk '{ print $7 }' "/sys/class/block/$device/stat"
}

# download_case ORIGIN-PORT NAME DIR COMMAND... : runs COMMAND (writing into the fresh folder DIR)
# under `measure`, its stderr in DIR.err (shown if it fails); appends "NAME|wall|cpu|rss|written|
# origin-bytes|requests|status" to $work/results, and "NAME|bytes" to $work/disk-written: what
# reached the disk from a `sync` before the command to one after it (empty where unknown).
download_case() {
    local port=$1 name=$2 dir=$3 result status=ok b0 r0 b1 r1 wall cpu rss d0 d1
    shift 3
    rm -rf "$dir"
    mkdir -p "$dir"
    read -r b0 r0 < <(origin_stats "$port")
    echo "  running $name ..." >&2
    sync
    d0=$(disk_sectors || true)
    result=$(measure "$@" 2> "$dir.err")
    sync
    d1=$(disk_sectors || true)
    echo "$name|$([ -n "$d0" ] && [ -n "$d1" ] && echo $(((d1 - d0) * 512)))" >> "$work/disk-written"
    # GNU time writes "Command exited with non-zero status N" before the figures on failure.
    if [ "$(wc -l <<< "$result")" != 1 ]; then
        status=failed
        echo "  $name failed; the end of its stderr:" >&2
        tail -5 "$dir.err" | sed 's/^/    /' >&2
    fi
    read -r wall cpu rss < <(tail -1 <<< "$result")
    read -r b1 r1 < <(origin_stats "$port")
    echo "$name|$wall|$cpu|$rss|$(du -sb "$dir" | cut -f1)|$((b1 - b0))|$((r1 - r0))|$status" >> "$work/results"
}
