#!/usr/bin/env python3
"""A live HLS origin for StreamCache's recording tests, written apart from StreamCache's own code.

Usage: live_origin.py DIR [--window N] [--event] [--start N] [--period SECONDS] [--missing NAME]...
       [--trickle-after SECONDS] [--repeat-uris N]

Every VOD media playlist DIR/NAME.m3u8 (one with #EXTINF lines) is served at /NAME.m3u8 as a
live playlist that advances with the wall clock: START segments are listed at first (default:
the window), one more every PERIOD seconds (default: the first segment's duration). A sliding
window lists the last N segments (default 3) with EXT-X-MEDIA-SEQUENCE advancing; --event lists
every segment from the first under EXT-X-PLAYLIST-TYPE:EVENT. Once every segment is listed the
playlist gets EXT-X-ENDLIST (the stream turns VOD). Multivariant playlists and every other file
are served as they are, with Range; each --missing NAME gets 404 (a segment listed before it is
there, or lost at the origin). With --trickle-after, every playlist asked for that many
seconds after the start comes one byte every 5 s. With --repeat-uris N, segment k is listed as
rJ.ts (J = k mod N), a URI that names a newer segment each time it comes round again, answered
with Cache-Control: max-age=3600 and no validator, as a CDN that recycles segment names
does. GET /_stats answers {"path?query": requests}; a request's
query is kept in its path there. GET /_log answers [[seconds since the start, path], …] and
GET /_now the seconds since the start: segment k (past the first START) is listed from
(k - START + 1) × PERIOD seconds on. Prints "listening on http://127.0.0.1:PORT" first.
"""
import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
STARTED = time.monotonic()
COUNTS = {}
LOG = []
# With --repeat-uris: the segment each recycled name (r0.ts…) stands for now.
RECYCLED = {}
LOCK = threading.Lock()


def parse_vod(text):
    """Header lines, and segments as (lines before the URI, URI, duration)."""
    header, segments, pending = [], [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line in ("#EXT-X-ENDLIST",) or line.startswith(("#EXT-X-PLAYLIST-TYPE", "#EXT-X-MEDIA-SEQUENCE")):
            continue
        if line.startswith("#EXTINF") or segments or pending:
            if line.startswith("#"):
                pending.append(line)
            else:
                duration = float(re.match(r"#EXTINF:([0-9.]+)", next(l for l in pending if l.startswith("#EXTINF"))).group(1))
                segments.append((pending, line, duration))
                pending = []
        else:
            header.append(line)
    return header, segments


def live_view(text):
    header, segments = parse_vod(text)
    if not segments:
        return text
    period = ARGS.period or segments[0][2]
    start = ARGS.start if ARGS.start is not None else ARGS.window
    listed = min(len(segments), start + int((time.monotonic() - STARTED) / period))
    first = 0 if ARGS.event else max(0, listed - ARGS.window)
    lines = [l for l in header if not l.startswith("#EXT-X-MAP")]
    maps = [l for l in header if l.startswith("#EXT-X-MAP")]
    lines.append("#EXT-X-MEDIA-SEQUENCE:%d" % first)
    if ARGS.event:
        lines.append("#EXT-X-PLAYLIST-TYPE:EVENT")
    lines += maps
    for index, (before, uri, _) in enumerate(segments[first:listed], start=first):
        lines += before
        if ARGS.repeat_uris:
            with LOCK:
                RECYCLED["r%d.ts" % (index % ARGS.repeat_uris)] = uri
            uri = "r%d.ts" % (index % ARGS.repeat_uris)
        lines.append(uri)
    if listed == len(segments):
        lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type, fields=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def trickle(self, body):
        """The playlist one byte every 5 s: never idle long enough for a read to time out."""
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.apple.mpegurl")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for index in range(len(body)):
                self.wfile.write(body[index:index + 1])
                self.wfile.flush()
                time.sleep(5)
        except OSError:
            self.close_connection = True

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path in ("/_stats", "/_log", "/_now"):
            with LOCK:
                answers = {"/_stats": COUNTS, "/_log": LOG, "/_now": time.monotonic() - STARTED}
                body = json.dumps(answers[self.path]).encode()
            return self.answer(200, body, "application/json")
        with LOCK:
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
            LOG.append([time.monotonic() - STARTED, self.path])
        name = self.path.split("?")[0].lstrip("/")
        fields = []
        with LOCK:
            if name in RECYCLED:
                name, fields = RECYCLED[name], [("Cache-Control", "max-age=3600")]
        path = os.path.realpath(os.path.join(ARGS.dir, name))
        if name in ARGS.missing or not path.startswith(os.path.realpath(ARGS.dir) + os.sep) or not os.path.isfile(path):
            return self.answer(404, b"not found\n", "text/plain")
        with open(path, "rb") as file:
            body = file.read()
        if name.endswith(".m3u8"):
            text = body.decode()
            if "#EXTINF" in text:
                text = live_view(text)
            if ARGS.trickle_after is not None and time.monotonic() - STARTED > ARGS.trickle_after:
                return self.trickle(text.encode())
            return self.answer(200, text.encode(), "application/vnd.apple.mpegurl")
        content_type = "video/mp2t" if name.endswith(".ts") else "application/octet-stream"
        match = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range") or "")
        if match and int(match.group(1)) < len(body):
            first = int(match.group(1))
            last = min(int(match.group(2)) if match.group(2) else len(body) - 1, len(body) - 1)
            self.send_response(206)
            self.send_header("Content-Type", content_type)
            for field, value in fields:
                self.send_header(field, value)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(body)))
            self.send_header("Content-Length", str(last - first + 1))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body[first:last + 1])
            return
        self.answer(200, body, content_type, fields)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--window", type=int, default=3)
    parser.add_argument("--event", action="store_true")
    parser.add_argument("--start", type=int)
    parser.add_argument("--period", type=float)
    parser.add_argument("--missing", action="append", default=[])
    parser.add_argument("--trickle-after", type=float)
    parser.add_argument("--repeat-uris", type=int)
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A client that hangs up mid-answer is no error of the origin's.
    server.handle_error = lambda request, address: None
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
