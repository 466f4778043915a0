#!/usr/bin/env python3
"""A DNS server that answers every query after a delay, and always that the name does not exist:
a resolver as slow as a user's can be, for tests that must not wait on one.

Usage: slow_resolver.py ADDRESS SECONDS   (listens on ADDRESS, UDP port 53; prints "listening")
"""
import socket
import sys
import threading
import time

address, delay = sys.argv[1], float(sys.argv[2])
server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server.bind((address, 53))
print("listening", flush=True)


def answer(query, peer):
    time.sleep(delay)
    # The query back as a response: the same id, "no such name", the question kept.
    server.sendto(query[:2] + b"\x81\x83" + query[4:6] + b"\x00" * 6 + query[12:], peer)


while True:
    query, peer = server.recvfrom(512)
    threading.Thread(target=answer, args=(query, peer), daemon=True).start()
