# Shared by the benchmark scripts: the release binary, a scratch folder, listeners and timing.
# Source it from a script that has `set -euo pipefail` and has cd'ed to the package root.

# STREAMCACHE_BIN=PATH benchmarks that binary instead (for example an earlier build, to compare).
if [ -n "${STREAMCACHE_BIN:-}" ]; then
    bin=$STREAMCACHE_BIN
else
    swift build -c release --product streamcache >/dev/null
    bin=$(swift build -c release --show-bin-path)/streamcache
fi
work=$(mktemp -d /tmp/streamcache-bench.XXXXXX)
# Servers run in the background from command substitutions, so each leaves its pid in $work/*.pid.
cleanup() {
    for file in "$work"/*.pid; do [ -e "$file" ] && kill "$(cat "$file")" 2>/dev/null || true; done
    rm -rf "$work"
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

# start_nginx ROOT : nginx (one process) serving ROOT on a free port; prints the port.
start_nginx() {
    local root=$1 port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$work/nginx"
    cat > "$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
pid $work/nginx/nginx-own.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    server { listen 127.0.0.1:$port; root $root; }
}
CONF
    /usr/sbin/nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" > "$work/nginx/out" 2>&1 &
    echo $! > "$work/nginx.pid"
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    echo "$port"
}

# measure COMMAND... : runs it with stdout discarded; prints "wall-seconds cpu-seconds peak-rss-KiB".
measure() {
    local out="$work/time.$RANDOM"
    /usr/bin/time -f "%e %U %S %M" -o "$out" "$@" > /dev/null
    awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$out"
}
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
# ratio OURS-SECONDS PEER-SECONDS : our speed relative to the peer's (above 1: faster).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
per_gib() { awk -v c="$1" -v b="$bytes" 'BEGIN { printf "%.2f", c * 1073741824 / b }'; }
row() { printf '%-50s %9s %9s %9s %8s\n' "$@"; }
# cpu_of PID : the CPU seconds (user + system) process PID has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# stats VALUE... : "median min max" of the values.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# spread VALUE... : "median (min–max)", for a table cell.
spread() { stats "$@" | awk '{ printf "%s (%s-%s)", $1, $2, $3 }'; }
