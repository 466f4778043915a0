import Foundation
import StreamCacheTesting
import Testing

/// What `serve` asks of the origin for requests that need the resource's length or validators
/// before their bytes: a HEAD, a suffix range and an If-Range. The first learns them with one
/// 2-byte request, as AVFoundation does; nothing else costs a request for bytes already cached.
/// (The test origin's files were modified a moment ago, so they are stale at once and each reuse
/// is checked with a conditional request, RFC 9111 §4.2.2: a 304, no body.)
@Suite(.timeLimit(.minutes(3))) struct OriginRequestCountTests {
    @Test func headSuffixAndIfRangeCostNoExtraOriginRequest() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let data = TestData.bytes(count: 100_000, seed: 300)
        try setup.workspace.write(data, as: "a.bin")
        func requests() async throws -> [ListeningProcess.Stats.Request] {
            let all = try await setup.origin.stats().requests
            #expect(all.filter { $0.status == 304 }.allSatisfy { $0.bodyBytes == 0 })
            return all.filter { $0.status != 304 }
        }

        let head = try await Curl.fetch(setup.url("a.bin"), method: "HEAD")
        #expect(head.status == 200 && head.headers["content-length"] == "100000")
        #expect(try await requests().map(\.range) == ["bytes=0-1"], "a cold HEAD asks only for 2 bytes")

        let suffix = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=-1000"])
        #expect(suffix.status == 206 && [UInt8](suffix.body) == Array(data.suffix(1000)))
        #expect(try await requests().map(\.range) == ["bytes=0-1", "bytes=99000-99999"])

        let etag = try #require(head.headers["etag"])
        let ifRange = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=-500", "If-Range: \(etag)"])
        #expect(ifRange.status == 206 && [UInt8](ifRange.body) == Array(data.suffix(500)))
        let again = try await Curl.fetch(setup.url("a.bin"), method: "HEAD")
        #expect(again.status == 200)
        #expect(try await requests().count == 2, "cached bytes and a known length cost no origin request for bytes")
    }
}
