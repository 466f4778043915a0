#!/usr/bin/env python3
"""Times the first byte of an HTTP GET on a new connection, as a player's first request sees it.

    bench/first_byte.py [-n COUNT] URL [STATUS]

Prints the milliseconds from the start of connect() to the first byte of the answer, with no
client start-up in them (curl's time_starttransfer also counts curl's own setup, about 0.1-0.5 ms
here, the same for every server, which hides differences of that size). Fails on any answer
but STATUS (default 200). With -n, makes COUNT requests back to back, each on a new
connection, and prints their median: a server kept busy rather than woken for each request.
"""
import socket
import statistics
import sys
import time
from urllib.parse import urlsplit

arguments = sys.argv[1:]
count = 1
if arguments[0] == "-n":
    count = int(arguments[1])
    arguments = arguments[2:]
url = urlsplit(arguments[0])
status = arguments[1] if len(arguments) > 1 else "200"
target = url.path + ("?" + url.query if url.query else "")
request = f"GET {target} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode()
# Resolved before the clock starts: a process's first name lookup loads the resolver (1-2 ms).
address = socket.getaddrinfo(url.hostname, url.port, type=socket.SOCK_STREAM)[0]


def first_byte():
    with socket.socket(address[0], socket.SOCK_STREAM) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.perf_counter()
        connection.connect(address[4])
        connection.sendall(request)
        reply = connection.recv(65536)
        milliseconds = (time.perf_counter() - started) * 1000
        while chunk := connection.recv(65536):
            reply += chunk
    if not reply.startswith(f"HTTP/1.1 {status}".encode()):
        sys.exit(f"{arguments[0]}: {reply[:40]!r}")
    return milliseconds


print(f"{statistics.median(first_byte() for _ in range(count)):.3f}")
