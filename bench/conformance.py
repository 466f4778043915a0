#!/usr/bin/env python3
"""RFC 9111 cases side by side: StreamCache's `serve` and nginx `proxy_cache` in front of one origin.

Usage: conformance.py --origin-port PORT --serve-base URL --nginx-base URL

Each case is written as the public HTTP caching tests (cache-tests.fyi) write theirs: requests one
after another to a path of its own, what the origin answers the n-th request that reaches it, and
what the client must see (`cached`: the origin saw no request for it; `not_cached`: it did;
`validated`: it saw a conditional request; fields the answer must carry or lack; fields the origin
must have received). The origin here is this script's own; each base URL gets the case's path
appended (`serve`: `http://127.0.0.1:PORT/http://127.0.0.1:ORIGIN-PORT`; nginx: a proxy_pass to
the origin). `bench/conformance.sh` starts both. Prints each case's verdict for both and the counts. Only cases a private cache must
pass are here: none about shared caches (`s-maxage`, `private`), none about methods other than
GET, which `serve` does not relay.
"""
import argparse
import json
import threading
import time
import urllib.request
import uuid
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASES = []


def case(name, requests):
    CASES.append({"name": name, "requests": requests})


def fresh(extra=()):
    return [["Cache-Control", "max-age=3600"], ["Date", 0], *extra]


# Response directives (cc-response).
case("no-store is not stored", [{"response": [["Cache-Control", "no-store"]]}, {"expect": "not_cached"}])
case("nO-StOrE is not stored", [{"response": [["Cache-Control", "No-StOrE"]]}, {"expect": "not_cached"}])
case("no-store with max-age and Expires", [
    {"response": [["Cache-Control", "max-age=10000, no-store"], ["Expires", 10000], ["Date", 0]]},
    {"expect": "not_cached"}])
case("no-cache is not reused unchecked", [
    {"response": [["Cache-Control", "max-age=10000, no-cache"], ["Expires", 10000], ["Date", 0]]},
    {"expect": "not_cached"}])
case("No-CaChE is not reused unchecked", [
    {"response": [["Cache-Control", "max-age=10000, No-CaChE"], ["Expires", 10000], ["Date", 0]]},
    {"expect": "not_cached"}])
case("stale must-revalidate is revalidated", [
    {"response": [["Cache-Control", "max-age=2, must-revalidate"], ["ETag", '"abcd"']]},
    {"expect": "cached", "pause_after": 3},
    {"expect": "validated"}])
# Freshness (cc-freshness, expires-freshness).
case("max-age=0 is not reused unchecked", [
    {"response": [["Cache-Control", "max-age=0"], ["Date", 0]]}, {"expect": "not_cached"}])
case("an Expires in the past is not reused unchecked", [
    {"response": [["Expires", -1000], ["Date", 0]]}, {"expect": "not_cached"}])
case("an invalid Expires is stale", [
    {"response": [["Expires", "0"], ["Date", 0]]}, {"expect": "not_cached"}])
case("max-age wins over Expires", [
    {"response": [["Cache-Control", "max-age=0"], ["Expires", 10000], ["Date", 0]]}, {"expect": "not_cached"}])
# Vary (vary).
case("Vary: a request without the field", [
    {"request": [["Foo", "1"]], "response": fresh([["Vary", "Foo"]])}, {"expect": "not_cached"}])
case("Vary on two fields: another value", [
    {"request": [["Foo", "1"], ["Bar", "abc"]], "response": fresh([["Vary", "Foo, Bar"]])},
    {"request": [["Foo", "2"], ["Bar", "abc"]], "expect": "not_cached"}])
case("Vary on two fields: one left out", [
    {"request": [["Foo", "1"]], "response": fresh([["Vary", "Foo, Bar"]])}, {"expect": "not_cached"}])
case("Vary on three fields: another value", [
    {"request": [["Foo", "1"], ["Bar", "abc"], ["Baz", "789"]], "response": fresh([["Vary", "Foo, Bar, Baz"]])},
    {"request": [["Foo", "2"], ["Bar", "abc"], ["Baz", "789"]], "expect": "not_cached"}])
case("Vary on three fields: whatever the order", [
    {"request": [["Foo", "1"], ["Bar", "abc4"], ["Baz", "789"]], "response": fresh([["Vary", "Foo, Bar, Baz"]])},
    {"request": [["Foo", "1"], ["Bar", "abc"], ["Baz", "789"]], "expect": "not_cached"}])
case("Vary: * is never reused", [
    {"request": [["Foo", "1"]], "response": fresh([["Vary", "*"]])},
    {"request": [["Foo", "1"]], "expect": "not_cached"}])
case("Vary: the same value is reused", [
    {"request": [["Foo", "1"]], "response": fresh([["Vary", "Foo"]])},
    {"request": [["Foo", "1"]], "expect": "cached"}])
# Stored fields (headers).
case("Connection names fields not stored", [
    {"response": fresh([["Connection", "a, b"], ["a", "1"], ["b", "2"], ["c", "3"]]), "pause_after": 1},
    {"expect": "cached", "fields": [["c", "3"]], "missing": ["a", "b"]}])
case("a stored answer keeps the origin's Date", [
    {"response": [["Cache-Control", "max-age=3600"], ["Date", -5]], "pause_after": 1},
    {"expect": "cached", "fields": [["Date", -5]]}])
# Conditional requests of the client (conditional-etag, conditional-lm).
case("If-None-Match of the stored ETag gets 304", [
    {"response": fresh([["ETag", '"abcdef"']])},
    {"request": [["If-None-Match", '"abcdef"']], "expect": "cached", "status": 304}])
case("If-Modified-Since after Last-Modified gets 304", [
    {"response": fresh([["Last-Modified", -3000]])},
    {"request": [["If-Modified-Since", -1000]], "expect": "cached", "status": 304}])
# Errors (status).
case("a 500 is passed on and not stored", [
    {"response_status": 500, "response": [["Cache-Control", "max-age=3600"]], "status": 500},
    {"expect": "not_cached"}])
case("a fresh 404 is passed on", [
    {"response_status": 404, "response": [["Cache-Control", "max-age=3600"]], "status": 404}])


def value(v, base):
    """A number is a time: seconds from the case's start, written as an HTTP date."""
    return formatdate(base + v, usegmt=True) if isinstance(v, int) else v


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = {}
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        with self.lock:
            entry = self.state.get(path)
            if entry is None:
                self.send_error(404)
                return
            entry["seen"].append({k.lower(): v for k, v in self.headers.items()})
            answers = [r for r in entry["case"]["requests"] if "response" in r]
            spec = answers[min(len(entry["seen"]), len(answers)) - 1]
        body = ("body of %s, answer %d\n" % (path, len(entry["seen"]))).encode()
        # The case's fields only: `send_response` would add a `Date` of its own before them.
        self.send_response_only(spec.get("response_status", 200))
        fields = spec.get("response", [])
        if not any(name.lower() == "date" for name, _ in fields):
            self.send_header("Date", formatdate(usegmt=True))
        for name, v in fields:
            self.send_header(name, value(v, entry["base"]))
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def run(base_url, item, origin_state):
    path = "/t/" + uuid.uuid4().hex
    start = time.time()
    origin_state[path] = {"case": item, "seen": [], "base": int(start)}
    for number, request in enumerate(item["requests"]):
        before = len(origin_state[path]["seen"])
        req = urllib.request.Request(base_url + path)
        for name, v in request.get("request", []):
            req.add_header(name, value(v, int(start)))
        try:
            with urllib.request.urlopen(req, timeout=20) as response:
                status, fields = response.status, response.headers
                response.read()
        except urllib.error.HTTPError as error:
            status, fields = error.code, error.headers
        except Exception as error:
            return "request %d: %s" % (number + 1, error)
        seen = origin_state[path]["seen"][before:]
        expect = request.get("expect")
        if expect == "cached" and seen:
            return "request %d reached the origin" % (number + 1)
        if expect == "not_cached" and not seen:
            return "request %d was answered from the cache" % (number + 1)
        if expect == "validated" and not any("if-none-match" in s or "if-modified-since" in s for s in seen):
            return "request %d was not revalidated" % (number + 1)
        wanted = request.get("status")
        if wanted and status != wanted:
            return "request %d: status %d, not %d" % (number + 1, status, wanted)
        for name, v in request.get("fields", []):
            if fields.get(name) != value(v, int(start)):
                return "request %d: %s is %r" % (number + 1, name, fields.get(name))
        for name in request.get("missing", []):
            if fields.get(name) is not None:
                return "request %d: %s was sent" % (number + 1, name)
        time.sleep(request.get("pause_after", 0))
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve-base", required=True)
    parser.add_argument("--nginx-base", required=True)
    parser.add_argument("--origin-port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.origin_port), Origin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    bases = {"serve": args.serve_base, "nginx": args.nginx_base}
    passed = {"serve": 0, "nginx": 0}
    results = []
    for item in CASES:
        row = {"case": item["name"]}
        for peer, base in bases.items():
            failure = run(base, item, Origin.state)
            row[peer] = failure or "pass"
            passed[peer] += failure is None
        results.append(row)
        print("%-48s %-8s %s" % (item["name"], "pass" if row["serve"] == "pass" else "FAIL",
                                   "nginx: " + ("pass" if row["nginx"] == "pass" else "FAIL (" + row["nginx"] + ")")
                                   + ("" if row["serve"] == "pass" else "; serve: " + row["serve"])))
    print("passed: serve %d, nginx proxy_cache %d, of %d" % (passed["serve"], passed["nginx"], len(CASES)))
    print(json.dumps(passed))


if __name__ == "__main__":
    main()
