import Foundation
import StreamCache

/// What the ``TestOrigin`` sent, per request and per path, so tests can assert "each byte once".
public struct OriginStatistics: Sendable, Hashable, Codable {
    /// One answered request.
    public struct Request: Sendable, Hashable, Codable {
        public var path: String
        public var range: String?
        public var status: Int
        /// Body bytes actually written to the connection.
        public var bodyBytes: Int64
        /// The request's header fields, as `Name: value`.
        public var headers: [String] = []
    }

    /// Every request answered, in order of completion.
    public var requests: [Request] = []
    /// Body bytes sent, over all requests.
    public var bodyBytes: Int64 = 0
    /// Body bytes sent that had been sent before (same path, same offset).
    public var duplicateBytes: Int64 = 0
    /// Requests being answered right now (a body still being sent).
    public var activeRequests = 0

    var sentRanges: [String: RangeSetBox] = [:]

    enum CodingKeys: String, CodingKey { case requests, bodyBytes, duplicateBytes, activeRequests }

    /// Body bytes sent for `path`.
    public func bodyBytes(path: String) -> Int64 {
        requests.filter { $0.path == path }.reduce(0) { $0 + $1.bodyBytes }
    }
}

/// A `ByteRangeSet` in a hashable, codable-neutral box (only the counters are encoded).
struct RangeSetBox: Sendable, Hashable {
    var set = ByteRangeSet()
}

/// Thread-safe accumulation of ``OriginStatistics``.
final class StatisticsRecorder: Sendable {
    private let statistics = Locked(OriginStatistics())

    var snapshot: OriginStatistics { statistics.value }

    /// The statistics once no request is being answered, or after `limit`: a request is counted
    /// once its answer's last write returns, which can be a moment after its client has read
    /// the answer and gone (a tool that exits at a third `503`), so a test that asks right then
    /// would miss it.
    func settled(within limit: Duration) async -> OriginStatistics {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline, statistics.withLock({ $0.activeRequests > 0 }) {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return snapshot
    }

    func reset() { statistics.withLock { $0 = OriginStatistics() } }

    /// Records body bytes `range` of `path` as sent.
    func sent(path: String, range: ByteRange) {
        guard !range.isEmpty else { return }
        statistics.withLock { statistics in
            var box = statistics.sentRanges[path] ?? RangeSetBox()
            let before = box.set.count
            box.set.insert(range)
            statistics.duplicateBytes += range.count - (box.set.count - before)
            statistics.sentRanges[path] = box
            statistics.bodyBytes += range.count
        }
    }

    func began() { statistics.withLock { $0.activeRequests += 1 } }

    func ended() { statistics.withLock { $0.activeRequests -= 1 } }

    func finished(_ request: OriginStatistics.Request) {
        statistics.withLock { $0.requests.append(request) }
    }
}
