import Foundation
import StreamCacheTesting
import Testing

extension OneSuiteAtATime {
    /// An origin that sends a new `ETag` with every response and no `Last-Modified` (one tag per
    /// server behind a balancer, or per request): the cache tells a new tag on the same bytes from
    /// a new file by the bytes it already holds, so a read goes on under the new tag, and a file
    /// that really changed is never joined to the old one.
    @Suite(.timeLimit(.minutes(3))) struct RetaggingOriginTests {
        static let size = 6_000_000

        static func script(changingBytes: Bool) -> [String: Any] {
            [
                "/e.bin": [
                    "size": size, "etagPerResponse": true, "bodyPerResponse": changingBytes,
                    "headers": [["Content-Type", "application/octet-stream"]],
                ]
            ]
        }

        @Test func theSameBytesUnderNewTagsAreReadToTheEnd() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(Self.script(changingBytes: false), in: workspace)
            let expected = ScriptedOrigin.body(size: Self.size)

            let got = try await CLI.run(
                ["get", origin.url("e.bin"), "-o", workspace.output("e.bin")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
            let file = workspace.read(workspace.output("e.bin"))
            let fileIsRight = file == expected
            #expect(fileIsRight, "\(file?.count ?? 0) bytes, not the resource")

            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory + "-serve")
            let whole = try await Curl.fetch(proxy.url(origin.url("e.bin")))
            #expect(whole.status == 200)
            let wholeIsRight = Array(whole.body) == expected
            #expect(wholeIsRight, "\(whole.body.count) bytes, not the resource")
            // A player that seeks past what is cached: the bytes before its start are compared,
            // and the answer is the new tag's.
            let seek = try await Curl.fetch(proxy.url(origin.url("e.bin")), headers: ["Range: bytes=4000000-"])
            #expect(seek.status == 206)
            let seekIsRight = Array(seek.body) == Array(expected[4_000_000...])
            #expect(seekIsRight, "not the resource's bytes")
            try await proxy.stop()
        }

        /// With no freshness, every reuse is checked; the check meets another tag, and the bytes
        /// at the start it asked for along with its condition tell the rest: the cached ones, and
        /// the cached copy is served, the origin sending no more than them; others, and the cached
        /// copy is never served again.
        @Test(arguments: [false, true]) func aRevalidationTellsANewTagByTheBytes(changingBytes: Bool) async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(Self.script(changingBytes: false), in: workspace)
            let expected = ScriptedOrigin.body(size: Self.size)
            let first = try await CLI.run(
                ["get", origin.url("e.bin"), "-o", workspace.output("first.bin")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(first.status == 0, "\(first.stderr)")
            let before = try await origin.requests("e.bin").count
            if changingBytes { try origin.rescript(Self.script(changingBytes: true)) }

            let output = workspace.output("second.bin")
            let second = try await CLI.run(
                ["get", origin.url("e.bin"), "-o", output],
                cacheDir: workspace.cacheDirectory
            )
            let requests = try await origin.requests("e.bin").dropFirst(before)
            let sent = requests.reduce(Int64(0)) { $0 + $1.bodyBytes }
            #expect(requests.first?.conditional == true, "the second run did not revalidate")
            let file = workspace.read(output)
            if changingBytes {
                let servedTheOldCopy = file == expected
                #expect(!servedTheOldCopy, "the cached copy was served for new bytes")
                #expect(sent > 64 << 10, "new bytes under a new tag were not fetched")
            } else {
                #expect(second.status == 0, "\(second.stderr)")
                let isTheFile = file == expected
                #expect(isTheFile, "\(file?.count ?? 0) bytes, not the file")
                // The first 64 KiB and three spread samples of 16 KiB (``VersionSamples``).
                #expect(sent <= 112 << 10, "the second run cost the origin \(sent) bytes")
            }
        }

        @Test func newBytesUnderANewTagAreNeverJoinedToTheOld() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(Self.script(changingBytes: true), in: workspace)

            let got = try await CLI.run(
                ["get", origin.url("e.bin"), "-o", workspace.output("e.bin")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status != 0)
            #expect(got.stderr.contains("changed"), "\(got.stderr)")
            #expect(!FileManager.default.fileExists(atPath: workspace.output("e.bin")))

            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory + "-serve")
            let output = workspace.output("played.bin")
            let played = try await Tool.run("curl", ["-s", "-o", output, proxy.url(origin.url("e.bin"))])
            // Cut short rather than spliced (curl: 18, a partial answer): every byte that came
            // is of one version.
            let body = workspace.read(output) ?? []
            #expect(played.status == 18 && body.count < Self.size, "curl \(played.status), \(body.count) bytes")
            let shift = (1...40).first { shift in
                body.enumerated().allSatisfy { $0.element == UInt8(($0.offset + shift) % 251) }
            }
            #expect(shift != nil, "the answer mixes versions")
            try await proxy.stop()
        }
    }
}
