import Foundation
import StreamCacheTesting
import Testing

/// An origin that ignores `Range` and sends its `200` chunked, with no length: a `200` from the
/// proxy must carry the whole body, and a length is learned, never guessed.
@Suite(.timeLimit(.minutes(2))) struct UnknownLengthTests {
    static let data = TestData.bytes(count: 300_000, seed: 510)

    func setUp() async throws -> ProxySetup {
        let setup = try await ProxySetup(originArguments: ["--fault", "ignore-range", "--fault", "no-length"])
        try setup.workspace.write(Self.data, as: "a.bin")
        return setup
    }

    /// `curl -r 0-1` got `200 OK` with a 2-byte body: the read started for `0-1` was reused for the
    /// whole-body answer.
    @Test func aRangeAnsweredWholeCarriesTheWholeBody() async throws {
        let setup = try await setUp()
        defer { setup.remove() }
        let reply = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=0-1"])
        if reply.status == 200 {
            let whole = [UInt8](reply.body) == Self.data
            #expect(whole, "a 200 with \(reply.body.count) of \(Self.data.count) bytes")
        } else {
            #expect(reply.status == 206 && [UInt8](reply.body) == Array(Self.data[0..<2]))
        }
        let again = try await Curl.fetch(setup.url("a.bin"), headers: ["Range: bytes=1000-1999"])
        #expect(again.status == 206 || again.status == 200)
        let expected = again.status == 206 ? Array(Self.data[1000..<2000]) : Self.data
        let right = [UInt8](again.body) == expected
        #expect(right, "\(again.status) with \(again.body.count) bytes")
    }

    /// `curl -I` got `Content-Length: 0`.
    @Test func aHeadLearnsTheLength() async throws {
        let setup = try await setUp()
        defer { setup.remove() }
        let head = try await Curl.fetch(setup.url("a.bin"), method: "HEAD")
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == String(Self.data.count))
        let whole = try await Curl.fetch(setup.url("a.bin"))
        let right = whole.status == 200 && [UInt8](whole.body) == Self.data
        #expect(right, "\(whole.status) with \(whole.body.count) bytes")
    }
}
