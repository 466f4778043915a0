#!/usr/bin/env python3
"""Records a live stream with `streamcache packages download` and, side by side on an origin of its
own, with ffmpeg (`-c copy`), both from the live edge; prints for each how often each segment was
requested and how long after it appeared in the origin's playlist it was requested, and for
StreamCache how long until it was listed in the package (durable, playable).

Usage: bench/live.py STREAMCACHE_BINARY [SECONDS]   (bench/live.sh builds and runs it)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

binary = sys.argv[1]
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
here = os.path.dirname(os.path.abspath(__file__))
origin_script = os.path.join(here, "..", "Tests", "Fixtures", "live_origin.py")
work = tempfile.mkdtemp(prefix="streamcache-live.")
period, window = 2.0, 4

subprocess.run(
    ["ffmpeg", "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25:duration=%d" % (seconds + 40),
     "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
     "-hls_segment_filename", work + "/src/s%d.ts", work + "/src/vod.m3u8"],
    check=True, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.makedirs(work + "/src", exist_ok=True))


def start_origin():
    process = subprocess.Popen(["python3", "-u", origin_script, work + "/src", "--window", str(window)],
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    return process, re.search(r"http://[0-9.:]+", line).group(0)


def get(url):
    with urllib.request.urlopen(url) as answer:
        return json.load(answer)


def appeared(k):
    """When segment k is first listed, in the origin's seconds."""
    return 0.0 if k < window else (k - window + 1) * period


def request_delays(base):
    first = {}
    counts = {}
    for at, path in get(base + "/_log"):
        match = re.match(r"/s(\d+)\.ts$", path)
        if match:
            k = int(match.group(1))
            counts[k] = counts.get(k, 0) + 1
            first.setdefault(k, at)
    # Only segments that appeared while the recorder ran: those listed at its start are no delay.
    delays = [first[k] - appeared(k) for k in first if k >= window]
    return counts, delays


def summary(name, counts, delays, extra=""):
    print("%-12s %3d segments  requests per segment: max %d  appeared→requested: median %.2f s, max %.2f s%s"
          % (name, len(counts), max(counts.values()), statistics.median(delays), max(delays), extra))


# StreamCache.
ours, ours_url = start_origin()
env = dict(os.environ, STREAMCACHE_DIR=work + "/cache", STREAMCACHE_LIBRARY=work + "/library")
offset = get(ours_url + "/_now") - time.monotonic()
listed = {}
stop = threading.Event()


def watch():
    while not stop.is_set():
        for root, _, files in os.walk(work + "/library"):
            if "index.m3u8" in files:
                text = open(os.path.join(root, "index.m3u8")).read()
                for k in re.findall(r"^s(\d+)\.ts$", text, re.M):
                    listed.setdefault(int(k), time.monotonic() + offset)
        time.sleep(0.01)


watcher = threading.Thread(target=watch)
watcher.start()
subprocess.run([binary, "packages", "download", ours_url + "/vod.m3u8", "--duration", "%ds" % seconds],
               env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
stop.set()
watcher.join()
counts, delays = request_delays(ours_url)
stored = [listed[k] - appeared(k) for k in listed if k >= window]
summary("streamcache", counts, delays,
        "  appeared→listed: median %.2f s, max %.2f s" % (statistics.median(stored), max(stored)))
ours.terminate()

# ffmpeg, from the live edge (its default: three segments from the end).
theirs, theirs_url = start_origin()
subprocess.run(["ffmpeg", "-hide_banner", "-v", "error", "-i", theirs_url + "/vod.m3u8", "-c", "copy", "-t", str(seconds),
                "-y", work + "/ffmpeg.ts"], check=True, stdin=subprocess.DEVNULL)
counts, delays = request_delays(theirs_url)
summary("ffmpeg", counts, delays)
theirs.terminate()
subprocess.run(["rm", "-rf", work])
