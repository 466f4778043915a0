import Foundation
import StreamCacheTesting
import Testing

/// Suites that run one at a time: each starts servers, browsers and clients of its own, and side
/// by side they crowded the tests beside them on a 2-core machine.
@Suite(.serialized) enum OneSuiteAtATime {}

extension OneSuiteAtATime {
    /// Input StreamCache does not choose, against the built binary: names from URLs, short paths,
    /// pages opened through the proxy, index rows, words from playlists, addresses of this
    /// machine, the offline library's folders.
    @Suite(.timeLimit(.minutes(3))) struct UntrustedInputTests {
        /// Every file name taken from a URL is its last path segment as written: percent-encoded
        /// slashes and dots stay in the name, the query is no part of it, and the write stays in the
        /// folder named (`get -O` the current one, `export URL FOLDER/` that folder).
        @Test func fileNamesFromURLsStayInTheirFolder() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let names: [(path: String, file: String?)] = [
                ("ok/..%2f.bashrc", "..%2f.bashrc"),
                ("ok/%2Fetc%2Fpwn4", "%2Fetc%2Fpwn4"),
                ("a/x?y=..", "x"),
                ("a/%2e%2e", "%2e%2e"),
                ("a/%00name", "%00name"),
                ("a/..", nil),
                ("a/", nil),
            ]
            var script: [String: Any] = [:]
            for (path, _) in names { script["/" + path] = ["status": 200, "size": 3000] }
            let origin = try await ScriptedOrigin(script, in: workspace)
            let parent = workspace.outputDirectory
            for (index, (path, file)) in names.enumerated() {
                let folder = parent + "/get\(index)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let got = try await CLI.run(
                    ["get", "-O", origin.url(path)],
                    cacheDir: workspace.cacheDirectory,
                    in: folder
                )
                let written = try FileManager.default.contentsOfDirectory(atPath: folder)
                if let file {
                    #expect(got.status == 0, "\(path): \(got.stderr)")
                    #expect(written == [file], "\(path): wrote \(written)")
                    let whole = workspace.read(folder + "/" + file) == ScriptedOrigin.body(size: 3000)
                    #expect(whole, "\(path): wrong bytes")
                } else {
                    #expect(got.status == 23 && got.stderr.contains("names no file"), "\(path): \(got.stderr)")
                    #expect(written.isEmpty, "\(path): wrote \(written)")
                }
                let exportFolder = parent + "/export\(index)"
                try FileManager.default.createDirectory(atPath: exportFolder, withIntermediateDirectories: true)
                let exported = try await CLI.run(
                    ["export", origin.url(path), exportFolder + "/"],
                    cacheDir: workspace.cacheDirectory
                )
                let exportedNames = try FileManager.default.contentsOfDirectory(atPath: exportFolder)
                if let file {
                    #expect(
                        exported.status == 0 && exportedNames == [file],
                        "\(path): \(exported.stderr) \(exportedNames)"
                    )
                } else {
                    #expect(exported.status != 0 && exportedNames.isEmpty, "\(path): \(exported.stderr)")
                }
            }
            // Nothing appeared beside the folders the commands wrote in.
            let besides = try FileManager.default.contentsOfDirectory(atPath: parent)
                .filter { !$0.hasPrefix("get") && !$0.hasPrefix("export") && !$0.hasPrefix("script-") }
            #expect(besides.isEmpty, "written outside the folders: \(besides)")
            #expect(!FileManager.default.fileExists(atPath: "/etc/pwn4"))
        }

        /// One-character relative paths (`-o x`, `--cache-dir c`, `export URL e`) are paths like any
        /// other: Foundation's `deletingLastPathComponent` traps on them on Linux.
        @Test func oneCharacterPathsWork() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let data = TestData.bytes(count: 20_000, seed: 5001)
            try workspace.write(data, as: "a.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let folder = workspace.outputDirectory
            let cases: [(arguments: [String], file: String)] = [
                (["get", origin.url("a.bin"), "-o", "x"], "x"),
                (["get", origin.url("a.bin"), "-o", "./y", "--cache-dir", "c"], "y"),
                (["export", origin.url("a.bin"), "e", "--cache-dir", "d/"], "e"),
            ]
            for (arguments, file) in cases {
                let result = try await CLI.run(arguments, cacheDir: nil, in: folder)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                let whole = workspace.read(folder + "/" + file) == data
                #expect(whole, "\(arguments): wrong bytes")
            }
            #expect(FileManager.default.fileExists(atPath: folder + "/c/index.sqlite"))
            let proxy = try await ListeningProcess(["serve", "--cache-dir", "c"], in: folder)
            let reply = try await Curl.fetch(proxy.url(origin.url("a.bin")))
            let served = reply.status == 200 && Array(reply.body) == data
            #expect(served, "\(reply.status)")
            try await proxy.stop()
        }

        /// An HTML page or an SVG image opened through the proxy would run as the proxy's own web
        /// origin, and its same-origin requests read any other local service through it. Every
        /// answer is sandboxed: in a real browser, the page's script does not run.
        @Test func aPageOpenedThroughTheProxyCannotReadOtherServices() async throws {
            guard let browser = Browser.path else {
                Issue.record("no chromium on PATH: .ci/run installs it")
                return
            }
            let workspace = Workspace()
            defer { workspace.remove() }
            let secret = "TOPSECRET-\(UInt32.random(in: 1000...999_999))"
            let service = try await ScriptedOrigin(
                ["/secret": ["status": 200, "text": secret, "headers": [["Content-Type", "text/plain"]]]],
                in: workspace
            )
            let steal = "fetch('/\(service.url("secret"))').then(r => r.text())"
            let page = """
                <html><body><p id="out">idle</p><script>
                \(steal).then(t => { document.getElementById('out').textContent = 'READ:' + t })
                </script></body></html>
                """
            let image = """
                <svg xmlns="http://www.w3.org/2000/svg"><script>
                \(steal).then(t => document.documentElement.setAttribute('data-read', t))
                </script></svg>
                """
            let origin = try await ScriptedOrigin(
                [
                    "/page.html": ["status": 200, "text": page, "headers": [["Content-Type", "text/html"]]],
                    "/image.svg": ["status": 200, "text": image, "headers": [["Content-Type", "image/svg+xml"]]],
                ],
                in: workspace
            )
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            // Each opened once in the browser; the answers from the cache are checked below.
            for name in ["page.html", "image.svg"] {
                let dom = try await Browser.dumpDOM(browser, proxy.url(origin.url(name)))
                #expect(!dom.contains(secret), "\(name): the page read another service: \(dom)")
            }
            #expect(try await service.requests("secret").isEmpty, "the service was reached through the proxy")
            // Every kind of answer carries the sandbox: cold, warm, a range, the origin's 404 passed
            // on, a refusal.
            let urls = [
                proxy.url(origin.url("page.html")), proxy.url(origin.url("nope")),
                proxy.url("file:///etc/passwd"),
            ]
            for (url, range) in [(urls[0], nil), (urls[0], "bytes=0-9"), (urls[1], nil), (urls[2], nil)] {
                let reply = try await Curl.fetch(url, headers: range.map { ["Range: \($0)"] } ?? [])
                #expect(
                    reply.headers["content-security-policy"] == "sandbox",
                    "\(url) \(range ?? ""): \(reply.headers)"
                )
                #expect(reply.headers["x-content-type-options"] == "nosniff", "\(url)")
            }
            try await proxy.stop()
        }

        /// Values a valid index may hold but StreamCache never writes: a negative length, a range
        /// to `Int64.max`, a length shorter than the ranges, a line break in an ETag, text where a
        /// number belongs. Every command goes on, and `get` still writes the origin's bytes.
        @Test func anIndexWithValuesItNeverWritesCrashesNothing() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let size = 300_000
            let origin = try await ScriptedOrigin(
                ["/a.bin": ["status": 200, "size": size, "headers": [["ETag", "\"v1\""]]]],
                in: workspace
            )
            let edits = [
                "UPDATE resource SET length = -5, lastModified = char(13) || char(10)",
                "UPDATE cachedRange SET \"end\" = 9223372036854775807",
                "UPDATE resource SET length = 0",
                "UPDATE resource SET length = 100, etag = '\"v1\"' || char(10) || 'X-Injected: 1'",
                "UPDATE resource SET length = 'many'; UPDATE cachedRange SET start = 'x'",
            ]
            for edit in edits {
                let cache = workspace.cacheDirectory + "/" + String(edit.hashValue, radix: 36)
                let first = try await CLI.run(
                    ["get", origin.url("a.bin"), "-o", workspace.output("first")],
                    cacheDir: cache
                )
                #expect(first.status == 0, "\(first.stderr)")
                let sql = try await Tool.run(
                    "python3",
                    [
                        "-c",
                        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()",
                        cache + "/index.sqlite", edit,
                    ]
                )
                #expect(sql.status == 0, "\(edit): \(sql.stderr)")
                for arguments in [["ls"], ["ls", "--json"], ["verify"]] {
                    let listed = try await CLI.run(arguments, cacheDir: cache)
                    #expect(
                        listed.status == 0 || listed.status == 1,
                        "\(edit): \(arguments) \(listed.status) \(listed.stderr)"
                    )
                    #expect(!listed.stderr.contains("crashed"), "\(edit): \(arguments) \(listed.stderr)")
                }
                let again = try await CLI.run(
                    ["get", origin.url("a.bin"), "-o", workspace.output("again")],
                    cacheDir: cache
                )
                #expect(again.status == 0, "\(edit): \(again.stderr)")
                let whole = workspace.read(workspace.output("again")) == ScriptedOrigin.body(size: size)
                #expect(whole, "\(edit): wrong bytes")
                let proxy = try await ListeningProcess(["serve"], cacheDir: cache)
                let reply = try await Curl.fetch(proxy.url(origin.url("a.bin")))
                let served = reply.status == 200 && Array(reply.body) == ScriptedOrigin.body(size: size)
                #expect(served, "\(edit): \(reply.status)")
                try await proxy.stop()
            }
        }

        /// Names, languages and codecs from a playlist are the origin's words: an escape sequence
        /// among them is shown as text, never sent to the terminal.
        @Test func terminalEscapesFromPlaylistsAreShownAsText() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let escape = "\u{1B}]0;pwned\u{07}\u{1B}[2J"
            let master = """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="x\(escape)",LANGUAGE="en\(escape)",URI="audio.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=100000,CODECS="mp4a.40.2\(escape)",AUDIO="a"
                video.m3u8

                """
            let media = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\u{1B}[31mred\nseg.ts\n#EXT-X-ENDLIST\n"
            try workspace.write(Array(master.utf8), as: "master.m3u8")
            try workspace.write(Array(media.utf8), as: "video.m3u8")
            try workspace.write(Array(media.utf8), as: "audio.m3u8")
            try workspace.write(TestData.bytes(count: 1000, seed: 5002), as: "seg.ts")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let runs = [
                ["hls", "inspect", origin.url("master.m3u8")],
                ["hls", "download", origin.url("master.m3u8"), "--dry-run"],
                ["hls", "download", origin.url("master.m3u8")],
                ["hls", "ls"],
            ]
            for arguments in runs {
                let result = try await CLI.run(arguments, cacheDir: workspace.cacheDirectory)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                let bytes = result.stdout + Data(result.stderr.utf8)
                #expect(!bytes.contains(0x1B) && !bytes.contains(0x07), "\(arguments) printed a control character")
            }
        }

        /// The proxy refuses origin URLs that point at itself in any spelling the resolver takes:
        /// on a dual-stack listener `[::ffff:127.0.0.1]` reached it, and a redirect to it looped.
        @Test func everySpellingOfThisMachineOnTheListenersPortIsRefused() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let proxy = try await ListeningProcess(["serve", "--host", "::"], cacheDir: workspace.cacheDirectory)
            let port = proxy.port
            let loopTarget = "http://[::ffff:127.0.0.1]:\(port)/http://127.0.0.1:1/self-loop"
            let origin = try await OriginProcess(
                directory: workspace.originDirectory,
                arguments: ["--redirect", "/self-loop=\(loopTarget)"]
            )
            let looped = try await Curl.fetch(proxy.url(origin.url("self-loop")))
            #expect(looped.status == 502, "\(looped.status)")
            #expect(try await origin.stats().requests.count == 1, "the loop went on")
            let spellings = [
                "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:0:0:1]", "127.1", "2130706433", "0x7f000001",
                "0.0.0.0", "[::]", "localhost.",
            ]
            for name in spellings {
                let direct = try await Curl.fetch(proxy.url("http://\(name):\(port)/x"))
                #expect(direct.status == 400, "\(name): \(direct.status)")
            }
            #expect(proxy.process.isRunning)
            try await proxy.stop()
        }

        /// The offline library holds URLs with tokens and keys: its folders are the user's alone, a
        /// library others can write is refused, and a link planted in a package leads nowhere.
        @Test func theOfflineLibraryIsPrivateAndFollowsNoLink() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let media = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg.ts\n#EXT-X-ENDLIST\n"
            try workspace.write(Array(media.utf8), as: "media.m3u8")
            try workspace.write(TestData.bytes(count: 5000, seed: 5003), as: "seg.ts")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let library = workspace.output("library")
            let downloaded = try await CLI.run(
                ["hls", "download", origin.url("media.m3u8"), "--library", library],
                cacheDir: workspace.cacheDirectory
            )
            #expect(downloaded.status == 0, "\(downloaded.stderr)")
            let id = downloaded.output.split(separator: "\n").last.map(String.init) ?? ""
            let names = FileManager.default.enumerator(atPath: library)?.compactMap { $0 as? String } ?? []
            #expect(!names.isEmpty)
            for name in [""] + names {
                var status = stat()
                #expect(lstat(library + "/" + name, &status) == 0)
                #expect(
                    status.st_mode & 0o077 == 0,
                    "\(name) is open to others: \(String(status.st_mode & 0o777, radix: 8))"
                )
            }
            // A segment replaced by a link to a file outside the package.
            let segment = names.first { $0.hasSuffix(".ts") } ?? ""
            #expect(!segment.isEmpty, "\(names)")
            unlink(library + "/" + segment)
            #expect(symlink("/etc/passwd", library + "/" + segment) == 0)
            let proxy = try await ListeningProcess(["serve", "--library", library], cacheDir: workspace.cacheDirectory)
            let relative = segment.split(separator: "/").dropFirst().joined(separator: "/")
            let reply = try await Curl.fetch(proxy.url("offline/\(id)/\(relative)"))
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("root:"), "served /etc/passwd")
            try await proxy.stop()

            let open = workspace.output("open-library")
            try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
            chmod(open, 0o777)
            let refused = try await CLI.run(
                ["hls", "download", origin.url("media.m3u8"), "--library", open],
                cacheDir: workspace.cacheDirectory
            )
            #expect(refused.status != 0 && refused.stderr.contains("other users can write"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        }
    }

    /// Faults in the middle of an answer: the data file cut short while its bytes are being sent.
    @Suite(.timeLimit(.minutes(3))) struct MidAnswerFaultTests {
        /// A cached 20 MB file read at 2 MB/s, its data file truncated to 1 MB a second in: the
        /// answer ends, the connection closes, and the server does not spin. Through the warm path
        /// (a plain read) and the responder (a conditional read it answers itself).
        @Test(arguments: [false, true]) func aDataFileCutDuringAnAnswerEndsIt(throughTheResponder: Bool) async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let size = 20_000_000
            let data = try await onOwnThread { TestData.bytes(count: size, seed: 5004) }
            try workspace.write(data, as: "big.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let cached = try await CLI.run(
                ["get", origin.url("big.bin"), "-o", "/dev/null"],
                cacheDir: workspace.cacheDirectory
            )
            #expect(cached.status == 0, "\(cached.stderr)")
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let file = workspace.dataFiles().first ?? ""
            let output = workspace.output("read")
            var arguments = ["-s", "-o", output, "-w", "%{size_download}", "--limit-rate", "2M", "--max-time", "30"]
            if throughTheResponder { arguments += ["-H", "If-None-Match: \"other\""] }
            let reader = Task { try await Tool.run("curl", arguments + [proxy.url(origin.url("big.bin"))]) }
            // Cut once the answer is under way (2 MB read), timed on a thread of its own.
            let before = try await onOwnThread { () -> Double? in
                var info = stat()
                for _ in 0..<2000 {
                    if stat(output, &info) == 0, info.st_size >= 2_000_000 { break }
                    usleep(10_000)
                }
                guard info.st_size >= 2_000_000, info.st_size < size else { return nil }
                return truncate(file, 1_000_000) == 0 ? Self.cpuSeconds(of: proxy.process.processIdentifier) : nil
            }
            let read = try await reader.value
            #expect(before != nil, "the file could not be cut during the answer")
            let spent = Self.cpuSeconds(of: proxy.process.processIdentifier) - (before ?? 0)
            let received = Int(read.output) ?? -1
            #expect(read.status != 28, "the answer never ended (curl timed out after \(received) bytes)")
            #expect(spent < 2, "the server spent \(spent) s of CPU after the cut")
            if received == size {
                // Sent whole, then every byte must be the origin's.
                let same = try await onOwnThread { workspace.read(output) == data }
                #expect(same, "wrong bytes")
            }
            #expect(proxy.process.isRunning)
            try await proxy.stop()
        }

        /// User and system CPU seconds a process has used (`/proc/PID/stat`).
        static func cpuSeconds(of pid: Int32) -> Double {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { return 0 }
            let fields = text[text.index(after: close)...].split(separator: " ")
            // After the name: state is field 3; utime and stime are fields 14 and 15.
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    /// What a server holds is bounded whatever it is asked: descriptors, parsed playlists; and what
    /// it notes (access times) reaches the index while it runs.
    @Suite(.timeLimit(.minutes(3))) struct BoundedResourcesTests {
        /// 1,500 distinct small resources from 8 clients at once, under a limit of 512 open files
        /// the server may not raise: every answer is a 200.
        @Test func thousandsOfSmallResourcesFitUnderTheCommonDescriptorLimit() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let count = 1500
            try await onOwnThread {
                for index in 0..<count {
                    try workspace.write(TestData.bytes(count: 1000, seed: UInt64(index)), as: "s\(index).bin")
                }
            }
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory, openFileLimit: 512)
            let clients = 8
            let statuses = try await withThrowingTaskGroup(of: [String].self) { group in
                for client in 0..<clients {
                    let urls = stride(from: client, to: count, by: clients).map { proxy.url(origin.url("s\($0).bin")) }
                    group.addTask {
                        let outputs = urls.flatMap { ["-o", "/dev/null", $0] }
                        let result = try await Tool.run("curl", ["-s", "-w", "%{http_code}\\n"] + outputs)
                        return result.output.split(separator: "\n").map(String.init)
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let failed = statuses.filter { $0 != "200" }
            #expect(
                statuses.count == count && failed.isEmpty,
                "\(failed.count) of \(statuses.count) answers were not 200: \(Set(failed))"
            )
            try await proxy.stop()
        }

        /// Out of descriptors, the listener waits before it accepts again instead of spinning: 400
        /// idle connections to a server limited to 256 open files, and it uses little CPU while they
        /// stay open, and answers again once they are gone.
        @Test func aListenerOutOfDescriptorsBacksOff() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            try workspace.write(TestData.bytes(count: 1000, seed: 5007), as: "a.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory, openFileLimit: 256)
            let script = """
                import socket, sys, time
                held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(400)]
                print("open", flush=True)
                time.sleep(4)
                """
            let pid = proxy.process.processIdentifier
            let holder = Task { try await Tool.run("python3", ["-c", script, String(proxy.port)]) }
            let spent = try await onOwnThread { () -> Double in
                usleep(1_000_000)
                let before = MidAnswerFaultTests.cpuSeconds(of: pid)
                usleep(2_000_000)
                return MidAnswerFaultTests.cpuSeconds(of: pid) - before
            }
            let held = try await holder.value
            #expect(held.output.contains("open"), "\(held.stderr)")
            #expect(spent < 0.5, "the server spent \(spent) s of CPU in 2 s with idle connections")
            let reply = try await Curl.fetch(proxy.url(origin.url("a.bin")))
            #expect(reply.status == 200)
            try await proxy.stop()
        }

        /// A 16 MB playlist of 1.25 million one-character segments is refused with one line by
        /// `hls inspect` and with a 502 by `serve`, whose memory stays far below what the entries
        /// would take.
        @Test func aPlaylistOfMillionsOfEntriesIsRefusedWithoutTheMemory() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            // Made by another process: building 16 MB line by line here would hold one of the few
            // threads every test runs on.
            let made = try await Tool.run(
                "python3",
                [
                    "-c",
                    "import sys; open(sys.argv[1], 'w').write('#EXTM3U\\n#EXT-X-TARGETDURATION:1\\n'"
                        + " + '#EXTINF:1,\\na\\n' * 1250000 + '#EXT-X-ENDLIST\\n')",
                    workspace.originDirectory + "/huge.m3u8",
                ]
            )
            #expect(made.status == 0, "\(made.stderr)")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let inspected = try await CLI.run(
                ["hls", "inspect", origin.url("huge.m3u8")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(inspected.status != 0 && inspected.stderr.contains("lines"), "\(inspected.stderr)")
            #expect(inspected.stderr.split(separator: "\n").count == 1, "\(inspected.stderr)")
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let reply = try await Curl.fetch(proxy.url(origin.url("huge.m3u8")))
            #expect(reply.status == 502, "\(reply.status)")
            let status = try String(contentsOfFile: "/proc/\(proxy.process.processIdentifier)/status", encoding: .utf8)
            let peak =
                status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            #expect(peak > 0 && peak < 250_000, "serve peaked at \(peak) kB")
            try await proxy.stop()
        }

        /// Reads answered by a running server reach the index's access times within seconds, so
        /// another process's eviction works from the real order.
        @Test func accessTimesAreWrittenWhileTheServerRuns() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            try workspace.write(TestData.bytes(count: 100_000, seed: 5005), as: "old.bin")
            try workspace.write(TestData.bytes(count: 100_000, seed: 5006), as: "new.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            for name in ["old.bin", "new.bin"] {
                let got = try await CLI.run(
                    ["get", origin.url(name), "-o", "/dev/null"],
                    cacheDir: workspace.cacheDirectory
                )
                #expect(got.status == 0, "\(got.stderr)")
            }
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let reply = try await Curl.fetch(proxy.url(origin.url("old.bin")), headers: ["Range: bytes=0-999"])
            #expect(reply.status == 206)
            _ = try await onOwnThread { usleep(3_000_000) }
            struct Listed: Decodable { let url: String }
            let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
            let urls = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources.map(\.url)
            #expect(urls.first == origin.url("old.bin"), "most recently used first: \(urls)")
            try await proxy.stop()
        }
    }

    /// Disks that change under a read.
    @Suite(.timeLimit(.minutes(3))) struct ChangingGroundTests {
        /// `rm --all` on a full disk while `serve` reads a cached file: the files it holds open are
        /// emptied too, so space is freed and every row goes.
        @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
        func rmAllFreesSpaceOnAFullDiskWhileServeHoldsFiles() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let disk = try Tmpfs(megabytes: 8)
            defer { disk.unmount() }
            try workspace.write(TestData.bytes(count: 3_000_000, seed: 5008), as: "held.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let got = try await CLI.run(["get", origin.url("held.bin"), "-o", "/dev/null"], cacheDir: disk.path)
            #expect(got.status == 0, "\(got.stderr)")
            let proxy = try await ListeningProcess(["serve"], cacheDir: disk.path)
            // A slow player keeps the file open through the whole test.
            let reader = Task {
                try await Tool.run(
                    "curl",
                    [
                        "-s", "-o", "/dev/null", "--limit-rate", "100K", "--max-time", "20",
                        proxy.url(origin.url("held.bin")),
                    ]
                )
            }
            _ = try await onOwnThread { usleep(1_000_000) }
            try disk.fill()
            let freeBefore = disk.freeBytes
            let removed = try await CLI.run(["rm", "--all"], cacheDir: disk.path)
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(disk.freeBytes > freeBefore + 1_000_000, "rm --all freed \(disk.freeBytes - freeBefore) bytes")
            let listed = try await CLI.run(["ls"], cacheDir: disk.path)
            #expect(listed.output.hasPrefix("0 resource"), "\(listed.output)")
            reader.cancel()
            try await proxy.stop()
            _ = try? await reader.value
        }
    }

    /// How `serve` passes on what the origin says, as a cache does (RFC 9111).
    @Suite(.timeLimit(.minutes(2))) struct OriginAnswersPassedOnTests {
        /// A `5xx` reaches the player as it came, after one request: the player decides whether to
        /// ask again (`get` and downloads retry on their own).
        @Test(arguments: [500, 502, 503, 504]) func anErrorStatusIsAskedOnce(status: Int) async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(
                ["/down": ["status": status, "body": "origin says \(status)\n", "headers": [["Retry-After", "7"]]]],
                in: workspace
            )
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let reply = try await Curl.fetch(proxy.url(origin.url("down")))
            #expect(reply.status == status, "\(reply.status)")
            #expect(String(decoding: reply.body, as: UTF8.self) == "origin says \(status)\n")
            #expect(reply.headers["retry-after"] == "7", "\(reply.headers)")
            let asked = try await origin.requests("down").count
            #expect(asked == 1, "the origin was asked \(asked) times for one request")
            let got = try await CLI.run(
                ["get", origin.url("down"), "-o", workspace.output("x")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 22, "\(got.stderr)")
            #expect(try await origin.requests("down").count > 2, "get did not retry")
            try await proxy.stop()
        }
    }

    /// Bytes written over a cached file by something else while the cache has it open are never
    /// served: every byte sent from a data file was checked after its last change.
    @Suite(.timeLimit(.minutes(3))) struct OverwrittenWhileOpenTests {
        @Test func zerosWrittenOverAnOpenFileAreNeverServed() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let size = 4_194_304
            let data = try await onOwnThread { TestData.bytes(count: size, seed: 5009) }
            try workspace.write(data, as: "a.bin")
            let origin = try await OriginProcess(directory: workspace.originDirectory)
            let cached = try await CLI.run(
                ["get", origin.url("a.bin"), "-o", "/dev/null"],
                cacheDir: workspace.cacheDirectory
            )
            #expect(cached.status == 0, "\(cached.stderr)")
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let url = proxy.url(origin.url("a.bin"))
            // Opened, and warm: the session and the warm path hold the file.
            #expect(try await Curl.fetch(url, headers: ["Range: bytes=0-999"]).status == 206)
            let file = workspace.dataFiles().first ?? ""
            let zeroed = try await Tool.run(
                "python3",
                [
                    "-c", "import os,sys; f=os.open(sys.argv[1], os.O_WRONLY); os.pwrite(f, bytes(1048576), 1048576)",
                    file,
                ]
            )
            #expect(zeroed.status == 0, "\(zeroed.stderr)")
            var wrong = 0
            var answered = 0
            var ranges: [(Int, Int)] = [
                (1_048_576, 1_049_575), (1_500_000, 1_500_999), (0, size - 1), (1_048_000, 2_100_000),
            ]
            for index in 0..<16 {
                let first = 1_048_576 + index * 60_000
                ranges.append((first, first + 70_000))
            }
            for (first, last) in ranges {
                let reply = try await Curl.fetch(url, headers: ["Range: bytes=\(first)-\(last)"])
                guard reply.status == 206 || reply.status == 200, reply.body.count == last - first + 1 else { continue }
                answered += 1
                let body = reply.body
                let expected = Array(data[first...last])
                wrong += try await onOwnThread { zip(body, expected).filter { $0 != $1 }.count }
            }
            #expect(wrong == 0, "\(wrong) wrong bytes in \(answered) whole answers")
            // Then the cache heals: the bad block is fetched again.
            let whole = try await Curl.fetch(url)
            let healed = try await onOwnThread { whole.status == 200 && Array(whole.body) == data }
            #expect(healed, "\(whole.status)")
            #expect(proxy.process.isRunning)
            try await proxy.stop()
        }
    }
}

/// Headless Chromium, as a user's browser opens a page.
enum Browser {
    /// `chromium` (or `chromium-browser`) on `PATH`.
    static var path: String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
                return "\(folder)/\(name)"
            }
        }
        return nil
    }

    /// The document of `url` once its scripts have had 5 s of virtual time.
    static func dumpDOM(_ browser: String, _ url: String) async throws -> String {
        let profile = NSTemporaryDirectory() + "chromium-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try await Tool.run(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
                "--virtual-time-budget=5000", "--dump-dom", url,
            ],
            timeout: .seconds(60)
        )
        return String(decoding: result.stdout, as: UTF8.self)
    }
}
