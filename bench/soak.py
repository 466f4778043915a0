#!/usr/bin/env python3
"""The client side of bench/soak.sh (standard library only).

    soak.py run --proxy-port P --origin-port O --slow-port S --pid PID --media FILE --slow FILE
                [--hostile-port H --etag-port E --etag FILE] [--seconds 120] [--clients 200]
                [--idle 1000] [--slow-clients 20] [--hostile-clients 10] --out RUN.json
    soak.py report --run RUN.json --origin-stats JSON --slow-stats JSON --exit-seconds X
                [--error-log FILE --logged-before N] [--media-path /media.bin]

`run` loads the proxy for --seconds with three kinds of client at once, all over raw HTTP/1.1 on
asyncio streams:
  range clients  random ranges (1 KiB-2 MiB, log-uniform) of the cold media file; a quarter are
                 open-ended `bytes=N-` and give up after reading at most 2 MiB. Keep-alive is
                 used while answers are read to the end. Every byte received is compared with
                 the local file at the offset asked for; a 206 must carry the Content-Range asked.
  idle clients   connections that send nothing, half a request line or half a header block and
                 wait; the proxy should close them after its idle timeout. Closed ones reopen,
                 so about --idle stay open.
  slow clients   ranges of the slow file from a 2 kB/s origin, given up after 1-3 s.
  hostile        (with --hostile-port) requests that met the red team's hostile origins and
                 requests, one after another: a 304 to If-Range (the whole file compared), `Transfer-Encoding: gzip,
                 chunked`, HEAD and GET of an endless body given up, a playlist whose variables
                 expand without bound, two Host headers, credentials in the URL, and the whole
                 of a file whose ETag changes on every response (every byte compared), a playlist
                 of 1.25 million entries, a 503 (passed on), a web page (sandboxed) and the
                 proxy's own address written as a mapped IPv4 address.
                 Each must end within 15 s with the status it should have.
It samples the proxy's fds, RSS and threads every second (baseline after one warm-up request,
peak, and after the clients are gone and the fd count has settled, for up to 30 s) and writes
everything to RUN.json. `report` adds the origins' statistics and the time the proxy took to
exit after SIGTERM, prints the table and `soak: PASS` or `soak: FAIL (reasons)`, exit status 1.
"""
import argparse
import asyncio
import json
import math
import os
import random
import resource
import shlex
import statistics
import sys
import time
from collections import Counter

KiB = 1024
MiB = 1024 * KiB
READ_SIZE = 256 * KiB
STALL_SECONDS = 30  # a range client gives up (error "timeout") after this long without a byte
CONNECT_SECONDS = 10


class ProtocolError(Exception):
    """An answer the client could not use; `kind` names it in the errors table."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


# ---- the proxy process, from /proc ----

# How far above its baseline the proxy's RSS may stay once the clients are gone.
RSS_SLACK_KIB = 32 << 10


def proxy_sample(pid):
    """(open fds, VmRSS KiB, VmHWM KiB, threads) of the proxy, or None once it has exited."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        fields = {}
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                fields[name] = value.split()
        if fields.get("State", ["Z"])[0] == "Z":
            return None
        return fds, int(fields["VmRSS"][0]), int(fields["VmHWM"][0]), int(fields["Threads"][0])
    except (FileNotFoundError, ProcessLookupError, KeyError):
        return None


TCP_STATES = {"01": "ESTABLISHED", "02": "SYN-SENT", "03": "SYN-RECV", "04": "FIN-WAIT-1",
              "05": "FIN-WAIT-2", "06": "TIME-WAIT", "07": "CLOSE", "08": "CLOSE-WAIT",
              "09": "LAST-ACK", "0A": "LISTEN", "0B": "CLOSING"}


def proxy_sockets(pid, ports):
    """The proxy's TCP sockets by peer and state, e.g. {"clients CLOSE-WAIT": 12}.
    `ports` names ports: {proxy_port: "clients", origin_port: "to origin", ...}."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return {}
    found = Counter()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as file:
                next(file)
                for line in file:
                    fields = line.split()
                    if fields[9] not in inodes:
                        continue
                    inodes.discard(fields[9])
                    local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
                    state = TCP_STATES.get(fields[3], fields[3])
                    if state == "LISTEN":
                        found["listener"] += 1
                    elif local in ports:
                        found[f"{ports[local]} {state}"] += 1
                    else:
                        found[f"{ports.get(remote, f'to port {remote}')} {state}"] += 1
        except OSError:
            pass
    if inodes:
        found["other sockets"] += len(inodes)
    return dict(found)


# ---- HTTP/1.1 over asyncio streams ----

async def read_head(reader):
    """Reads a response head; returns (status, headers with lower-case names)."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        raise ProtocolError("closed before the head" if not error.partial else "truncated head")
    except asyncio.LimitOverrunError:
        raise ProtocolError("head too long")
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError("bad status line")
    headers = {}
    for line in lines[1:]:
        if line:
            name, colon, value = line.partition(":")
            if not colon:
                raise ProtocolError("bad header line")
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def body_chunks(reader, headers):
    """Yields the body as it arrives: chunked, Content-Length, or up to the close."""
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailers
                    return
                while size:
                    chunk = await reader.read(min(size, READ_SIZE))
                    if not chunk:
                        raise ProtocolError("short body")
                    size -= len(chunk)
                    yield chunk
                if await reader.readexactly(2) != b"\r\n":
                    raise ProtocolError("bad chunk framing")
        elif "content-length" in headers:
            left = int(headers["content-length"])
            while left:
                chunk = await reader.read(min(left, READ_SIZE))
                if not chunk:
                    raise ProtocolError("short body")
                left -= len(chunk)
                yield chunk
        else:
            while chunk := await reader.read(READ_SIZE):
                yield chunk
    except asyncio.IncompleteReadError:
        raise ProtocolError("short body")
    except (ValueError, asyncio.LimitOverrunError):
        raise ProtocolError("bad chunk framing")


def request_bytes(host, target, extra=""):
    return f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


def content_range(value):
    """'bytes A-B/LEN' as (A, B, LEN), or None."""
    try:
        unit, _, spec = value.partition(" ")
        span, _, total = spec.partition("/")
        first, _, last = span.partition("-")
        return (int(first), int(last), int(total)) if unit == "bytes" else None
    except ValueError:
        return None


def close(writer):
    if writer is not None:
        writer.transport.abort()


def error_kind(error):
    if isinstance(error, ProtocolError):
        return error.kind
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, ConnectionResetError):
        return "connection reset"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error.strerror or error}"
    return type(error).__name__


def merged_length(spans):
    """Bytes covered by the union of half-open (start, end) spans."""
    total, reach = 0, 0
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def spread(values):
    """Median, 95th percentile and maximum of `values` (None when empty)."""
    if not values:
        return None
    values = sorted(values)
    return {"median": statistics.median(values), "p95": values[int(0.95 * (len(values) - 1))], "max": values[-1]}


# ---- the soak ----

class Soak:
    def __init__(self, args):
        self.args = args
        self.host = f"127.0.0.1:{args.proxy_port}"
        self.media_target = f"/http://127.0.0.1:{args.origin_port}/media.bin"
        self.slow_target = f"/http://127.0.0.1:{args.slow_port}/slow.bin"
        with open(args.media, "rb") as file:
            self.media = file.read()
        with open(args.slow, "rb") as file:
            self.slow = file.read()
        self.errors = Counter()  # "client: kind" -> count
        self.count = Counter()  # named tallies, see the report
        self.asked = []  # (start, end) spans of media.bin asked for (open-ended: to the end)
        self.received = []  # (start, end) spans of media.bin received
        self.mismatch_examples = []
        self.idle_open = 0
        self.idle_open_min = None  # after the ramp-up
        self.idle_held = {"nothing": [], "request-line": [], "headers": []}  # seconds until closed
        self.idle_answers = Counter()
        self.samples = []
        self.connect_seconds = []  # idle connections: from connect() to connected
        self.head_seconds = []  # range requests: from the request to the response head
        self.complete_seconds = []  # range requests read to the end: from the request to the last byte
        self.ports = {args.proxy_port: "clients", args.origin_port: "to the origin",
                      args.slow_port: "to the slow origin"}
        self.hostile_answers = Counter()  # "case: status" -> count
        if args.hostile_port:
            with open(args.etag, "rb") as file:
                self.etag = file.read()
            self.ports[args.hostile_port] = "to the hostile origin"
            self.scripted = bytes(i % 251 for i in range(2_000_000))  # Tests/Fixtures/scripted_origin.py's body
            self.ports[args.etag_port] = "to the changing-ETag origin"
        self.peak_sockets = {}

    def verify(self, data, offset, chunk, what):
        """Compares `chunk` with `data` at `offset`; counts the bytes checked and mismatched."""
        self.count[f"{what} bytes checked"] += len(chunk)
        expected = data[offset:offset + len(chunk)]
        if chunk != expected:
            bad = sum(a != b for a, b in zip(chunk, expected)) + len(chunk) - len(expected)
            self.count[f"{what} bytes mismatched"] += bad
            if len(self.mismatch_examples) < 10:
                self.mismatch_examples.append(f"{what}: {bad} of {len(chunk)} bytes wrong at {offset}")

    def stopping(self):
        return asyncio.get_running_loop().time() >= self.deadline

    async def connect(self):
        """A new connection to the proxy (TimeoutError after CONNECT_SECONDS)."""
        async with asyncio.timeout(CONNECT_SECONDS):
            return await asyncio.open_connection("127.0.0.1", self.args.proxy_port)

    # (a) random ranges of the cold media file, verified byte by byte
    async def range_client(self, number):
        rng = random.Random(f"{self.args.seed} range {number}")
        size = len(self.media)
        reader = writer = None
        try:
            while not self.stopping():
                first = rng.randrange(size)
                length = int(math.exp(rng.uniform(math.log(KiB), math.log(2 * MiB))))
                if rng.random() < 0.25:  # open-ended; read at most `length` bytes, then give up
                    last, spec, limit = size - 1, f"bytes={first}-", length
                else:
                    last = min(first + length - 1, size - 1)
                    spec, limit = f"bytes={first}-{last}", None
                self.asked.append((first, last + 1))
                self.count["range requests"] += 1
                for attempt in (1, 2):
                    reused = writer is not None
                    try:
                        if writer is None:
                            reader, writer = await self.connect()
                        keep = await self.range_request(reader, writer, first, last, spec, limit)
                        break
                    except ProtocolError as error:
                        close(writer)
                        reader = writer = None
                        # A kept-alive connection the server closed just before this request.
                        if reused and attempt == 1 and error.kind == "closed before the head":
                            self.count["range keep-alive closed, retried"] += 1
                            continue
                        self.errors[f"range: {error.kind}"] += 1
                        keep = False
                        break
                    except (OSError, TimeoutError) as error:
                        close(writer)
                        reader = writer = None
                        if reused and attempt == 1 and isinstance(error, ConnectionResetError):
                            self.count["range keep-alive closed, retried"] += 1
                            continue
                        self.errors[f"range: {error_kind(error)}"] += 1
                        keep = False
                        break
                if not keep:
                    close(writer)
                    reader = writer = None
        finally:
            close(writer)

    async def range_request(self, reader, writer, first, last, spec, limit):
        """One request on the connection; returns whether the connection can be reused."""
        writer.write(request_bytes(self.host, self.media_target, f"Range: {spec}\r\n"))
        loop = asyncio.get_running_loop()
        asked = time.monotonic()
        async with asyncio.timeout(STALL_SECONDS) as stall:
            status, headers = await read_head(reader)
            self.head_seconds.append(time.monotonic() - asked)
            if status == 206:
                if content_range(headers.get("content-range", "")) != (first, last, len(self.media)):
                    self.errors["range: Content-Range not the range asked"] += 1
                length = headers.get("content-length")
                if length is not None and int(length) != last - first + 1:
                    self.errors["range: Content-Length not the range's"] += 1
                offset = first
            elif status == 200:
                self.errors["range: 200 to a range request"] += 1
                offset, limit = 0, 2 * MiB  # the whole body: its start compared, then given up
            else:
                self.errors[f"range: status {status}"] += 1
                return False
            start, read = offset, 0
            try:
                async for chunk in body_chunks(reader, headers):
                    stall.reschedule(loop.time() + STALL_SECONDS)
                    enough = limit is not None and read + len(chunk) >= limit
                    if enough:
                        chunk = chunk[:limit - read]
                    self.verify(self.media, offset, chunk, "range")
                    self.count["range bytes received"] += len(chunk)
                    offset += len(chunk)
                    read += len(chunk)
                    if enough:
                        self.count["range given up (open-ended)"] += 1
                        return False
            finally:
                self.received.append((start, offset))
        if offset - start != last - first + 1 and status == 206:
            self.errors["range: body length not the range's"] += 1
        self.count["range requests complete"] += 1
        self.complete_seconds.append(time.monotonic() - asked)
        return headers.get("connection", "").lower() != "close"

    # (b) idle connections that never finish a request; kept near --idle by reopening
    async def idle_client(self, number, connecting):
        rng = random.Random(f"{self.args.seed} idle {number}")
        mode = ("nothing", "request-line", "headers")[number % 3]
        partial = {
            "nothing": b"",
            "request-line": f"GET {self.media_target} HT".encode(),
            "headers": f"GET {self.media_target} HTTP/1.1\r\nHost: {self.host}\r\nRange: bytes=0-".encode(),
        }[mode]
        await asyncio.sleep(rng.uniform(0, 2))  # spread the ramp-up
        writer = None
        try:
            while not self.stopping():
                try:
                    async with connecting:
                        dialled = time.monotonic()
                        reader, writer = await self.connect()
                except (OSError, TimeoutError) as error:
                    self.errors[f"idle: connect {error_kind(error)}"] += 1
                    await asyncio.sleep(1)
                    continue
                self.count["idle connections opened"] += 1
                self.connect_seconds.append(time.monotonic() - dialled)
                self.idle_open += 1
                opened = time.monotonic()
                answer = b""
                try:
                    if partial:
                        writer.write(partial)
                    async with asyncio.timeout_at(self.deadline):  # until the server closes it
                        while chunk := await reader.read(4096):
                            answer += chunk
                    how = "closed by server"
                except ConnectionResetError:
                    how = "reset by server"
                except TimeoutError:
                    return  # the soak is over (closed below)
                finally:
                    self.idle_open -= 1
                    close(writer)
                    writer = None
                self.count[f"idle {how}"] += 1
                self.idle_held[mode].append(time.monotonic() - opened)
                if answer:
                    first_line = answer.split(b"\r\n", 1)[0].decode("latin-1")[:40]
                    self.idle_answers[f"{mode}: {first_line}"] += 1
        finally:
            close(writer)

    # (c) slow-origin readers that give up after 1-3 s
    async def slow_client(self, number):
        rng = random.Random(f"{self.args.seed} slow {number}")
        size = len(self.slow)
        while not self.stopping():
            first = rng.randrange(size)
            spec = f"bytes={first}-" if rng.random() < 0.5 else f"bytes={first}-{min(first + 65535, size - 1)}"
            patience = rng.uniform(1, 3)
            self.count["slow requests"] += 1
            writer = None
            headed = False
            try:
                async with asyncio.timeout(patience):
                    reader, writer = await asyncio.open_connection("127.0.0.1", self.args.proxy_port)
                    writer.write(request_bytes(self.host, self.slow_target, f"Range: {spec}\r\n"))
                    status, headers = await read_head(reader)
                    headed = True
                    if status != 206:
                        self.errors[f"slow: status {status}"] += 1
                        continue
                    if (content_range(headers.get("content-range", "")) or (None,))[0] != first:
                        self.errors["slow: Content-Range not the range asked"] += 1
                    offset = first
                    async for chunk in body_chunks(reader, headers):
                        self.verify(self.slow, offset, chunk, "slow")
                        offset += len(chunk)
                self.count["slow requests complete"] += 1
            except TimeoutError:
                self.count["slow given up after headers" if headed else "slow given up before headers"] += 1
            except (OSError, ProtocolError) as error:
                self.errors[f"slow: {error_kind(error)}"] += 1
            finally:
                close(writer)

    # (d) requests that met the red team's hostile origins and requests
    def hostile_cases(self):
        """(name, request bytes, statuses it may get, bytes to read before giving up, data to compare,
        header fields the answer must carry)."""
        hostile = f"http://127.0.0.1:{self.args.hostile_port}"
        origin = f"http://127.0.0.1:{self.args.origin_port}"
        etag = f"http://127.0.0.1:{self.args.etag_port}/etag.bin"
        get = lambda target, extra="": request_bytes(self.host, "/" + target, extra)
        return [
            ("304 to If-Range, first bytes", get(hostile + "/loop", "Range: bytes=0-999\r\n"), {206}, None, None),
            ("304 to If-Range, the rest", get(hostile + "/loop"), {200}, None, self.scripted),
            ("gzip, chunked", get(hostile + "/coded"), {502}, None, None),
            ("endless body, given up", get(hostile + "/endless"), {200}, MiB, None),
            ("HEAD of an endless body, given up", f"HEAD /{hostile}/endless HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode(),
             set(), 0, None),
            ("playlist bomb", get(origin + "/bomb.m3u8"), {502}, None, None),
            ("two Host headers", get(origin + "/warmup.bin", f"Host: {self.host}\r\n"), {400}, None, None),
            ("credentials in the URL", get(f"http:/alice:pw@127.0.0.1:{self.args.origin_port}/warmup.bin"), {400},
             None, None),
            ("changing ETag, whole file", get(etag), {200}, None, self.etag),
            ("a playlist of 1.25 million entries", get(origin + "/huge.m3u8"), {502}, None, None),
            ("a 503, passed on", get(hostile + "/down"), {503}, None, None),
            ("a web page, sandboxed", get(hostile + "/page.html"), {200}, None, None,
             {"content-security-policy": "sandbox", "x-content-type-options": "nosniff"}),
            ("the proxy itself as a mapped IPv4 address",
             get(f"http://[::ffff:127.0.0.1]:{self.args.proxy_port}/http://127.0.0.1:1/x"), {400}, None, None),
        ]

    async def hostile_client(self, number):
        cases = self.hostile_cases()
        position = number
        while not self.stopping():
            name, request, statuses, limit, data, *rest = cases[position % len(cases)]
            required = rest[0] if rest else {}
            position += 1
            self.count["hostile requests"] += 1
            writer = None
            try:
                async with asyncio.timeout(15 if limit != 0 else 1):
                    reader, writer = await asyncio.open_connection("127.0.0.1", self.args.proxy_port)
                    writer.write(request)
                    status, headers = await read_head(reader)
                    self.hostile_answers[f"{name}: {status}"] += 1
                    if status not in statuses:
                        self.errors[f"hostile: {name}: status {status}"] += 1
                        continue
                    for field, value in required.items():
                        if headers.get(field) != value:
                            self.errors[f"hostile: {name}: {field} {headers.get(field)}"] += 1
                    offset = 0
                    async for chunk in body_chunks(reader, headers):
                        if data is not None:
                            self.verify(data, offset, chunk, "hostile")
                        offset += len(chunk)
                        if limit is not None and offset >= limit:
                            break
                    if data is not None and offset != len(data):
                        self.errors[f"hostile: {name}: {offset} of {len(data)} bytes"] += 1
                self.count["hostile requests ended"] += 1
            except TimeoutError:
                if limit == 0:
                    self.count["hostile requests ended"] += 1  # the HEAD given up, as asked
                    self.hostile_answers[f"{name}: given up"] += 1
                else:
                    self.errors[f"hostile: {name}: no end within 15 s"] += 1
            except (OSError, ProtocolError) as error:
                self.errors[f"hostile: {name}: {error_kind(error)}"] += 1
            finally:
                close(writer)

    async def sampler(self):
        last_progress = time.monotonic()
        started = last_progress
        while True:
            sample = proxy_sample(self.args.pid)
            if sample is None:
                self.count["proxy gone during the run"] = 1
                return
            if not self.samples or sample[0] > max(earlier[0] for earlier in self.samples):
                self.peak_sockets = proxy_sockets(self.args.pid, self.ports)  # at the most fds
            self.samples.append(sample)
            now = time.monotonic()
            if now - started > 5 and not self.stopping():  # the idle connections are open by then
                if self.idle_open_min is None or self.idle_open < self.idle_open_min:
                    self.idle_open_min = self.idle_open
            if now - last_progress >= 10:
                last_progress = now
                print(f"  {now - started:4.0f} s: {self.count['range requests complete']} ranges, "
                      f"{self.count['range bytes checked'] / MiB:.0f} MiB checked, "
                      f"{self.idle_open} idle open, {self.count['slow requests']} slow; "
                      f"proxy {sample[0]} fds, {sample[1] // 1024} MiB RSS, {sample[3]} threads",
                      file=sys.stderr, flush=True)
            await asyncio.sleep(1)

    async def warm_up(self):
        """One whole small file through the proxy (also opens its origin connection pool)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.args.proxy_port)
        try:
            target = f"/http://127.0.0.1:{self.args.origin_port}/warmup.bin"
            writer.write(request_bytes(self.host, target, "Connection: close\r\n"))
            status, headers = await read_head(reader)
            async for _ in body_chunks(reader, headers):
                pass
            if status != 200:
                raise SystemExit(f"soak.py: the warm-up request got status {status}")
        finally:
            close(writer)

    async def run(self):
        args = self.args
        await self.warm_up()
        await asyncio.sleep(1)
        baseline = proxy_sample(args.pid)
        if baseline is None:
            raise SystemExit("soak.py: the proxy is not running")
        print(f"  baseline: {baseline[0]} fds, {baseline[1] // 1024} MiB RSS; "
              f"{args.clients} range, {args.idle} idle and {args.slow_clients} slow clients for "
              f"{args.seconds:g} s", file=sys.stderr, flush=True)
        began = time.monotonic()
        self.deadline = asyncio.get_running_loop().time() + args.seconds
        connecting = asyncio.Semaphore(64)
        sampler = asyncio.create_task(self.sampler())
        clients = [asyncio.create_task(self.range_client(n)) for n in range(args.clients)]
        clients += [asyncio.create_task(self.idle_client(n, connecting)) for n in range(args.idle)]
        clients += [asyncio.create_task(self.slow_client(n)) for n in range(args.slow_clients)]
        if args.hostile_port:
            clients += [asyncio.create_task(self.hostile_client(n)) for n in range(args.hostile_clients)]
        await asyncio.sleep(args.seconds)
        # Requests in flight at the deadline are cut: their connections are closed.
        for task in clients:
            task.cancel()
        done, pending = await asyncio.wait(clients, timeout=5)
        if pending:  # a bug in this script: the numbers after are then measured late
            self.errors["soak.py: client tasks still running 5 s after the end"] += len(pending)
            print(f"soak.py: {len(pending)} client tasks did not stop", file=sys.stderr)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
                self.errors[f"soak.py: client crashed: {type(error).__name__}: {error}"] += 1
        elapsed = time.monotonic() - began
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)
        # Quiet: the proxy's fd count and RSS back near the baseline, waiting up to 30 s (idle
        # pooled connections to the origins close after 15 s; memory is handed back every 10 s).
        quiet_began = time.monotonic()
        after = proxy_sample(args.pid)
        while (after is not None and (after[0] > baseline[0] + 10 or after[1] > baseline[1] + RSS_SLACK_KIB)
               and time.monotonic() - quiet_began < 30):
            await asyncio.sleep(0.5)
            after = proxy_sample(args.pid)
        settle = time.monotonic() - quiet_began
        samples = self.samples or [baseline]
        held = {mode: sorted(values) for mode, values in self.idle_held.items()}
        return {
            "seconds": elapsed,
            "clients": {"range": args.clients, "idle": args.idle, "slow": args.slow_clients,
                        "hostile": args.hostile_clients if args.hostile_port else 0},
            "hostile_answers": dict(self.hostile_answers),
            "count": dict(self.count),
            "errors": dict(self.errors),
            "mismatch_examples": self.mismatch_examples,
            "media_size": len(self.media),
            "asked_union": merged_length(self.asked),
            "received_union": merged_length(self.received),
            "range_head_seconds": spread(self.head_seconds),
            "range_complete_seconds": spread(self.complete_seconds),
            "idle_open_min": self.idle_open_min,
            "idle_connect_seconds": spread(self.connect_seconds),
            "idle_held": {mode: {"count": len(v), "min": v[0], "median": statistics.median(v), "max": v[-1]}
                          for mode, v in held.items() if v},
            "idle_answers": dict(self.idle_answers),
            "baseline": {"fds": baseline[0], "rss_kib": baseline[1], "threads": baseline[3]},
            "peak": {"fds": max(s[0] for s in samples), "rss_kib": max(s[1] for s in samples),
                     "threads": max(s[3] for s in samples)},
            "peak_sockets": self.peak_sockets,
            "after": None if after is None else {"fds": after[0], "rss_kib": after[1], "threads": after[3],
                                                 "hwm_kib": after[2], "settle_seconds": settle,
                                                 "sockets": proxy_sockets(args.pid, self.ports)},
        }


def run(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = args.clients + args.idle + args.slow_clients + 256
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft != resource.RLIM_INFINITY and soft < needed:
        raise SystemExit(f"soak.py: needs {needed} file descriptors, the hard limit is {hard}")
    result = asyncio.run(Soak(args).run())
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)


# ---- the report ----

def report(args):
    with open(args.run) as file:
        run = json.load(file)
    with open(args.origin_stats) as file:
        origin = json.load(file)
    with open(args.slow_stats) as file:
        slow = json.load(file)
    count, errors = Counter(run["count"]), Counter(run["errors"])
    base, peak, after = run["baseline"], run["peak"], run["after"]
    mib = lambda n: f"{n / MiB:.1f} MiB"
    row = lambda name, *values: print(f"  {name:<44}" + "".join(f"{v:>14}" for v in values))

    print(f"requests ({run['seconds']:.0f} s; {run['clients']['range']} range, {run['clients']['idle']} idle, "
          f"{run['clients']['slow']} slow clients)")
    range_errors = sum(n for kind, n in errors.items() if kind.startswith("range: ") and
                       kind not in ("range: Content-Range not the range asked", "range: Content-Length not the range's",
                                    "range: 200 to a range request", "range: body length not the range's"))
    cut = count["range requests"] - count["range requests complete"] - count["range given up (open-ended)"] - range_errors
    row("range complete / given up / failed / cut at end", f"{count['range requests complete']}",
        f"{count['range given up (open-ended)']}", f"{range_errors}", f"{cut}")
    row("range bytes checked", mib(count["range bytes checked"]))
    for name, key in (("range s to the head: median / p95 / max", "range_head_seconds"),
                      ("range s to the end: median / p95 / max", "range_complete_seconds")):
        if run[key]:
            row(name, f"{run[key]['median']:.2f}", f"{run[key]['p95']:.2f}", f"{run[key]['max']:.2f}")
    row("slow requests complete / sent", f"{count['slow requests complete']}", f"{count['slow requests']}")
    row("slow given up before / after the head", f"{count['slow given up before headers']}",
        f"{count['slow given up after headers']}")
    row("slow bytes checked", f"{count['slow bytes checked']} B")
    if run["clients"].get("hostile"):
        row("hostile requests ended / sent", f"{count['hostile requests ended']}", f"{count['hostile requests']}")
        row("hostile bytes checked (changing ETag)", mib(count["hostile bytes checked"]))
        for answer, n in sorted(run["hostile_answers"].items()):
            print(f"    {n} x {answer}")
    mismatched = count["range bytes mismatched"] + count["slow bytes mismatched"] + count["hostile bytes mismatched"]
    row("mismatched bytes", f"{mismatched}")
    for example in run["mismatch_examples"]:
        print(f"    {example}")
    row("idle opened / closed by server / reset", f"{count['idle connections opened']}",
        f"{count['idle closed by server']}", f"{count['idle reset by server']}")
    row("idle open at least (after ramp-up)", f"{run['idle_open_min']}")
    if run["idle_connect_seconds"]:
        held = run["idle_connect_seconds"]
        row("idle s to connect: median / p95 / max", f"{held['median']:.2f}", f"{held['p95']:.2f}", f"{held['max']:.2f}")
    for mode, held in run["idle_held"].items():
        row(f"idle ({mode}) held s: min / median / max", f"{held['min']:.1f}", f"{held['median']:.1f}",
            f"{held['max']:.1f}")
    for answer, n in sorted(run["idle_answers"].items()):
        print(f"    idle connections answered before the close: {n} x {answer}")
    if count["range keep-alive closed, retried"]:
        row("keep-alive closed before a request (retried)", f"{count['range keep-alive closed, retried']}")

    print("errors")
    if not errors:
        print("  none")
    for kind, n in errors.most_common():
        row(kind, f"{n}")
    if args.error_log and os.path.exists(args.error_log):
        logged = Counter()
        with open(args.error_log) as file:
            for line in file:
                if line.startswith("#") or not line.strip():
                    continue
                fields = shlex.split(line)  # date time c-ip cs-method cs-uri sc-status x-reason
                reason = fields[6] if len(fields) > 6 else "-"
                logged[f"{fields[5]} {reason[:60]}"] += 1
        print(f"proxy error log: {sum(logged.values())} lines ({args.logged_before} before SIGTERM)")
        for kind, n in logged.most_common(8):
            row(kind, f"{n}")

    print("proxy process")
    row("", "baseline", "peak", "after")
    row("open fds", f"{base['fds']}", f"{peak['fds']}", "-" if after is None else f"{after['fds']}")
    row("RSS MiB (peak: sampled / VmHWM)", f"{base['rss_kib'] / 1024:.1f}",
        f"{peak['rss_kib'] / 1024:.1f} / {(after or {}).get('hwm_kib', 0) / 1024:.0f}",
        "-" if after is None else f"{after['rss_kib'] / 1024:.1f}")
    row("threads", f"{base['threads']}", f"{peak['threads']}", "-" if after is None else f"{after['threads']}")
    if after is not None:
        row("fd count settled after (s)", f"{after['settle_seconds']:.1f}")
    row("exit after SIGTERM (s)", args.exit_seconds)
    for when, sockets in (("peak", run["peak_sockets"]), ("after", (after or {}).get("sockets", {}))):
        if sockets:
            print(f"  proxy sockets at {when}: " + ", ".join(f"{n} {kind}" for kind, n in
                                                          sorted(sockets.items(), key=lambda i: -i[1])))

    # What the fast origin sent for media.bin: all its body bytes but the other paths' requests.
    others = sum(r["bodyBytes"] for r in origin["requests"] if r["path"] != args.media_path)
    media_bytes = origin["bodyBytes"] - others
    media_requests = sum(1 for r in origin["requests"] if r["path"] == args.media_path)
    print("origin")
    row("media.bin: origin requests / active / bytes", f"{media_requests}", f"{origin['activeRequests']}",
        mib(media_bytes))
    row("media.bin: duplicate bytes (sent twice)", mib(origin["duplicateBytes"]))
    # An answer the proxy closed before its end is not listed among the requests: what it sent
    # is the rest of the origin's bytes (a fetch cut once no reader wanted it for the grace).
    listed = sum(r["bodyBytes"] for r in origin["requests"] if r["path"] == args.media_path)
    row("media.bin: bytes of answers cut before their end", mib(media_bytes - listed))
    row("union of bytes asked / received", mib(run["asked_union"]), mib(run["received_union"]))
    row("origin bytes / union asked", f"{media_bytes / max(run['asked_union'], 1):.3f}")
    row("origin bytes / union received", f"{media_bytes / max(run['received_union'], 1):.3f}")
    row("slow.bin: origin requests / active / bytes", f"{len(slow['requests'])}",
        f"{slow['activeRequests']}", f"{slow['bodyBytes']} B")

    reasons = []
    if mismatched:
        reasons.append(f"{mismatched} mismatched bytes")
    if after is None or count["proxy gone during the run"]:
        reasons.append("the proxy exited during the run")
    elif after["fds"] > base["fds"] + 10:
        reasons.append(f"{after['fds']} fds after vs {base['fds']} at baseline")
    if after is not None and after["rss_kib"] > base["rss_kib"] + RSS_SLACK_KIB:
        reasons.append(f"RSS {after['rss_kib'] >> 10} MiB after vs {base['rss_kib'] >> 10} MiB at baseline")
    try:
        if float(args.exit_seconds) > 5:
            reasons.append(f"exit took {args.exit_seconds} s after SIGTERM")
    except ValueError:
        reasons.append(f"no exit after SIGTERM ({args.exit_seconds})")
    if count["range requests complete"] == 0:
        reasons.append("no range request completed")
    print("soak: PASS" if not reasons else f"soak: FAIL ({'; '.join(reasons)})")
    return 1 if reasons else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    r = commands.add_parser("run")
    r.add_argument("--proxy-port", type=int, required=True)
    r.add_argument("--origin-port", type=int, required=True)
    r.add_argument("--slow-port", type=int, required=True)
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--media", required=True)
    r.add_argument("--slow", required=True)
    r.add_argument("--seconds", type=float, default=120)
    r.add_argument("--clients", type=int, default=200)
    r.add_argument("--idle", type=int, default=1000)
    r.add_argument("--slow-clients", type=int, default=20)
    r.add_argument("--hostile-port", type=int)
    r.add_argument("--etag-port", type=int)
    r.add_argument("--etag")
    r.add_argument("--hostile-clients", type=int, default=10)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--out", required=True)
    p = commands.add_parser("report")
    p.add_argument("--run", required=True)
    p.add_argument("--origin-stats", required=True)
    p.add_argument("--slow-stats", required=True)
    p.add_argument("--exit-seconds", required=True)
    p.add_argument("--error-log")
    p.add_argument("--logged-before", default="?")
    p.add_argument("--media-path", default="/media.bin")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
        return 0
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
