import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// `streamcache serve` in front of `streamcache origin`, driven by curl, ffprobe, ffmpeg and raw
/// sockets, and compared with nginx serving the same files.
@Suite(.timeLimit(.minutes(5))) struct ProxyTests {
    @Test(.enabled(if: LinuxTools.nginx, "nginx is not at /usr/sbin/nginx"))
    func rangeAnswersMatchNginxColdAndWarm() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let nginx = try await NginxProcess(root: setup.workspace.originDirectory)
        for size in [1, 1000, 3_000_001] {
            let ranges: [String?] = [
                nil, "bytes=0-0", "bytes=0-", "bytes=0-99", "bytes=10-20", "bytes=500-", "bytes=-1", "bytes=-500",
                "bytes=-99999999", "bytes=\(size - 1)-", "bytes=\(size / 2)-\(size / 2 + 100_000)",
                "bytes=1-999999999",
            ]
            let data = TestData.bytes(count: size, seed: UInt64(size))
            for (index, range) in ranges.enumerated() {
                // Satisfiable ranges only: a 416 body is nginx's HTML page.
                if let range, case .from(let first, _)? = RangeSpecifier.parse(range)?.first, first >= size { continue }
                // One file per request, so the first answer of each is cold.
                let name = "f\(size)-\(index).bin"
                try setup.workspace.write(data, as: name)
                let headers = range.map { ["Range: \($0)"] } ?? []
                let expected = try await Curl.fetch(nginx.url(name), headers: headers)
                for pass in ["cold", "warm"] {
                    let reply = try await Curl.fetch(setup.url(name), headers: headers)
                    let label = "\(pass) \(range ?? "no range") on \(size) bytes"
                    #expect(reply.status == expected.status, "\(label)")
                    #expect(reply.headers["content-range"] == expected.headers["content-range"], "\(label)")
                    #expect(reply.headers["content-length"] == expected.headers["content-length"], "\(label)")
                    #expect(reply.headers["accept-ranges"] == "bytes", "\(label)")
                    #expect(reply.body == expected.body, "\(label)")
                }
            }
        }
    }

    @Test func unsatisfiableInvalidAndSeveralRanges() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let data = TestData.bytes(count: 10_000, seed: 60)
        try setup.workspace.write(data, as: "a.bin")
        for range in ["bytes=10000-", "bytes=99999999999999999999-", "bytes=-0"] {
            let reply = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: \(range)"])
            #expect(reply.status == 416, "\(range)")
            #expect(reply.headers["content-range"] == "bytes */10000", "\(range)")
        }
        for range in ["bytes=5-1", "bytes=abc", "items=0-5", "bytes=0-1,5-9"] {
            let reply = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: \(range)"])
            #expect(reply.status == 200, "\(range)")
            #expect(reply.headers["content-length"] == "10000", "\(range)")
            #expect([UInt8](reply.body) == data, "\(range)")
        }
        let head = try await Curl.fetch(setup.url("a.bin"), method: "HEAD")
        #expect(head.status == 200 && head.headers["content-length"] == "10000")
        let etag = try #require(head.headers["etag"])
        let matching = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=0-9", "If-Range: \(etag)"])
        #expect(matching.status == 206 && [UInt8](matching.body) == Array(data[0...9]))
        let stale = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=0-9", "If-Range: \"old\""])
        #expect(stale.status == 200 && [UInt8](stale.body) == data)
    }

    @Test func originFailuresAndErrorStatuses() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let missing = try await Curl.fetch(setup.url("missing.mp3"))
        #expect(missing.status == 404)
        let dead = try RefusingPort()
        let unreachable = try await Curl.fetch(setup.proxy.url(dead.url("a.mp3")))
        #expect(unreachable.status == 502)
        #expect(String(decoding: unreachable.body, as: UTF8.self).split(separator: "\n").count == 1)
        // An error status is never cached: once the file exists, it is served.
        try setup.workspace.write(TestData.bytes(count: 100, seed: 61), as: "missing.mp3")
        #expect(try await Curl.fetch(setup.url("missing.mp3")).status == 200)
    }

    @Test func refusesForeignHostsOtherSchemesAndOtherAddresses() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try setup.workspace.write(TestData.bytes(count: 1000, seed: 62), as: "a.bin")
        let foreign = try await Curl.fetch(setup.url("a.bin"), headers: ["Host: evil.example:\(setup.proxy.port)"])
        #expect(foreign.status == 403)
        let wrongPort = try await Curl.fetch(setup.url("a.bin"), headers: ["Host: 127.0.0.1:1"])
        #expect(wrongPort.status == 403)
        #expect(
            try await Curl.fetch(setup.url("a.bin"), headers: ["Host: localhost:\(setup.proxy.port)"]).status == 200
        )
        for target in ["file:///etc/passwd", "ftp://example.com/a.mp3", "gopher://x/", "javascript:alert(1)"] {
            #expect(try await Curl.fetch(setup.proxy.url(target)).status == 400, "\(target)")
        }
        // Another address of this machine reaches nothing: the proxy is bound to loopback only.
        let addresses = try await Tool.run("hostname", ["-I"]).output.split(separator: " ")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { $0.contains(".") && !$0.hasPrefix("127.") }
        for address in addresses {
            #expect(!canConnect(host: address, port: setup.proxy.port), "reachable on \(address)")
        }
    }

    @Test func badRequestsGetA4xxAndTheServerGoesOn() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try setup.workspace.write(TestData.bytes(count: 1000, seed: 63), as: "a.bin")
        let host = "Host: 127.0.0.1:\(setup.proxy.port)"
        let origin = setup.origin.url("a.bin")
        let requests: [(String, String)] = [
            ("GARBAGE\r\n\r\n", "400"),
            ("GET\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\n\(host)\r\nBad Header\r\n\r\n", "400"),
            // The HTTP parser knows no such method: 400 before the proxy sees it.
            ("BREW /\(origin) HTTP/1.1\r\n\(host)\r\n\r\n", "400"),
            ("DELETE /\(origin) HTTP/1.1\r\n\(host)\r\n\r\n", "405"),
            ("GET /\(origin) HTTP/1.1\r\n\r\n", "400"),
            (
                "GET /\(origin.replacingOccurrences(of: "/a.bin", with: "/../../etc/passwd")) HTTP/1.1\r\n\(host)\r\n\r\n",
                "400"
            ),
            (
                "GET /\(origin.replacingOccurrences(of: "/a.bin", with: "/%2e%2e/%2E%2e/etc/passwd")) HTTP/1.1\r\n\(host)\r\n\r\n",
                "400"
            ),
            ("GET /http://user:secret@127.0.0.1:1/a HTTP/1.1\r\n\(host)\r\n\r\n", "400"),
            ("GET /\(origin) HTTP/1.1\r\n\(host)\r\nRange: bytes=99999999999999999999-\r\n\r\n", "416"),
            ("GET /\(origin)%0d%0aInjected:%20yes HTTP/1.1\r\n\(host)\r\n\r\n", "404"),
            ("GET /../../../etc/passwd HTTP/1.1\r\n\(host)\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\n\(host)\r\n\r\n", "200"),  // the page that says how to use it
        ]
        for (request, status) in requests {
            let reply = try await RawSocket.exchange(
                request.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"),
                port: setup.proxy.port
            )
            #expect(
                reply.hasPrefix("HTTP/1.1 \(status)"),
                "\(request.debugDescription) -> \(reply.prefix(80).debugDescription)"
            )
            #expect(!reply.contains("Injected"))
        }
        #expect(try await Curl.fetch(setup.url("a.bin")).status == 200, "the proxy stopped answering")
        // Nothing but the index, numbered data files and the marks of running processes in the
        // cache directory.
        let files =
            FileManager.default.enumerator(atPath: setup.workspace.cacheDirectory)?.allObjects as? [String] ?? []
        for file in files {
            let allowed =
                file == "data" || file.hasPrefix("index.sqlite")
                || (file.hasPrefix("data/") && Int(file.dropFirst(5)) != nil)
                || file == "owners" || (file.hasPrefix("owners/") && UUID(uuidString: String(file.dropFirst(7))) != nil)
            #expect(allowed, "unexpected file \(file) in the cache directory")
        }
    }

    @Test func aClientThatHangsUpStopsTheOriginFetch() async throws {
        let setup = try await ProxySetup(originArguments: ["--rate", "100M"])
        defer { setup.remove() }
        let path = setup.workspace.originDirectory + "/big.bin"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let result = try await Tool.run("sh", ["-c", "curl -s '\(setup.url("big.bin"))' | head -c 1048576 | wc -c"])
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1048576")
        try await Task.sleep(for: .seconds(2))
        let sent = try await setup.origin.stats().bodyBytes
        #expect(sent < 64 << 20, "the origin sent \(sent) bytes for a client that read 1 MiB")
        try await Task.sleep(for: .seconds(1))
        #expect(try await setup.origin.stats().bodyBytes == sent, "the origin fetch went on after the client left")
    }

    @Test func ffprobeAndFfmpegPlayThroughTheProxyAndASecondPlayIsFree() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let directory = setup.workspace.originDirectory
        let make = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=8",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=8", "-c:v", "libx264", "-preset", "ultrafast",
                "-c:a", "aac", "-shortest", directory + "/video.mp4",
            ]
        )
        #expect(make.status == 0, "\(make.stderr)")
        let audio = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=12",
                "-c:a", "libmp3lame", "-b:a", "128k", directory + "/episode.mp3",
            ]
        )
        #expect(audio.status == 0, "\(audio.stderr)")
        for (name, duration) in [("video.mp4", 8.0), ("episode.mp3", 12.0)] {
            let probe = try await Tool.run(
                "ffprobe",
                ["-v", "error", "-show_entries", "format=format_name,duration", "-of", "json", setup.url(name)]
            )
            #expect(probe.status == 0, "\(probe.stderr)")
            let json = try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any]
            let format = json?["format"] as? [String: Any]
            let seconds = Double(format?["duration"] as? String ?? "") ?? 0
            #expect(abs(seconds - duration) < 0.5, "\(name): \(probe.output)")
            let seek = try await Tool.run(
                "ffmpeg",
                [
                    "-hide_banner", "-v", "error", "-ss", "\(duration / 2)", "-i", setup.url(name), "-t", "1", "-f",
                    "null", "-",
                ]
            )
            #expect(seek.status == 0 && seek.stderr.isEmpty, "\(name) seek: \(seek.stderr)")
            let play = try await Tool.run(
                "ffmpeg",
                ["-hide_banner", "-v", "error", "-i", setup.url(name), "-f", "null", "-"]
            )
            #expect(play.status == 0 && play.stderr.isEmpty, "\(name) play: \(play.stderr)")
            let before = try await setup.origin.stats().bodyBytes
            let again = try await Tool.run(
                "ffmpeg",
                ["-hide_banner", "-v", "error", "-i", setup.url(name), "-f", "null", "-"]
            )
            #expect(again.status == 0)
            #expect(
                try await setup.origin.stats().bodyBytes == before,
                "\(name): a second play fetched from the origin"
            )
        }
    }

    @Test func accessLogCountsCacheAndOriginBytesAndSigtermStops() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let log = workspace.output("access.log")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve", "--access-log", log], cacheDir: workspace.cacheDirectory)
        try workspace.write(TestData.bytes(count: 200_000, seed: 64), as: "a.bin")
        let url = proxy.url(origin.url("a.bin"))
        _ = try await Curl.fetch(url, headers: ["Range: bytes=0-99999"])
        _ = try await Curl.fetch(url)
        try await proxy.stop()
        #expect(proxy.process.terminationStatus == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains("#Version: 1.0"))
        let fields = try #require(lines.first { $0.hasPrefix("#Fields: ") }).dropFirst(9).split(separator: " ")
        let entries = lines.filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ") }
        try #require(entries.count == 2 && entries.allSatisfy { $0.count == fields.count })
        func value(_ entry: [Substring], _ name: String) -> String {
            String(entry[fields.firstIndex(of: Substring(name))!])
        }
        #expect(value(entries[0], "sc-status") == "206" && value(entries[0], "x-origin-bytes") == "100000")
        #expect(value(entries[1], "sc-status") == "200" && value(entries[1], "x-cache-bytes") == "100000")
        #expect(value(entries[1], "x-origin-bytes") == "100000" && value(entries[1], "sc-bytes") == "200000")
    }
}
