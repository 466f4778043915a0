import Foundation
import StreamCacheTesting
import Testing

/// `python3 -m http.server`, which answers every request with the whole file (it ignores
/// `Range`), as the origin of `serve` and `get`: what it sends is kept, the log counts it, and a
/// later read of any of it costs no body.
@Suite(.timeLimit(.minutes(4))) struct RangeIgnoringOriginTests {
    @Test func everyByteOfAWholeAnswerIsKeptAndCounted() async throws {
        let setup = try await ServedFile(seed: 920)
        defer { setup.remove() }
        let (workspace, data, origin, log, proxy, url) =
            (setup.workspace, setup.data, setup.origin, setup.log, setup.proxy, setup.url)

        let first = 16_000_000
        let last = 16_999_999
        let reply = try await Curl.fetch(proxy.url(url), headers: ["Range: bytes=\(first)-\(last)"])
        #expect(reply.status == 206)
        #expect(TestData.mismatch([UInt8](reply.body), slice(data, first, last - first + 1)) == nil)
        try await proxy.stop()

        // Every byte the answer brought before the range is kept, and the log says what came.
        let listing = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let resources = try JSONDecoder().decode(ListingOf<Listed>.self, from: listing.stdout).resources
        let cached = resources.first?.cachedBytes ?? 0
        #expect(resources.first?.byteRangeAccess == false)
        let kept = resources.first?.ranges.map { [$0.offset, $0.length] }
        #expect(kept == [[0, cached]], "kept \(String(describing: kept))")
        #expect(cached > Int64(last), "only \(cached) bytes kept")
        let logged = try originBytes(inLog: log, path: "big.bin")
        #expect(logged == [cached], "the access log says \(logged) origin bytes; the cache kept \(cached)")
        let text = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory)
        #expect(text.output.contains("origin ignores ranges"), "ls: \(text.output)")

        // A read of bytes that came before the range: the origin is at most asked whether the
        // file changed (a 304, no body), never for the bytes.
        let before = origin.requests()
        let got = try await CLI.run(
            ["get", url, "--range", "5000000-5000999", "-o", workspace.output("part")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(got.status == 0, "\(got.stderr)")
        #expect(workspace.read(workspace.output("part")) == slice(data, 5_000_000, 1000))
        let later = origin.requests().dropFirst(before.count)
        #expect(later.allSatisfy { $0.hasSuffix(" 304 -") }, "the origin was asked again: \(Array(later))")
    }

    /// A player that hangs up and asks again at once (ffprobe, then ffmpeg; a seek) reads on
    /// from the whole answer the first request brought: the origin sends the file once.
    @Test func aReaderThatComesBackReadsOnFromTheSameAnswer() async throws {
        let setup = try await ServedFile(seed: 921)
        defer { setup.remove() }
        let (workspace, data, origin, log, proxy, url) =
            (setup.workspace, setup.data, setup.origin, setup.log, setup.proxy, setup.url)

        // A player reads the first 100 kB, then asks near the end, as one looking for an index
        // there does (one curl, so the second request follows at once, as a player's would).
        let (head, tail) = (workspace.output("head"), workspace.output("tail"))
        let player = try await Tool.run(
            "curl",
            ["-s", "-r", "0-99999", "-o", head, proxy.url(url), "--next", "-s", "-r", "20000000-20000999", "-o", tail]
                + [proxy.url(url)]
        )
        #expect(player.status == 0)
        #expect(workspace.read(head) == slice(data, 0, 100_000))
        #expect(workspace.read(tail) == slice(data, 20_000_000, 1000))
        try await proxy.stop()

        // Asked whether the file changed (a `304`, no body) perhaps, but for its body once.
        #expect(
            origin.requests().filter { !$0.hasSuffix(" 304 -") }.count == 1,
            "the origin was asked \(origin.requests())"
        )
        let listing = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let cached = try JSONDecoder().decode(ListingOf<Listed>.self, from: listing.stdout).resources.first?.cachedBytes
        let logged = try originBytes(inLog: log, path: "big.bin")
        #expect(
            logged.reduce(0, +) == cached,
            "the access log says \(logged) origin bytes; the cache kept \(cached ?? 0)"
        )
    }

    /// A 24 MB file of python's `http.server`, and `serve` in front of it logging to `log`.
    struct ServedFile {
        let workspace = Workspace()
        let data: [UInt8]
        let origin: PythonOrigin
        let log: String
        let proxy: ListeningProcess
        let url: String

        init(seed: UInt64) async throws {
            data = TestData.bytes(count: 24_000_000, seed: seed)
            try workspace.write(data, as: "big.bin")
            origin = try await PythonOrigin(directory: workspace.originDirectory)
            log = workspace.output("access.log")
            proxy = try await ListeningProcess(["serve", "--access-log", log], cacheDir: workspace.cacheDirectory)
            url = origin.url("big.bin")
        }

        func remove() {
            origin.stop()
            workspace.remove()
        }
    }

    /// The fields of `ls --json` this test reads.
    struct Listed: Decodable {
        struct Range: Decodable {
            let offset: Int64
            let length: Int64
        }
        let cachedBytes: Int64
        let byteRangeAccess: Bool
        let ranges: [Range]
    }

    /// The `x-origin-bytes` of each request for `path` in the W3C access log at `log`.
    func originBytes(inLog log: String, path: String) throws -> [Int64] {
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        guard let fields = lines.first(where: { $0.hasPrefix("#Fields:") })?.split(separator: " ").dropFirst(),
            let column = Array(fields).firstIndex(of: "x-origin-bytes"),
            let uri = Array(fields).firstIndex(of: "cs-uri")
        else { return [] }
        return lines.filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ") }
            .filter { $0.count > column && $0[uri].hasSuffix(path) }
            .compactMap { Int64($0[column]) }
    }
}

/// `python3 -m http.server` on a loopback port of its own choosing (it binds port 0 and says
/// which it got), serving `directory`; its request log kept.
final class PythonOrigin: Sendable {
    let process: ChildProcess
    let port: Int
    private let log: Locked<[String]>

    init(directory: String) async throws {
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", directory, "0",
        ]
        let err = Pipe()
        let out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        // "Serving HTTP on 127.0.0.1 port 43567 (http://127.0.0.1:43567/) ..."
        let serving = try await ChildOutput(out).firstLine()
        guard let word = serving.split(separator: " ").drop(while: { $0 != "port" }).dropFirst().first,
            let port = Int(word)
        else {
            process.terminate()
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.port = port
        let log = Locked<[String]>([])
        self.log = log
        let handle = err.fileHandleForReading
        Thread {
            defer { try? handle.close() }
            let descriptor = handle.fileDescriptor
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending = pending[(newline + 1)...]
                    if line.contains("\"GET ") || line.contains("\"HEAD ") { log.value.append(line) }
                }
            }
        }.start()
        guard try await isListening(port: port) else {
            process.terminate()
            throw POSIXError(.ECONNREFUSED)
        }
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// The request lines python logged so far (`… "GET /f HTTP/1.1" 200 -`).
    func requests() -> [String] { log.value }

    func stop() {
        if process.isRunning { process.terminate() }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
