#!/usr/bin/env bash
# The public HTTP caching tests (http-tests/cache-tests) against `serve --shared`, a private
# `serve`, nginx `proxy_cache`, Squid, Varnish and Apache httpd (mod_cache_disk), in one run, each
# behind the same front (bench/cache_tests_router.py) before the suite's own origin. Prints how
# many of the suite's required tests each passes, counted as the suite's published results are
# (bench/cache_tests_summary.mjs), and the ones StreamCache misses.
#
#   CACHE_TESTS=/path/to/a/copy/of/cache-tests bench/cache-tests.sh
#
# The suite is not part of this repository: give a copy of it (its client and origin need Node.js
# only). Debian's nginx-light, squid, varnish and apache2 are the peers; one that is not installed
# is left out. `interim-not-cached` needs the suite's npm dependencies and fails alike for all.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${CACHE_TESTS:?set CACHE_TESTS to a copy of http-tests/cache-tests}
suite=$(cd "$suite" && pwd)
. bench/lib.sh
chmod 755 "$work"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

origin=$(free_port)
(cd "$suite" && npm_config_port=$origin npm_config_protocol=http npm_config_pidfile="$work/suite.pid" \
    exec node test-engine/server/server.mjs) > "$work/origin.out" 2>&1 &
echo $! > "$work/origin.pid"
wait_port "$origin"

declare -A bases
shared=$(start_listener serve-shared "$bin" serve --shared --port 0 --cache-dir "$work/serve-shared")
bases["streamcache serve --shared"]="http://127.0.0.1:$shared/http://127.0.0.1:$origin"
private=$(start_listener serve-private "$bin" serve --port 0 --cache-dir "$work/serve-private")
bases["streamcache serve"]="http://127.0.0.1:$private/http://127.0.0.1:$origin"

if command -v nginx >/dev/null; then
    port=$(free_port)
    mkdir -p "$work/nginx/cache" "$work/nginx/tmp"
    cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/tmp;
  proxy_temp_path $work/nginx/tmp;
  proxy_cache_path $work/nginx/cache levels=1:2 keys_zone=rfc:8m max_size=1000m inactive=600m;
  server {
    listen 127.0.0.1:$port;
    location / { proxy_pass http://127.0.0.1:$origin; proxy_cache rfc; proxy_cache_revalidate on; proxy_http_version 1.1; }
  }
}
CONF
    nginx -c "$work/nginx/nginx.conf" && wait_port "$port" && bases["nginx proxy_cache"]="http://127.0.0.1:$port"
fi

if command -v squid >/dev/null; then
    port=$(free_port)
    mkdir -p "$work/squid" && chmod 777 "$work/squid"
    cat > "$work/squid/squid.conf" <<CONF
http_port 127.0.0.1:$port accel defaultsite=127.0.0.1 no-vhost
cache_peer 127.0.0.1 parent $origin 0 no-query no-digest originserver default name=origin
cache_peer_access origin allow all
http_access allow all
pid_filename $work/squid/squid.pid
cache_log $work/squid/cache.log
access_log none
shutdown_lifetime 1 second
CONF
    squid -N -f "$work/squid/squid.conf" > "$work/squid/out" 2>&1 &
    echo $! > "$work/squid.pid"
    wait_port "$port" && bases["Squid"]="http://127.0.0.1:$port"
fi

if command -v varnishd >/dev/null; then
    port=$(free_port)
    varnishd -F -a "127.0.0.1:$port" -b "127.0.0.1:$origin" -n "$work/varnish" -s malloc,64m \
        > "$work/varnish.out" 2>&1 &
    echo $! > "$work/varnish.pid"
    wait_port "$port" && bases["Varnish"]="http://127.0.0.1:$port"
fi

if command -v apache2 >/dev/null; then
    port=$(free_port)
    mkdir -p "$work/apache/cache" && chown -R www-data "$work/apache/cache" 2>/dev/null || true
    modules=/usr/lib/apache2/modules
    cat > "$work/apache/apache.conf" <<CONF
ServerRoot /etc/apache2
PidFile $work/apache/httpd.pid
ErrorLog $work/apache/error.log
Listen 127.0.0.1:$port
User www-data
Group www-data
ServerName 127.0.0.1
LoadModule mpm_event_module $modules/mod_mpm_event.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule proxy_module $modules/mod_proxy.so
LoadModule proxy_http_module $modules/mod_proxy_http.so
LoadModule cache_module $modules/mod_cache.so
LoadModule cache_disk_module $modules/mod_cache_disk.so
ProxyPass "/" "http://127.0.0.1:$origin/"
CacheEnable disk /
CacheRoot $work/apache/cache
CacheDirLevels 5
CacheDirLength 3
CacheDefaultExpire 0
CacheIgnoreNoLastMod On
CacheStoreExpired On
CONF
    apache2 -f "$work/apache/apache.conf" -k start && wait_port "$port" && bases["Apache httpd"]="http://127.0.0.1:$port"
fi

printf '%-30s %s\n' cache "required tests passed"
for name in "streamcache serve --shared" "streamcache serve" "nginx proxy_cache" "Squid" "Varnish" "Apache httpd"; do
    base=${bases[$name]:-}
    [ -n "$base" ] || continue
    front=$(free_port)
    python3 bench/cache_tests_router.py "$front" "http://127.0.0.1:$origin" "$base" > "$work/front-$front.log" 2>&1 &
    echo $! > "$work/front-$front.pid"
    wait_port "$front"
    (cd "$suite" && npm_config_base="http://127.0.0.1:$front" npm_config_id= npm_package_config_id= \
        node --no-warnings test-engine/cli.mjs) > "$work/results-$front.json" 2> "$work/cli-$front.err"
    summary=$(node bench/cache_tests_summary.mjs "$suite" "$work/results-$front.json")
    [ -n "${KEEP_RESULTS:-}" ] && cp "$work/results-$front.json" "$KEEP_RESULTS/$(echo "$name" | tr ' /' '__').json"
    printf '%-30s %s\n' "$name" "$(echo "$summary" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["passed"], "of", d["required"])')"
    case $name in streamcache*) echo "$summary" | python3 -c 'import json,sys; print("  missed:", " ".join(json.load(sys.stdin)["missed"]))' ;; esac
done
[ -e "$work/apache/httpd.pid" ] && apache2 -f "$work/apache/apache.conf" -k stop 2>/dev/null || true
[ -e "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
