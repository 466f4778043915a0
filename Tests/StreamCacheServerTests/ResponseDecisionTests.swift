import Foundation
import StreamCache
import Testing

@testable import StreamCacheServer

/// The one decision both executors carry out, run without I/O for every row of RFC 9110's range
/// and conditional cases: status, bytes and the fields a player reads.
@Suite struct ResponseDecisionTests {
    static let etag = "\"v1\""
    static let lastModified = "Sun, 22 Nov 2026 07:00:00 GMT"
    static let info = ContentInfo(length: 1000, contentType: "audio/mpeg", etag: etag, lastModified: lastModified)

    /// A request's conditional and range fields, and what the answer must be.
    struct Row: Sendable, CustomTestStringConvertible {
        var range: String? = nil
        var ifRange: String? = nil
        var ifNoneMatch: String? = nil
        var ifModifiedSince: String? = nil
        let status: Int
        /// The bytes sent, `nil` for none or the whole of an unknown length.
        var bytes: ClosedRange<Int64>? = nil
        var contentRange: String? = nil

        var testDescription: String {
            [
                range, ifRange.map { "If-Range \($0)" }, ifNoneMatch.map { "If-None-Match \($0)" },
                ifModifiedSince.map { "If-Modified-Since \($0)" },
            ]
            .compactMap { $0 }.joined(separator: ", ")
        }
    }

    static let rows: [Row] = [
        // RFC 9110 §14.2: one satisfiable range is a 206 of it.
        Row(status: 200, bytes: 0...999),
        Row(range: "bytes=0-0", status: 206, bytes: 0...0, contentRange: "bytes 0-0/1000"),
        Row(range: "bytes=10-19", status: 206, bytes: 10...19, contentRange: "bytes 10-19/1000"),
        Row(range: "bytes=990-5000", status: 206, bytes: 990...999, contentRange: "bytes 990-999/1000"),
        Row(range: "bytes=500-", status: 206, bytes: 500...999, contentRange: "bytes 500-999/1000"),
        Row(range: "bytes=-100", status: 206, bytes: 900...999, contentRange: "bytes 900-999/1000"),
        Row(range: "bytes=-5000", status: 206, bytes: 0...999, contentRange: "bytes 0-999/1000"),
        // §15.5.17: a range that starts at or past the end is a 416 naming the length.
        Row(range: "bytes=1000-", status: 416, contentRange: "bytes */1000"),
        Row(range: "bytes=-0", status: 416, contentRange: "bytes */1000"),
        // §14.2: an invalid Range, another unit or several ranges: the whole, 200.
        Row(range: "bytes=5-1", status: 200, bytes: 0...999),
        Row(range: "bytes=abc", status: 200, bytes: 0...999),
        Row(range: "items=0-5", status: 200, bytes: 0...999),
        Row(range: "bytes=0-1,5-9", status: 200, bytes: 0...999),
        // §13.1.5: If-Range matching strongly gives the part; anything else, the whole.
        Row(range: "bytes=0-9", ifRange: etag, status: 206, bytes: 0...9, contentRange: "bytes 0-9/1000"),
        Row(range: "bytes=0-9", ifRange: "\"v0\"", status: 200, bytes: 0...999),
        Row(range: "bytes=0-9", ifRange: "W/\"v1\"", status: 200, bytes: 0...999),
        Row(range: "bytes=0-9", ifRange: lastModified, status: 206, bytes: 0...9, contentRange: "bytes 0-9/1000"),
        Row(range: "bytes=0-9", ifRange: "Sat, 21 Nov 2026 07:00:00 GMT", status: 200, bytes: 0...999),
        // §13.1.2-3: the player holds this version: 304, before any range.
        Row(ifNoneMatch: etag, status: 304),
        Row(ifNoneMatch: "W/\"v1\"", status: 304),
        Row(range: "bytes=0-9", ifNoneMatch: "\"v0\", \"v1\"", status: 304),
        Row(ifNoneMatch: "*", status: 304),
        Row(ifNoneMatch: "\"v0\"", status: 200, bytes: 0...999),
        Row(ifModifiedSince: lastModified, status: 304),
        Row(ifModifiedSince: "Sat, 21 Nov 2026 07:00:00 GMT", status: 200, bytes: 0...999),
        // If-None-Match wins over If-Modified-Since (§13.2.2).
        Row(ifNoneMatch: "\"v0\"", ifModifiedSince: lastModified, status: 200, bytes: 0...999),
    ]

    @Test(arguments: rows)
    func everyRowGetsItsAnswer(row: Row) {
        let decision = ResponseDecision(
            info: Self.info,
            range: row.range,
            ifRange: row.ifRange,
            ifNoneMatch: row.ifNoneMatch,
            ifModifiedSince: row.ifModifiedSince
        )
        #expect(decision.status == row.status)
        let fields = Dictionary(decision.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(fields["Content-Range"] == row.contentRange)
        switch decision.outcome {
        case .send(_, let range):
            let sent = range.map { $0.lowerBound...($0.upperBound - 1) }
            #expect(sent == row.bytes)
            #expect(fields["Content-Length"] == row.bytes.map { String($0.count) })
            #expect(fields["Accept-Ranges"] == "bytes" && fields["Content-Type"] == "audio/mpeg")
            #expect(fields["ETag"] == Self.etag && fields["Last-Modified"] == Self.lastModified)
        case .notModified:
            // The validators, no body fields.
            #expect(fields["ETag"] == Self.etag && fields["Content-Length"] == nil && fields["Content-Type"] == nil)
        case .unsatisfiable(let length):
            #expect(length == 1000 && fields.count == 1)
        }
    }

    /// Unknown length (a chunked origin answer): the whole, with no length to promise.
    @Test func anUnknownLengthIsSentWhole() {
        let decision = ResponseDecision(info: ContentInfo(), range: "bytes=0-9", ifRange: nil)
        #expect(decision.outcome == .send(partial: false, range: nil))
        #expect(decision.fields.map(\.name) == ["Accept-Ranges", "Content-Type"])
        #expect(decision.fields[1].value == "application/octet-stream")
    }

    /// A representation kept across requests (the cache hits') is judged again once the age an
    /// answer states moves on, or the resource's information changes.
    @Test func aKeptRepresentationHoldsWhileItsAgeAndInfoDo() throws {
        let received = Date(timeIntervalSince1970: 1_800_000_000)
        let stored = StoredFields(
            fields: [HeaderField("Cache-Control", "max-age=60")],
            receivedAt: received.timeIntervalSince1970
        )
        let info = ContentInfo(length: 1000, contentType: "audio/mpeg", etag: Self.etag, stored: stored)
        let kept = ResponseDecision.Representation(info, at: received.addingTimeInterval(5.2))
        #expect(kept.holds(info, at: received.addingTimeInterval(5.9)))
        #expect(!kept.holds(info, at: received.addingTimeInterval(6.0)))
        var changed = info
        changed.etag = "\"v2\""
        #expect(!kept.holds(changed, at: received.addingTimeInterval(5.5)))

        let answer = ResponseDecision(kept, range: "bytes=0-9", ifRange: nil)
        let fields = Dictionary(answer.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(fields["Age"] == "5" && fields["Cache-Control"] == "max-age=60")
        #expect(fields["Content-Range"] == "bytes 0-9/1000" && fields["Content-Length"] == "10")
        let notModified = ResponseDecision(kept, range: nil, ifRange: nil, ifNoneMatch: Self.etag)
        #expect(notModified.fields.map(\.name) == ["ETag", "Cache-Control", "Age"])
    }
}
