#!/usr/bin/env bash
# RFC 9111 cases a private cache must pass, written as the public HTTP caching tests write theirs
# (bench/conformance.py), against `serve` and nginx `proxy_cache` side by side in front of one
# origin; prints each case's verdict and how many each passes.
#
#   bench/conformance.sh            (CACHE_TESTS=DIR: then the public suite too, bench/cache-tests.sh)
#
# nginx caches as the origin's fields say (no proxy_cache_valid), revalidates with conditional
# requests (proxy_cache_revalidate) and forwards the client's fields, as it does by default.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

origin=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx=$(run_nginx nginx-cache \
    "proxy_cache_path $work/nginx-cache/cache keys_zone=rfc:10m use_temp_path=off;" \
    "location / { proxy_pass http://127.0.0.1:$origin; proxy_cache rfc; proxy_cache_revalidate on;
      proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
proxy=$(start_listener serve "$bin" serve --port 0 --cache-dir "$work/serve-cache")
python3 bench/conformance.py --origin-port "$origin" \
    --serve-base "http://127.0.0.1:$proxy/http://127.0.0.1:$origin" --nginx-base "http://127.0.0.1:$nginx"

# The public suite itself, side by side with the caches Debian has, when a copy of it is given.
if [ -n "${CACHE_TESTS:-}" ]; then
    STREAMCACHE_BIN=$bin bench/cache-tests.sh
fi
