import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// Ranges of a resource that is all in the cache, which `serve` answers on its event loops
/// (a buffer for small ranges, `sendfile` for large ones), checked byte for byte and against
/// the order, closing and logging rules of every other response.
@Suite(.timeLimit(.minutes(5))) struct CacheHitTests {
    @Test(arguments: [UInt64(1), 2])
    func warmRangesAreExactAtRandomOffsetsSizesAndMoments(seed: UInt64) async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let size = 6_000_000
        let data = TestData.bytes(count: size, seed: 700 + seed)
        try setup.workspace.write(data, as: "a.bin")
        let whole = try await Curl.fetch(setup.url("a.bin"))
        #expect([UInt8](whole.body) == data)
        let fetched = try await setup.origin.stats().bodyBytes

        var random = SeededRandom(seed: seed)
        // Small ranges (a buffer), ranges around the 64 KiB line, large ones (sendfile), open
        // ends and suffixes; four readers at once, starting at random moments, one pause long
        // enough for the idle session to close in between.
        var plans: [(delay: Int, range: String)] = []
        for index in 0..<80 {
            let first = Int.random(in: 0..<size, using: &random)
            let length = [1, 4096, 65_535, 65_536, 65_537, Int.random(in: 1...3_000_000, using: &random)][index % 6]
            let range: String
            switch index % 10 {
            case 8: range = "bytes=\(first)-"
            case 9: range = "bytes=-\(length)"
            default: range = "bytes=\(first)-\(first + length - 1)"
            }
            plans.append((Int.random(in: 0...40, using: &random) + (index == 40 ? 2_500 : 0), range))
        }
        let url = setup.url("a.bin")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<4 {
                let lanePlans = plans.enumerated().filter { $0.offset % 4 == lane }.map(\.element)
                group.addTask {
                    for plan in lanePlans {
                        try await Task.sleep(for: .milliseconds(plan.delay))
                        let reply = try await Curl.fetch(url, headers: ["Range: \(plan.range)"])
                        let expected = try #require(
                            RangeSpecifier.parse(plan.range)?.first?.resolve(length: Int64(size))
                        )
                        #expect(reply.status == 206, "\(plan.range)")
                        #expect(
                            reply.headers["content-range"]
                                == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/\(size)",
                            "\(plan.range)"
                        )
                        let same =
                            [UInt8](reply.body) == Array(data[Int(expected.lowerBound)..<Int(expected.upperBound)])
                        #expect(same, "wrong bytes for \(plan.range)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await setup.origin.stats().bodyBytes == fetched, "warm ranges went to the origin")
    }

    @Test func pipelinedRequestsAreAnsweredInTheirOrder() async throws {
        let setup = try await ProxySetup(originArguments: ["--latency", "400"])
        defer { setup.remove() }
        try setup.workspace.write(Array(String(repeating: "warm ", count: 20).utf8), as: "warm.txt")
        try setup.workspace.write(Array(String(repeating: "cold ", count: 20).utf8), as: "cold.txt")
        _ = try await Curl.fetch(setup.url("warm.txt"))
        let host = "Host: 127.0.0.1:\(setup.proxy.port)\r\n"
        func get(_ name: String, range: String) -> String {
            "GET /\(setup.origin.url(name)) HTTP/1.1\r\n\(host)Range: bytes=\(range)\r\n\r\n"
        }
        // A cold request (400 ms at the origin), then warm ones behind it on the same connection.
        let requests =
            get("cold.txt", range: "0-9") + get("warm.txt", range: "0-9") + get("warm.txt", range: "5-14")
            + "GET /\(setup.origin.url("warm.txt")) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n"
        let reply = try await RawSocket.converse(requests, port: setup.proxy.port, seconds: 10)
        #expect(reply.closed)
        let bodies = reply.reply.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(10) }
        #expect(bodies.count == 4)
        #expect(Array(bodies.prefix(3)) == ["cold cold ", "warm warm ", "warm warm "], "\(reply.reply)")
    }

    /// More pipelined requests than the responder queues (16) before it stops reading: every one
    /// is answered, in order, cold and warm alike.
    @Test func manyPipelinedRequestsAreAllAnsweredInTheirOrder() async throws {
        let setup = try await ProxySetup(originArguments: ["--latency", "20"])
        defer { setup.remove() }
        for name in 0..<40 {
            try setup.workspace.write(Array(String(format: "file %02d ", name).utf8), as: "\(name).txt")
        }
        // Every other file is warm.
        for name in stride(from: 0, to: 40, by: 2) { _ = try await Curl.fetch(setup.url("\(name).txt")) }
        let host = "Host: 127.0.0.1:\(setup.proxy.port)\r\n"
        let requests = (0..<40).map { name in
            "GET /\(setup.origin.url("\(name).txt")) HTTP/1.1\r\n\(host)\(name == 39 ? "Connection: close\r\n" : "")\r\n"
        }.joined()
        let reply = try await RawSocket.converse(requests, port: setup.proxy.port, seconds: 20)
        #expect(reply.closed)
        let bodies = reply.reply.components(separatedBy: "\r\n\r\n").dropFirst().map { String($0.prefix(7)) }
        #expect(bodies == (0..<40).map { String(format: "file %02d", $0) }, "\(reply.reply.prefix(400))")
    }

    /// A player's range arrives in one read and is answered before the HTTP decoder reads it. A
    /// head in pieces goes to the decoder, and so does the rest of the connection: the bytes
    /// after a piece are the same request's (here a field's value goes on with what looks like
    /// a new request), never a request of their own.
    @Test func aHeadInPiecesIsOneRequestEvenWhenItsLastPieceLooksLikeAWholeOne() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let letters = (0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let digits = (0..<200_000).map { UInt8(ascii: "0") + UInt8($0 % 7) }
        try setup.workspace.write(letters, as: "letters.txt")
        try setup.workspace.write(digits, as: "digits.txt")
        for name in ["letters.txt", "digits.txt"] {
            // A day old: their copies are fresh for a while (RFC 9111 §4.2.2), so the cache answers them.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -86_400)],
                ofItemAtPath: setup.workspace.originDirectory + "/" + name
            )
        }
        _ = try await Curl.fetch(setup.url("letters.txt"))
        _ = try await Curl.fetch(setup.url("digits.txt"))
        let host = "Host: 127.0.0.1:\(setup.proxy.port)\r\n"
        let pieces = [
            "GET /\(setup.origin.url("letters.txt")) HTTP/1.1\r\n\(host)Range: bytes=0-99\r\n\r\n",
            "GET /\(setup.origin.url("digits.txt")) HTTP/1.1\r\nX-Pad: 1",
            "GET /\(setup.origin.url("letters.txt")) HTTP/1.1\r\n\(host)Range: bytes=1000-1099\r\n"
                + "Connection: close\r\n\r\n",
        ]
        let reply = try await RawSocket.converse(
            pieces: pieces,
            pause: .milliseconds(200),
            port: setup.proxy.port,
            seconds: 10
        )
        #expect(reply.closed)
        let answers = HTTPReplies.split(reply.reply)
        #expect(answers.map(\.status) == [206, 206], "\(reply.reply.prefix(600))")
        // Answered on the event loop (which sends no `Date`), as the last piece would have been alone.
        #expect(!reply.reply.lowercased().contains("date:"), "\(reply.reply.prefix(600))")
        #expect(answers.first?.body == String(decoding: letters[0..<100], as: UTF8.self))
        #expect(
            answers.last?.body == String(decoding: digits[1000..<1100], as: UTF8.self),
            "the pieces were not one request"
        )
    }

    @Test func anHTTP10ClientIsClosedAfterItsWarmResponseUnlessItAskedToKeepIt() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let data = Array(String(repeating: "0123456789", count: 10_000).utf8)
        try setup.workspace.write(data, as: "a.txt")
        _ = try await Curl.fetch(setup.url("a.txt"))
        let target = "/" + setup.origin.url("a.txt")
        let host = "Host: 127.0.0.1:\(setup.proxy.port)\r\n"
        for range in ["0-9", "0-99999"] {
            _ = try await Curl.fetch(setup.url("a.txt"), headers: ["Range: bytes=0-0"])
            let request = "GET \(target) HTTP/1.0\r\n\(host)Range: bytes=\(range)\r\n\r\n"
            let reply = try await RawSocket.converse(request, port: setup.proxy.port, seconds: 5)
            #expect(reply.closed, "HTTP/1.0 \(range): still open after 5 s")
            // The version the responder answers with when the session had closed in between.
            #expect(
                reply.reply.hasPrefix("HTTP/1.0 206") || reply.reply.hasPrefix("HTTP/1.1 206"),
                "\(reply.reply.prefix(40))"
            )
            let body = reply.reply.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            #expect(body == String(decoding: data[bounds[0]...bounds[1]], as: UTF8.self), "HTTP/1.0 \(range)")
        }
        // With keep-alive the connection stays, and an HTTP/1.0 answer says it does.
        _ = try await Curl.fetch(setup.url("a.txt"), headers: ["Range: bytes=0-0"])
        let request = "GET \(target) HTTP/1.0\r\n\(host)Connection: keep-alive\r\nRange: bytes=0-9\r\n\r\n"
        let kept = try await RawSocket.converse(request, port: setup.proxy.port, seconds: 2)
        #expect(!kept.closed, "closed although the client asked to keep the connection")
        #expect(kept.reply.hasSuffix("\r\n\r\n0123456789"), "\(kept.reply)")
        if kept.reply.hasPrefix("HTTP/1.0") {
            #expect(kept.reply.lowercased().contains("connection: keep-alive"), "\(kept.reply)")
        }
    }

    @Test func aPlayerThatHangsUpInALargeWarmResponseIsLoggedAndTheNextIsServed() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let log = workspace.output("access.log")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve", "--access-log", log], cacheDir: workspace.cacheDirectory)
        let data = TestData.bytes(count: 16_000_000, seed: 720)
        try workspace.write(data, as: "a.bin")
        let url = proxy.url(origin.url("a.bin"))
        _ = try await Curl.fetch(url, headers: ["Range: bytes=0-0"])
        _ = try await Curl.fetch(url)
        // A player that reads 64 KB of the warm file and goes (a seek).
        let request = "GET /\(origin.url("a.bin")) HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n"
        try await onOwnThread {
            let socket = try RawSocket.connect(host: "127.0.0.1", port: proxy.port)
            var size: Int32 = 4096
            setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            _ = Array(request.utf8).withUnsafeBytes {
                send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            _ = recv(socket.descriptor, &buffer, buffer.count, Int32(MSG_WAITALL))
            close(socket.descriptor)
        }
        let reply = try await Curl.fetch(url, headers: ["Range: bytes=1000000-1999999"])
        #expect(reply.status == 206 && [UInt8](reply.body) == Array(data[1_000_000..<2_000_000]))
        try await proxy.stop()
        let entries = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("#")
        }
        try #require(entries.count == 4, "\(entries)")
        #expect(entries[2].hasSuffix(" client-went-away"), "\(entries[2])")
        // The warm range: 1,000,000 bytes sent, all of them from the cache.
        #expect(entries[3].contains(" 206 1000000 1000000 0 "), "\(entries[3])")
    }
}

/// The answers one connection carried, each by its `Content-Length`.
enum HTTPReplies {
    static func split(_ text: String) -> [(status: Int, body: String)] {
        var answers: [(status: Int, body: String)] = []
        var rest = Substring(text)
        while let end = rest.range(of: "\r\n\r\n") {
            let head = rest[..<end.lowerBound].lowercased()
            let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = rest[end.upperBound...].prefix(length)
            answers.append((status, String(body)))
            rest = rest[end.upperBound...].dropFirst(length)
        }
        return answers
    }
}
