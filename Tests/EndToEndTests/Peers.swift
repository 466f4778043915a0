import Foundation
import StreamCacheTesting
import Testing

/// A program other than streamcache, run to completion (curl, ffprobe, ffmpeg).
enum Tool {
    /// Runs `executable ARGS` (found on `PATH`), killing it after `timeout`.
    static func run(
        _ executable: String,
        _ arguments: [String],
        timeout: Duration = .seconds(120)
    ) async throws -> ProcessResult {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        return try await process.runToCompletion(timeout: timeout)
    }
}

/// An HTTP answer as curl saw it.
struct Reply: Sendable {
    let status: Int
    /// Header fields, names lowercased.
    let headers: [String: String]
    let body: Data
}

/// `curl`, the reference HTTP client.
enum Curl {
    /// Sends `method` (GET, HEAD, POST…) to `url` with `headers` and, if given, `data` as the body.
    static func fetch(
        _ url: String,
        headers: [String] = [],
        method: String = "GET",
        data: String? = nil
    ) async throws -> Reply {
        let directory = NSTemporaryDirectory() + "curl-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var arguments = ["-s", "-g", "--path-as-is", "-D", directory + "/head", "-o", directory + "/body"]
        arguments += method == "HEAD" ? ["-I"] : ["-X", method]
        for header in headers { arguments += ["-H", header] }
        if let data { arguments += ["--data-binary", data] }
        let result = try await Tool.run("curl", arguments + [url])
        guard result.status == 0 else { throw CurlError(url: url, status: result.status, stderr: result.stderr) }
        let head = (try? String(contentsOfFile: directory + "/head", encoding: .utf8)) ?? ""
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = FileManager.default.contents(atPath: directory + "/body") ?? Data()
        return Reply(status: status, headers: fields, body: body)
    }

    struct CurlError: Error, CustomStringConvertible {
        let url: String
        let status: Int32
        let stderr: String
        var description: String { "curl \(url) exited \(status): \(stderr)" }
    }
}

/// What some tests need that a Linux machine with `.ci/run`'s packages has, so the suite runs on
/// macOS too with those tests skipped.
enum LinuxTools {
    /// nginx where Debian puts it.
    static let nginx = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
    /// A process's memory figures in `/proc`.
    static let proc = FileManager.default.fileExists(atPath: "/proc/self/status")
    /// GNU time, whose `-f` reports a command's processor time and peak memory.
    static let gnuTime = proc && FileManager.default.isExecutableFile(atPath: "/usr/bin/time")
}

/// nginx serving a directory on 127.0.0.1: the reference for HTTP range semantics. One process
/// (no master and worker), so killing it leaves nothing behind.
final class NginxProcess: Sendable {
    let process: ChildProcess
    let port: Int
    let prefix: String

    /// nginx serving the files under `root`.
    convenience init(root: String) async throws {
        try await self.init { _ in "root \(root);" }
    }

    /// nginx sending each file under `root` that has a `.gz` beside it as that file,
    /// `Content-Encoding: gzip`, whatever the client accepts (`gzip_static always`), and logging
    /// each request it answers (``requests()``). A `.hls` file is an HLS playlist by its type
    /// alone, as a playlist behind `/manifest?id=7` is.
    convenience init(codingEverythingIn root: String) async throws {
        try await self.init { prefix in
            """
            root \(root); gzip_static always; access_log \(prefix)/access.log;
            types { application/vnd.apple.mpegurl hls; }
            """
        }
    }

    /// The request lines of the access log (one a request answered), when it keeps one.
    func requests() -> [String] {
        let log = (try? String(contentsOfFile: prefix + "/access.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init)
    }

    /// nginx as a caching reverse proxy of `origin` (`http://127.0.0.1:PORT`): `proxy_cache`
    /// with `proxy_cache_revalidate on` and no `proxy_cache_valid`, so it caches what the
    /// origin's fields allow.
    convenience init(cachingProxyOf origin: String) async throws {
        try await self.init { prefix in
            """
            location / {
                proxy_pass \(origin);
                proxy_cache streamcache_peer;
                proxy_cache_revalidate on;
                proxy_http_version 1.1;
                proxy_set_header Connection "";
            }
            """
        }
    }

    /// nginx with a server block whose body `server` makes (given nginx's folder), on a free
    /// port: one another test's server took first makes nginx exit, and another port is tried.
    private init(server: (String) -> String) async throws {
        prefix = TestData.temporaryDirectory("nginx")
        var attempt = 0
        while true {
            attempt += 1
            let (process, port) = try await Self.start(prefix: prefix, body: server(prefix))
            // Listening, and this nginx: a port taken first has another server listening.
            let url = URL(string: "http://127.0.0.1:\(port)/_streamcache_peer")!
            let answer = try? await onOwnThread { try Data(contentsOf: url) }
            if answer == Data(prefix.utf8) {
                self.process = process
                self.port = port
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            guard attempt < 3 else { throw POSIXError(.EADDRINUSE) }
        }
    }

    /// nginx started in `prefix` on a free port with a server block of `body`, once something
    /// listens on that port.
    private static func start(prefix: String, body: String) async throws -> (ChildProcess, Int) {
        let port = try freePort()
        let configuration = """
            daemon off;
            master_process off;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log;
            events { worker_connections 256; }
            http {
                access_log off;
                sendfile on;
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                proxy_cache_path \(prefix)/cache levels=1:2 keys_zone=streamcache_peer:1m;
                server {
                    listen 127.0.0.1:\(port);
                    location = /_streamcache_peer { access_log off; return 200 "\(prefix)"; }
                    \(body)
                }
            }
            """
        try configuration.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", prefix, "-c", prefix + "/nginx.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard try await isListening(port: port) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw POSIXError(.ECONNREFUSED)
        }
        return (process, port)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: prefix)
    }
}

/// A port nothing listens on now (bound to 0, read, closed), for a server to bind next; another
/// test's server may take it first. A port meant to refuse connections is a ``RefusingPort``.
func freePort() throws -> Int {
    let socket = try RawSocket.listening()
    defer { close(socket.descriptor) }
    return socket.port
}

/// Whether a TCP connection to `host:port` is accepted.
func canConnect(host: String, port: Int) -> Bool {
    guard let socket = try? RawSocket.connect(host: host, port: port) else { return false }
    close(socket.descriptor)
    return true
}

/// A TCP socket for what no HTTP client would send (malformed request lines, odd methods).
struct RawSocket {
    let descriptor: Int32
    let port: Int

    static func listening() throws -> RawSocket {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return RawSocket(descriptor: descriptor, port: Int(UInt16(bigEndian: address.sin_port)))
    }

    static func connect(host: String, port: Int) throws -> RawSocket {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        return RawSocket(descriptor: descriptor, port: port)
    }

    /// Sends `request` verbatim on a new connection and returns everything the server sends
    /// back until it closes the connection (or 10 s pass).
    static func exchange(_ request: String, port: Int) async throws -> String {
        try await converse(request, port: port, seconds: 10).reply
    }

    /// Sends `text` on a new connection, then reads until the server closes it (`closed`) or
    /// `seconds` pass without it doing so.
    static func converse(_ text: String, port: Int, seconds: Int) async throws -> (closed: Bool, reply: String) {
        try await converse(pieces: [text], pause: .zero, port: port, seconds: seconds)
    }

    /// Sends `pieces` on a new connection, each in a write of its own after `pause` (so that the
    /// server reads them apart), then reads as ``converse(_:port:seconds:)`` does.
    static func converse(
        pieces: [String],
        pause: Duration,
        port: Int,
        seconds: Int
    ) async throws -> (closed: Bool, reply: String) {
        try await onOwnThread {
            let socket = try RawSocket.connect(host: "127.0.0.1", port: port)
            defer { close(socket.descriptor) }
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            for (index, piece) in pieces.enumerated() {
                if index > 0 { usleep(UInt32(pause / .microseconds(1))) }
                let bytes = Array(piece.utf8)
                _ = bytes.withUnsafeBytes { send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            var reply = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = recv(socket.descriptor, &buffer, buffer.count, 0)
                if count == 0 { return (true, String(decoding: reply, as: UTF8.self)) }
                if count < 0 { return (errno == ECONNRESET, String(decoding: reply, as: UTF8.self)) }
                reply += buffer[..<count]
            }
        }
    }
}
