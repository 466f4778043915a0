import Foundation
import Testing

@testable import StreamCache

/// ``CacheConfiguration/fetchAheadLimit``: a fetch asks for no more once the nearest reader that
/// wants its bytes is further behind it than the limit, and goes on while one is near; without
/// a limit it runs at the origin's speed.
@Suite struct FetchAheadLimitTests {
    typealias Machine = ResourceStateMachine

    /// A reader at byte 0 of a 100,000-byte resource whose first request of 1,000 bytes has been
    /// answered and written; the reader has read up to `readTo`. Returns what the fetch does next.
    private func afterFirstSpan(limit: Int64?, readTo: Int64) throws -> Machine.BodyEndAction {
        var machine = Machine.ofNewResource(firstFetchSpan: 1000, fetchAheadLimit: limit)
        let now = ContinuousClock.now
        let reader = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let request) = machine.read(reader, at: 0, now: now) else {
            Issue.record("no fetch started")
            throw CancellationError()
        }
        let info = ContentInfo(length: 100_000, etag: "\"a\"")
        _ = machine.answered(
            request.fetch,
            .partial(range: ByteRange(0, 1000), info: info),
            sentIfRange: false,
            now: now
        )
        _ = machine.received(request.fetch, count: 1000, now: now)
        _ = machine.wrote(request.fetch, now: now)
        if readTo > 0 {
            guard case .deliver = machine.read(reader, at: readTo, now: now) else {
                Issue.record("the written bytes were not delivered")
                throw CancellationError()
            }
        }
        return machine.bodyEnded(request.fetch)
    }

    @Test func aFetchFarAheadOfItsReaderAsksForNoMore() throws {
        guard case .finish = try afterFirstSpan(limit: 500, readTo: 0) else {
            Issue.record("a fetch 1,000 bytes ahead of its reader asked for more under a limit of 500")
            return
        }
    }

    @Test func aFetchNearItsReaderGoesOn() throws {
        guard case .request(let next) = try afterFirstSpan(limit: 500, readTo: 600) else {
            Issue.record("a fetch 400 bytes ahead of its reader stopped under a limit of 500")
            return
        }
        #expect(next.first == 1000)
    }

    @Test func withoutALimitAFetchRunsAhead() throws {
        guard case .request = try afterFirstSpan(limit: nil, readTo: 0) else {
            Issue.record("a fetch without a limit stopped")
            return
        }
    }
}
