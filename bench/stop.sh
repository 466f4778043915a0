#!/usr/bin/env bash
# How long `streamcache serve` takes to stop on SIGINT (Ctrl-C), next to nginx's fast shutdown
# (SIGINT) run the same way, and prints the medians with their range.
#
#   bench/stop.sh [REPETITIONS]   (default 5; needs curl and nginx-light)
#
# Idle: a server that has answered nothing. Mid-stream: a player (curl) in the middle of a file
# the origin sends at 200 kB/s, relayed by serve and by nginx (proxy_cache, the same origin).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
source bench/lib.sh

mkdir -p "$work/origin"
head -c $((8 << 20)) /dev/urandom > "$work/origin/slow.bin"
origin=$(start_listener origin "$bin" origin "$work/origin" --rate 200K)

# ended PID : whether the process has exited (gone, or a zombie nobody has reaped yet).
ended() { ! grep -q '^[0-9]* (.*) [^Z]' "/proc/$1/stat" 2>/dev/null; }

# stop_ms PID : sends SIGINT and prints the milliseconds until the process has exited.
stop_ms() {
    local pid=$1 start end
    start=$(date +%s%N)
    kill -INT "$pid"
    until ended "$pid"; do sleep 0.001; done
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

# player PORT PATH : curl reading PATH through the server on PORT, in the background.
player() { curl -s -o /dev/null "http://127.0.0.1:$1/$2" & echo $! > "$work/player.pid"; }

# ms FILE : the median and range of the milliseconds in FILE.
ms() { echo "$(spread $(cat "$1")) ms"; }

: > "$work/serve-idle"; : > "$work/serve-busy"; : > "$work/nginx-idle"; : > "$work/nginx-busy"
for rep in $(seq "$reps"); do
    port=$(start_listener "serve-$rep" "$bin" serve --port 0 --cache-dir "$work/cache-$rep")
    sleep 0.5
    stop_ms "$(cat "$work/serve-$rep.pid")" >> "$work/serve-idle"

    port=$(start_listener "serve-busy-$rep" "$bin" serve --port 0 --cache-dir "$work/cache-busy-$rep")
    player "$port" "http://127.0.0.1:$origin/slow.bin?serve-$rep"
    sleep 1
    stop_ms "$(cat "$work/serve-busy-$rep.pid")" >> "$work/serve-busy"
    wait "$(cat "$work/player.pid")" 2>/dev/null || true

    port=$(start_nginx_cache "$origin")
    sleep 0.5
    stop_ms "$(cat "$work/nginx-cache.pid")" >> "$work/nginx-idle"
    port=$(start_nginx_cache "$origin")
    player "$port" "slow.bin?nginx-$rep"
    sleep 1
    stop_ms "$(cat "$work/nginx-cache.pid")" >> "$work/nginx-busy"
    wait "$(cat "$work/player.pid")" 2>/dev/null || true
done

printf '%-32s %-22s %s\n' "stop on SIGINT (median, range)" "streamcache serve" "nginx proxy_cache"
printf '%-32s %-22s %s\n' "idle" "$(ms "$work/serve-idle")" "$(ms "$work/nginx-idle")"
printf '%-32s %-22s %s\n' "a player mid-stream (200 kB/s)" "$(ms "$work/serve-busy")" "$(ms "$work/nginx-busy")"
