import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A small resource without validators, cached whole, is checked by its bytes: the check asks for
/// up to 64 KiB, and where the answer holds all of a new version, that answer is the new version's
/// first fetch. A live playlist costs one request a change, not two; whatever the new version's
/// size or the origin's way with ranges, a read gets the new bytes and no old one.
@Suite(.timeLimit(.minutes(2))) struct ChangedVersionFetchTests {
    /// How the resource changes between two reads.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        /// A live playlist with a segment more.
        case grows
        /// The same length, other bytes: nothing but the bytes tells.
        case sameLength
        /// Shorter than the cached version.
        case shrinks
        /// Past what the check asks for: it cannot bring it all.
        case growsPastTheCheck
        /// From an origin that answers every range with the whole body.
        case ignoringRange

        var testDescription: String { rawValue }

        var old: [UInt8] { TestData.bytes(count: 2_000, seed: 90) }

        var new: [UInt8] {
            switch self {
            case .grows, .ignoringRange: old + TestData.bytes(count: 100, seed: 91)
            case .sameLength: TestData.bytes(count: 2_000, seed: 92)
            case .shrinks: Array(TestData.bytes(count: 1_500, seed: 93))
            case .growsPastTheCheck: old + TestData.bytes(count: 80_000, seed: 94)
            }
        }

        var faults: [OriginFault] { self == .ignoringRange ? [.noValidators, .ignoreRange] : [.noValidators] }

        /// The requests a read after the change costs.
        var requests: Int { self == .growsPastTheCheck ? 2 : 1 }
    }

    @Test(arguments: Change.allCases)
    func aChangedVersionComesWithItsCheck(change: Change) async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: change.faults))
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(change.old, at: "/live.m3u8")
        let url = fixture.origin.url("/live.m3u8")
        let engine = try fixture.engine { $0.revalidationInterval = .zero }
        #expect(try await readAll(engine, url) == change.old)

        fixture.origin.setResource(change.new, at: "/live.m3u8")
        fixture.origin.resetStatistics()
        let read = try await readAll(engine, url)
        #expect(read.count == change.new.count && read == change.new, "\(read.count) bytes, not the new version's")
        let ranges = fixture.origin.statistics.requests.map(\.range)
        #expect(ranges.count == change.requests, "\(ranges)")

        // Stored: the next read is checked and finds it current.
        fixture.origin.resetStatistics()
        #expect(try await readAll(engine, url) == change.new)
        await engine.shutdown()
    }

    /// The answer stands for a request from the first byte to the last or past it, made within
    /// a second of it: a later fetch asks the origin.
    @Test func aCheckedBodyAnswersAWholeRequestMadeAtOnce() {
        let head = OriginResponseHead(status: 200, headers: [], url: URL(string: "http://origin.test/a.m3u8")!)
        let received = ContinuousClock.now
        let body = CheckedBody(head: head, bytes: [UInt8](repeating: 1, count: 100), receivedAt: received)
        #expect(body.answers(first: 0, last: nil, now: received))
        #expect(body.answers(first: 0, last: 99, now: received + .milliseconds(500)))
        #expect(body.answers(first: 0, last: 65_535, now: received))
        #expect(!body.answers(first: 0, last: 98, now: received))
        #expect(!body.answers(first: 1, last: nil, now: received))
        #expect(!body.answers(first: 0, last: nil, now: received + .seconds(1)))
    }
}
