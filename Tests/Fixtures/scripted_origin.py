#!/usr/bin/env python3
"""A scripted HTTP/1.1 origin for StreamCache's caching-rule tests.

Usage: scripted_origin.py SCRIPT.json

SCRIPT maps a path to the answer it gets: {"/a": {"status": 200, "headers": [["Cache-Control",
"max-age=60"]], "size": 20000}}; "text" gives the body as it is instead. A 200 honours Range (206 with Content-Range), If-None-Match
(against its ETag) and If-Modified-Since (against its Last-Modified) with a 304 that carries the
scripted fields; with "notModifiedToIfRange", a request with If-Range gets a 304, with
"notModifiedToRange" every request with Range does (broken origins); with "transferCoding": "gzip, chunked", the body goes gzip-compressed in chunks under that
Transfer-Encoding; with "endless": true, a chunked body that never ends (at "rate" bytes a second
if given; GET /_stats counts its bytes sent so far in "endlessBytes"); with "etagPerResponse", a new
ETag on every response; with "bodyPerResponse" as well, other bytes under it (byte i = (i + n) % 251
for the n-th response); with "hold": SECONDS, the answer waits that long (a held blocking
reload); with "interim": [[NAME, VALUE]…], a 200
goes after a 103 Early Hints with those fields; with "ignoresIfRange", a Range is answered whatever If-Range says (each
range a 206 under the response's own tag). Any other method (POST, PUT, DELETE, PATCH, M-SEARCH) gets
"unsafeStatus" (200) with "unsafeHeaders" and the body "got N bytes of TYPE", and is recorded
with "method" and "sentBytes" (what its body held). "shift": N makes byte i = (i + N) % 251 and "flip": [OFFSET…]
inverts those bytes, so a test changes a file's bytes and not its length; "shiftByQuery": NAME takes
the shift from that query parameter's value (content per token) and "sizes": {VALUE: SIZE} the
size, "etagByQuery": NAME an ETag from it. A path with a query not in SCRIPT is looked up without its query. With "ignoresRange", every GET gets the whole body (as `python3 -m http.server` answers). A range request whose If-Range names no current validator gets the whole body. The body is byte i = i % 251. GET /_stats lists every request (path, status,
range, conditional, body bytes, the request's fields). SCRIPT is read again for every request, so a test can change
what the origin answers by rewriting it. Prints "listening on http://127.0.0.1:PORT" first.
"""
import functools
import gzip
import json
import urllib.parse
import sys
import threading
import time
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer



def script():
    with open(sys.argv[1]) as file:
        return json.load(file)

REQUESTS = []
LOCK = threading.Lock()
ENDLESS_BYTES = [0]
COUNTER = [0]


@functools.lru_cache(maxsize=8)
def body_of(size, shift=0, flip=()):
    body = bytearray((i + shift) % 251 for i in range(size))
    for offset in flip:
        if 0 <= offset < size:
            body[offset] ^= 0xFF
    return bytes(body)


def query_value(path, name):
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).get(name)
    return values[0] if values else ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status, sent):
        with LOCK:
            REQUESTS.append({
                "path": self.path,
                "method": self.command,
                "sentBytes": getattr(self, "sent_bytes", 0),
                "status": status,
                "range": self.headers.get("Range"),
                "conditional": bool(self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since")),
                "bodyBytes": sent,
                "fields": [[name, value] for name, value in self.headers.items()],
            })

    def answer(self, status, fields, body, interim=()):
        # Recorded before the answer goes out: a client that has it finds it in /_stats.
        sends = self.command != "HEAD" and status != 304
        self.record(status, len(body) if sends else 0)
        if interim:
            self.send_response_only(103)
            for name, value in interim:
                self.send_header(name, value)
            self.end_headers()
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if sends:
            self.wfile.write(body)

    def send_coded(self, coding, fields, body):
        """The whole body, gzip-compressed, in 4 KB chunks under `Transfer-Encoding: coding`."""
        self.send_response(200)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", coding)
        self.end_headers()
        coded = gzip.compress(body)
        if self.command != "HEAD":
            for start in range(0, len(coded), 4096):
                piece = coded[start:start + 4096]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        self.record(200, len(coded))

    def send_endless(self, fields, rate=None):
        """A chunked body of 64 KB chunks until the client goes away, at `rate` bytes a second."""
        self.send_response(200)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.record(200, 0)
        if self.command == "HEAD":
            return
        piece = body_of(65536)
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                with LOCK:
                    ENDLESS_BYTES[0] += len(piece)
                if rate:
                    time.sleep(len(piece) / rate)
        except OSError:
            self.close_connection = True

    def not_modified(self, fields):
        tag = dict((k.lower(), v) for k, v in fields).get("etag")
        modified = dict((k.lower(), v) for k, v in fields).get("last-modified")
        inm = self.headers.get("If-None-Match")
        if inm is not None:
            return tag is not None and (inm.strip() == "*" or tag in [t.strip() for t in inm.split(",")])
        ims = self.headers.get("If-Modified-Since")
        if ims and modified:
            try:
                return parsedate_to_datetime(modified) <= parsedate_to_datetime(ims)
            except (TypeError, ValueError):
                return False
        return False

    def do_GET(self):
        if self.path == "/_stats":
            with LOCK:
                data = json.dumps({"requests": REQUESTS, "endlessBytes": ENDLESS_BYTES[0]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        entries = script()
        entry = entries.get(self.path, entries.get(urllib.parse.urlsplit(self.path).path))
        if entry is None:
            self.answer(404, [("Content-Type", "text/plain")], b"no such path\n")
            return
        if entry.get("hold"):
            time.sleep(entry["hold"])  # a low-latency origin holding a blocking reload
        fields = [tuple(f) for f in entry.get("headers", [])]
        shift = entry.get("shift", 0)
        if entry.get("shiftByQuery"):
            shift = sum(query_value(self.path, entry["shiftByQuery"]).encode()) % 251
        if entry.get("etagByQuery"):
            fields.append(("ETag", '"t-%s"' % query_value(self.path, entry["etagByQuery"])))
        if entry.get("etagPerResponse"):
            with LOCK:
                COUNTER[0] += 1
                fields.append(("ETag", '"r%d"' % COUNTER[0]))
                if entry.get("bodyPerResponse"):
                    shift = COUNTER[0]
        status = entry.get("status", 200)
        if status != 200:
            self.answer(status, fields, entry.get("body", "").encode())
            return
        broken = (entry.get("notModifiedToIfRange") and self.headers.get("If-Range")) or (
            entry.get("notModifiedToRange") and self.headers.get("Range"))
        if broken:
            # A broken origin: 304 to a range request carrying If-Range.
            self.answer(304, fields, b"")
            return
        if self.not_modified(fields):
            self.answer(304, fields, b"")
            return
        size = entry.get("size", 20000)
        if entry.get("shiftByQuery") and entry.get("sizes"):
            size = entry["sizes"].get(query_value(self.path, entry["shiftByQuery"]), size)
        body = entry["text"].encode() if "text" in entry else body_of(size, shift, tuple(entry.get("flip", [])))
        if entry.get("endless"):
            self.send_endless(fields, entry.get("rate"))
            return
        if entry.get("transferCoding"):
            self.send_coded(entry["transferCoding"], fields, body)
            return
        spec = None if entry.get("ignoresRange") else self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if if_range is not None and not entry.get("ignoresIfRange"):
            known = dict((k.lower(), v) for k, v in fields)
            if if_range.strip() not in (known.get("etag"), known.get("last-modified")):
                spec = None  # RFC 9110 13.1.5: the validator does not match, the whole body goes
        if spec and spec.startswith("bytes=") and "," not in spec:
            first, _, last = spec[6:].partition("-")
            if first:
                start = int(first)
                end = min(int(last), len(body) - 1) if last else len(body) - 1
                if start >= len(body):
                    self.answer(416, fields + [("Content-Range", "bytes */%d" % len(body))], b"")
                    return
                fields = fields + [("Content-Range", "bytes %d-%d/%d" % (start, end, len(body)))]
                self.answer(206, fields, body[start:end + 1])
                return
        self.answer(200, fields, body, [tuple(f) for f in entry.get("interim", [])])

    do_HEAD = do_GET

    def do_unsafe(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.sent_bytes = len(self.rfile.read(length)) if length else 0
        entries = script()
        entry = entries.get(self.path, entries.get(urllib.parse.urlsplit(self.path).path)) or {}
        kind = self.headers.get("Content-Type") or "nothing"
        body = ("got %d bytes of %s" % (self.sent_bytes, kind)).encode()
        fields = [tuple(f) for f in entry.get("unsafeHeaders", [])]
        self.answer(entry.get("unsafeStatus", 200), fields, body)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_unsafe


setattr(Handler, "do_M-SEARCH", Handler.do_unsafe)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
server.serve_forever()
