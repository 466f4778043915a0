#!/usr/bin/env python3
"""Opens many connections to a server, in three kinds, says `ready`, and once a line comes on
standard input (the server was told to stop) reads every connection until the server closes it.
Prints one JSON line: how many connections got a whole answer, how many were closed with no
answer, how many got part of one (a head or body cut short), and how many were still open at the
deadline.

Usage: many_connections.py PORT PATH COUNT SECONDS
  a third of the connections send a whole GET of PATH, a third half a request line, a third
  nothing
"""
import json
import resource
import select
import socket
import sys
import time

port, path, count, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

connections = []
for index in range(count):
    connection = socket.create_connection(("127.0.0.1", port))
    kind = ("whole", "half", "idle")[index % 3]
    if kind == "whole":
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    elif kind == "half":
        connection.sendall(b"GET /http://127.0.0.1:1/x HT")
    connections.append((connection, kind))
print("ready", flush=True)
sys.stdin.readline()

received = {connection.fileno(): b"" for connection, _ in connections}
open_ones = {connection.fileno(): connection for connection, _ in connections}
deadline = time.monotonic() + seconds
while open_ones and time.monotonic() < deadline:
    readable, _, _ = select.select(list(open_ones.values()), [], [], 0.5)
    for connection in readable:
        try:
            data = connection.recv(1 << 16)
        except ConnectionResetError:
            data = b""
        if data:
            received[connection.fileno()] += data
        else:
            del open_ones[connection.fileno()]


def judged(data):
    """`whole`, `none` or `part`: whole answers (each head and its Content-Length of body)."""
    if not data:
        return "none"
    while data:
        head, separator, rest = data.partition(b"\r\n\r\n")
        if not separator or not head.startswith(b"HTTP/1.1 "):
            return "part"
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if len(rest) < length:
            return "part"
        data = rest[length:]
    return "whole"


outcome = {"whole": 0, "none": 0, "part": 0, "open": len(open_ones), "kinds": {}}
for connection, kind in connections:
    verdict = judged(received[connection.fileno()])
    outcome[verdict] += 1
    outcome["kinds"].setdefault(kind, {}).setdefault(verdict, 0)
    outcome["kinds"][kind][verdict] += 1
print(json.dumps(outcome), flush=True)
