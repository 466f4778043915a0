#!/usr/bin/env python3
"""A front for the public HTTP caching tests (http-tests/cache-tests, run from a copy outside the
repository): their client sends a test's setup (`PUT /config/ID`) and asks for its record
(`GET /state/ID`) at the same base URL as the test's requests, which only a cache that relays
every method passes to the origin. This front sends those two to the origin directly and every
other request, as it came, to the cache under test; the same front stands before every cache
compared, so each is asked the same.

Usage: cache_tests_router.py PORT ORIGIN_BASE CACHE_BASE
  ORIGIN_BASE  http://127.0.0.1:8000
  CACHE_BASE   http://127.0.0.1:8002, or a prefix (http://127.0.0.1:P/http://127.0.0.1:8000)
"""
import http.client
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, ORIGIN, CACHE = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3].rstrip("/")
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


class Front(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def relay(self):
        direct = self.path.startswith("/config/") or self.path.startswith("/state/")
        base = urllib.parse.urlsplit(ORIGIN if direct else CACHE)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        connection = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
        connection.putrequest(self.command, base.path + self.path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", base.netloc)
        for name, value in self.headers.items():
            if name.lower() not in HOP and name.lower() != "host":
                connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        data = response.read()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP and name.lower() != "content-length":
                self.send_header(name, value)
        if self.command != "HEAD" and response.status not in (204, 304):
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        connection.close()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = relay


# The suite invalidates with `M-SEARCH` too, which no attribute name can spell.
setattr(Front, "do_M-SEARCH", Front.relay)


ThreadingHTTPServer(("127.0.0.1", PORT), Front).serve_forever()
