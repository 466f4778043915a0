import Foundation
import Testing

@testable import StreamCache

extension ResourceStateMachine {
    /// A machine of a resource nothing is known of yet, asking `firstFetchSpan` bytes first and
    /// fetching at most `fetchAheadLimit` ahead of its readers (``CacheConfiguration``).
    static func ofNewResource(firstFetchSpan: Int64 = 1000, fetchAheadLimit: Int64? = nil) -> ResourceStateMachine {
        var configuration = CacheConfiguration()
        configuration.firstFetchSpan = firstFetchSpan
        configuration.fetchAheadLimit = fetchAheadLimit
        return ResourceStateMachine(
            info: ContentInfo(),
            recorded: ByteRangeSet(),
            freshUntil: nil,
            now: .now,
            settings: ResourceStateMachine.Settings(configuration)
        )
    }

    /// Adds a reader at byte 0 and returns the fetch its first read starts; `nil`, with an issue
    /// recorded, if none.
    mutating func startFirstFetch(now: Instant = .now) -> FetchRequest? {
        let reader = addReader(offset: 0, end: nil)
        guard case .startFetch(let fetch) = read(reader, at: 0, now: now) else {
            Issue.record("no fetch started")
            return nil
        }
        return fetch
    }
}
