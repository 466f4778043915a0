import Foundation
import StreamCacheTesting
import Testing

/// Two answers are one version only if a strong validator or their bytes say so: a resource
/// without validators is checked by its bytes, and ranges under tags that prove nothing join the
/// cached ones only where the bytes they overlap are the same.
@Suite(.timeLimit(.minutes(4))) struct VersionProofTests {
    /// What a file's bytes are after `changes` (``ScriptedOrigin``'s `shift` and `flip`).
    static func body(size: Int, shift: Int = 0, flip: [Int] = []) -> [UInt8] {
        var body = (0..<size).map { UInt8(($0 + shift) % 251) }
        for offset in flip { body[offset] ^= 0xFF }
        return body
    }

    /// An origin that sends no `ETag`, no `Last-Modified` and no `Cache-Control` replaces a file
    /// by one of the same length: the next `get` and the next play through `serve` have the new
    /// bytes, whether all of them changed or only the last few.
    @Test(arguments: [(16, false), (100_000, false), (100_000, true), (3_000_000, false), (3_000_000, true)])
    func aFileWithoutValidatorsIsToldByItsBytes(size: Int, onlyTheEnd: Bool) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let plain: [String: Any] = ["size": size, "headers": [["Content-Type", "application/octet-stream"]]]
        let origin = try await ScriptedOrigin(["/f.bin": plain], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory + "-serve")

        let first = try await CLI.run(
            ["get", origin.url("f.bin"), "-o", workspace.output("first.bin")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(first.status == 0, "\(first.stderr)")
        let played = try await Curl.fetch(proxy.url(origin.url("f.bin")))
        let playedIsTheFile = Array(played.body) == Self.body(size: size)
        #expect(playedIsTheFile)

        var changed = plain
        if onlyTheEnd { changed["flip"] = [size - 2] } else { changed["shift"] = 7 }
        try origin.rescript(["/f.bin": changed])
        let expected = onlyTheEnd ? Self.body(size: size, flip: [size - 2]) : Self.body(size: size, shift: 7)

        let second = try await CLI.run(
            ["get", origin.url("f.bin"), "-o", workspace.output("second.bin")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(second.status == 0, "\(second.stderr)")
        let secondIsNew = workspace.read(workspace.output("second.bin")) == expected
        #expect(secondIsNew, "get wrote the old bytes")
        let playedAgain = try await Curl.fetch(proxy.url(origin.url("f.bin")))
        let playedIsNew = Array(playedAgain.body) == expected
        #expect(playedIsNew, "serve answered with the old bytes")
        // And the new bytes are what is cached now.
        let third = try await CLI.run(
            ["get", origin.url("f.bin"), "-o", workspace.output("third.bin")],
            cacheDir: workspace.cacheDirectory
        )
        let thirdIsNew = workspace.read(workspace.output("third.bin")) == expected
        #expect(thirdIsNew, "\(third.stderr)")
        try await proxy.stop()
    }

    /// Unchanged bytes without validators cost a check of samples, not the file again.
    @Test func anUnchangedFileWithoutValidatorsIsCheckedBySamples() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 3_000_000
        let origin = try await ScriptedOrigin(["/f.bin": ["size": size]], in: workspace)
        for name in ["first.bin", "second.bin"] {
            let got = try await CLI.run(
                ["get", origin.url("f.bin"), "-o", workspace.output(name)],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
            let isTheFile = workspace.read(workspace.output(name)) == Self.body(size: size)
            #expect(isTheFile)
        }
        let sent = try await origin.requests("f.bin").reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(sent < Int64(size) + (256 << 10), "checking the copy cost the origin \(sent) bytes")
    }

    /// An origin that answers every range with a `206` under a new tag, whatever `If-Range` says,
    /// and no `Last-Modified`: each range after the first asks again for cached bytes before it,
    /// and joins them as the same bytes; a file read whole through `serve` comes whole.
    @Test func rangesUnderRotatingTagsJoinByTheBytesTheyOverlap() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 20_000_000
        let script: [String: Any] = ["size": size, "etagPerResponse": true, "ignoresIfRange": true]
        let origin = try await ScriptedOrigin(["/r.bin": script], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let output = workspace.output("r.bin")
        let played = try await Tool.run("curl", ["-s", "-o", output, proxy.url(origin.url("r.bin"))])
        #expect(played.status == 0, "curl \(played.status)")
        let body = workspace.read(output) ?? []
        #expect(body.count == size)
        let isTheFile = body == Self.body(size: size)
        #expect(isTheFile, "not the file's bytes")
        try await proxy.stop()
    }

    /// The same origin with other bytes in every answer: an answer is cut short rather than
    /// spliced, and every byte in it is of one version.
    @Test func rangesUnderRotatingTagsWithOtherBytesAreNeverJoined() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 6_000_000
        let script: [String: Any] = [
            "size": size, "etagPerResponse": true, "bodyPerResponse": true, "ignoresIfRange": true,
        ]
        let origin = try await ScriptedOrigin(["/r.bin": script], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let output = workspace.output("r.bin")
        _ = try await Tool.run("curl", ["-s", "-o", output, proxy.url(origin.url("r.bin"))])
        let body = workspace.read(output) ?? []
        let shift = (1...60).first { shift in
            body.enumerated().allSatisfy { $0.element == UInt8(($0.offset + shift) % 251) }
        }
        #expect(body.count < size || shift != nil, "a whole answer that is no one version")
        #expect(shift != nil, "the answer mixes versions")
        try await proxy.stop()
    }
}

/// A key rule makes one resource of URLs that differ in a token; when the content differs with
/// the token too, the bytes of one token never answer the other, fresh or stale, whatever the
/// lengths and tags say.
@Suite(.timeLimit(.minutes(4))) struct TokenContentTests {
    enum Shape: String, CaseIterable, CustomTestStringConvertible {
        /// Fresh for an hour, no validators, one length.
        case freshWithoutValidators
        /// Fresh, no validators, 2 MiB for one token and 3 MiB for the other.
        case otherLengths
        /// Each token's content under its own strong tag.
        case ownTags
        /// One tag for both tokens' content (a watermark per token), fresh.
        case sharedTagFresh
        /// The same, stale at once.
        case sharedTagStale

        var testDescription: String { rawValue }

        var script: [String: Any] {
            var entry: [String: Any] = [
                "size": 3_000_000, "shiftByQuery": "token",
                "headers": [["Content-Type", "application/octet-stream"], ["Cache-Control", "max-age=3600"]],
            ]
            switch self {
            case .freshWithoutValidators: break
            case .otherLengths: entry["sizes"] = ["a": 2 << 20, "b": 3 << 20]
            case .ownTags: entry["etagByQuery"] = "token"
            case .sharedTagFresh, .sharedTagStale:
                let age = self == .sharedTagFresh ? "max-age=3600" : "max-age=0"
                entry["headers"] = [
                    ["Content-Type", "application/octet-stream"], ["Cache-Control", age], ["ETag", "\"shared\""],
                ]
            }
            return ["/t.bin": entry]
        }

        /// The bytes the origin sends for `token`.
        func body(_ token: String) -> [UInt8] {
            let size = self == .otherLengths ? (token == "a" ? 2 << 20 : 3 << 20) : 3_000_000
            let shift = token.utf8.reduce(0) { $0 + Int($1) } % 251
            return VersionProofTests.body(size: size, shift: shift)
        }
    }

    @Test(arguments: Shape.allCases) func oneTokensBytesNeverAnswerAnother(shape: Shape) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(shape.script, in: workspace)
        let rule = try await CLI.run(["config", "--key-ignore-query", "token"], cacheDir: workspace.cacheDirectory)
        #expect(rule.status == 0, "\(rule.stderr)")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        func play(_ token: String, range: String? = nil) async throws -> [UInt8] {
            let url = proxy.url(origin.url("t.bin") + "?token=" + token)
            return Array(try await Curl.fetch(url, headers: range.map { ["Range: bytes=" + $0] } ?? []).body)
        }
        // Half of it through token a, then all of it through b: b's bytes alone.
        let half = try await play("a", range: "0-1048575")
        #expect(half == Array(shape.body("a").prefix(1 << 20)))
        let whole = try await play("b")
        let isB = whole == shape.body("b")
        #expect(isB, "token b was answered with \(whole.count) bytes that are not its own")
        // And back: a's bytes for a, b's for b, each read whole.
        let again = try await play("a")
        let isA = again == shape.body("a")
        #expect(isA, "token a was answered with \(again.count) bytes that are not its own")
        let got = try await CLI.run(
            ["get", origin.url("t.bin") + "?token=b", "-o", workspace.output("b.bin")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(got.status == 0, "\(got.stderr)")
        let wroteB = workspace.read(workspace.output("b.bin")) == shape.body("b")
        #expect(wroteB, "get wrote other bytes for token b")
        try await proxy.stop()
    }

    /// Content that is the same for every token costs a new token one small check, not the file.
    @Test func oneContentForEveryTokenIsFetchedOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let entry: [String: Any] = [
            "size": 3_000_000, "headers": [["Cache-Control", "max-age=3600"], ["ETag", "\"one\""]],
        ]
        let origin = try await ScriptedOrigin(["/t.bin": entry], in: workspace)
        _ = try await CLI.run(["config", "--key-ignore-query", "token"], cacheDir: workspace.cacheDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        for token in ["a", "b", "c"] {
            let played = try await Curl.fetch(proxy.url(origin.url("t.bin") + "?token=" + token))
            let isTheFile = Array(played.body) == VersionProofTests.body(size: 3_000_000)
            #expect(isTheFile)
        }
        let stats = try await origin.allRequests()
        let sent = stats.filter { $0.path.hasPrefix("/t.bin") }.reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(sent < 3_000_000 + 2 * (112 << 10) + 100_000, "three tokens cost the origin \(sent) bytes")
        try await proxy.stop()
    }
}
