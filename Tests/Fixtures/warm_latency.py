#!/usr/bin/env python3
"""Asks one URL for a range again and again on one keep-alive connection for a while, and prints
how long the answers took: `{"count": N, "p50": MS, "p99": MS, "max": MS}`. Every answer must be
a 206 of the range's length, else it exits 1.

Usage: warm_latency.py URL SECONDS [BYTES [SPAN]]   (ranges start within the first SPAN bytes,
                                                    1 MiB by default)
"""
import http.client
import json
import sys
import time
import urllib.parse

url, seconds = urllib.parse.urlsplit(sys.argv[1]), float(sys.argv[2])
length = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
span = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 20
path = sys.argv[1][len(f"{url.scheme}://{url.netloc}"):]
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
times = []
end = time.monotonic() + seconds
while time.monotonic() < end:
    offset = (len(times) * 65536) % (span - length + 1)
    started = time.monotonic()
    connection.request("GET", path, headers={"Range": f"bytes={offset}-{offset + length - 1}"})
    response = connection.getresponse()
    body = response.read()
    times.append((time.monotonic() - started) * 1000)
    if response.status != 206 or len(body) != length:
        print(f"answer {len(times)}: {response.status}, {len(body)} bytes", file=sys.stderr)
        sys.exit(1)
times.sort()
print(json.dumps({"count": len(times), "p50": times[len(times) // 2], "p99": times[int(len(times) * 0.99)],
                  "max": times[-1]}))
