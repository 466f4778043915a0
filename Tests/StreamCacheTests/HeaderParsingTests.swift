import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

@Suite struct HeaderParsingTests {
    @Test(arguments: [
        ("bytes=0-499", [RangeSpecifier.from(first: 0, last: 499)]),
        ("bytes=500-", [.from(first: 500, last: nil)]),
        ("bytes=-200", [.suffix(count: 200)]),
        ("bytes=0-0, -1", [.from(first: 0, last: 0), .suffix(count: 1)]),
        ("BYTES=1-2", [.from(first: 1, last: 2)]),
    ])
    func parsesValidRanges(value: String, expected: [RangeSpecifier]) {
        #expect(RangeSpecifier.parse(value) == expected)
    }

    @Test(arguments: ["bytes=5-1", "bytes=a-b", "items=0-1", "bytes=", "bytes=--1", "bytes=1", "0-1", "bytes=-"])
    func rejectsInvalidRanges(value: String) {
        #expect(RangeSpecifier.parse(value) == nil)
    }

    /// The byte-level parser against a plain reading of RFC 9110 §14.1.1 over strings, on random
    /// values made of the characters a `Range` header holds.
    @Test func parsesAsTheGrammarSaysOnRandomValues() async {
        var random = SeededRandom(seed: 14)
        let alphabet = Array("bytes=BYTES0123456789-, \t")
        for round in 0..<20_000 {
            // Leaves the cooperative pool to the timed tests beside it now and then.
            if round % 1000 == 0 { await Task.yield() }
            let length = Int.random(in: 0...16, using: &random)
            var value = Bool.random(using: &random) ? "bytes=" : ""
            value += String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            #expect(RangeSpecifier.parse(value) == Self.reference(value), "\(value)")
        }
    }

    static func reference(_ value: String) -> [RangeSpecifier]? {
        let blanks: Set<Character> = [" ", "\t"]
        func trim(_ text: Substring) -> Substring {
            var text = text
            while let first = text.first, blanks.contains(first) { text.removeFirst() }
            while let last = text.last, blanks.contains(last) { text.removeLast() }
            return text
        }
        func number(_ text: Substring) -> Int64? {
            guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int64(text) ?? Int64(1) << 62
        }
        let text = trim(value[...])
        guard text.lowercased().hasPrefix("bytes=") else { return nil }
        var result: [RangeSpecifier] = []
        for raw in text.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
            let spec = trim(raw)
            if spec.isEmpty { continue }
            guard let dash = spec.firstIndex(of: "-") else { return nil }
            let (left, right) = (spec[..<dash], spec[spec.index(after: dash)...])
            if left.isEmpty {
                guard let count = number(right) else { return nil }
                result.append(.suffix(count: count))
            } else if right.isEmpty {
                guard let first = number(left) else { return nil }
                result.append(.from(first: first, last: nil))
            } else {
                guard let first = number(left), let last = number(right), last >= first else { return nil }
                result.append(.from(first: first, last: last))
            }
        }
        return result.isEmpty ? nil : result
    }

    @Test func resolvesAgainstLength() {
        #expect(RangeSpecifier.from(first: 0, last: 9999).resolve(length: 100) == ByteRange(0, 100))
        #expect(RangeSpecifier.from(first: 100, last: nil).resolve(length: 100) == nil)
        #expect(RangeSpecifier.suffix(count: 500).resolve(length: 100) == ByteRange(0, 100))
        #expect(RangeSpecifier.suffix(count: 0).resolve(length: 100) == nil)
        let absurd = RangeSpecifier.parse("bytes=99999999999999999999-")
        #expect(absurd != nil)
        #expect(absurd?.first?.resolve(length: 1 << 40) == nil)
    }

    @Test func parsesContentRange() {
        #expect(ContentRange(parsing: "bytes 0-9/100") == ContentRange(parsing: "bytes 0-9/100"))
        #expect(ContentRange(parsing: "bytes 0-9/100")?.range == ByteRange(0, 10))
        #expect(ContentRange(parsing: "bytes 0-9/100")?.total == 100)
        #expect(ContentRange(parsing: "bytes */100")?.range == nil)
        #expect(ContentRange(parsing: "bytes */100")?.total == 100)
        #expect(ContentRange(parsing: "bytes 0-9/*")?.total == nil)
        #expect(ContentRange(parsing: "  Bytes  0-9/100 ")?.range == ByteRange(0, 10))
        #expect(ContentRange(parsing: "BYTES 5-5/6") == ContentRange(parsing: "bytes 5-5/6"))
        #expect(ContentRange(parsing: "bytes 0-999999999999999999/1000000000000000000") == nil)
        for bad in [
            "bytes 9-0/100", "bytes 0-100/100", "0-9/100", "bytes x-9/100", "bytes */*", "bytes 0-9", "bytes\t0-9/100",
            "bytes 0-9/100/100", "bytes 0-1-9/100", "bytes -1-9/100", "bytes +0-9/100", "bytes 0-9/1e3",
            "bytes 0-٩/100",
        ] {
            #expect(ContentRange(parsing: bad) == nil, "\(bad)")
        }
    }

    private func head(_ status: Int, _ fields: [(String, String)]) -> OriginResponseHead {
        OriginResponseHead(
            status: status,
            headers: fields.map { HeaderField($0.0, $0.1) },
            url: URL(string: "http://origin.test/a")!
        )
    }

    @Test func judgesStrictly() throws {
        let good = head(206, [("Content-Range", "bytes 10-19/100"), ("Content-Length", "10"), ("ETag", "\"v1\"")])
        #expect(
            try OriginAnswer.judge(good, first: 10, last: 19).withoutStoredFields
                == .partial(
                    range: ByteRange(10, 20),
                    info: ContentInfo(length: 100, etag: "\"v1\"", byteRangeAccess: true)
                )
        )
        // Shorter than asked is allowed (e ≤ b).
        #expect(throws: Never.self) { try OriginAnswer.judge(good, first: 10, last: 50) }
        // Wrong start, longer than asked, lying Content-Length, no total: violations.
        for (response, first, last) in [
            (good, Int64(11), Int64?(19)),
            (good, 10, 15),
            (head(206, [("Content-Range", "bytes 10-19/100"), ("Content-Length", "5")]), 10, 19),
            (head(206, [("Content-Range", "bytes 10-19/*")]), 10, 19),
            (head(206, []), 10, 19),
        ] {
            #expect(throws: StreamCacheError.self) { try OriginAnswer.judge(response, first: first, last: last) }
        }
        #expect(
            try OriginAnswer.judge(head(200, [("Content-Length", "100")]), first: 10, last: 19).withoutStoredFields
                == .full(info: ContentInfo(length: 100, byteRangeAccess: false))
        )
        #expect(
            try OriginAnswer.judge(head(416, [("Content-Range", "bytes */100")]), first: 100, last: nil)
                .withoutStoredFields
                == .endOfResource(total: 100, info: ContentInfo(length: 100, byteRangeAccess: false))
        )
        #expect(throws: StreamCacheError.self) {
            try OriginAnswer.judge(head(416, [("Content-Range", "bytes */100")]), first: 50, last: nil)
        }
        #expect(throws: StreamCacheError.self) { try OriginAnswer.judge(head(416, []), first: 500, last: nil) }
        do {
            _ = try OriginAnswer.judge(head(503, []), first: 0, last: nil)
            Issue.record("503 accepted")
        } catch let error as StreamCacheError {
            #expect(error.kind == .originStatus)
            #expect(error.status == 503)
            #expect(error.isTransient)
        }
    }

    @Test func readsAnAnswersFieldsInAnyCaseAndRepeatedFieldsJoined() {
        let answer = head(
            200,
            [("cache-control", "max-age=60"), ("Content-Length", " 100 "), ("CACHE-CONTROL", "public")]
        )
        #expect(answer["Cache-Control"] == "max-age=60, public")
        #expect(answer["ETag"] == nil)
        #expect(answer.contentLength == 100)
        for bad in ["-1", "abc", "1 0", ""] {
            #expect(head(200, [("Content-Length", bad)]).contentLength == nil, "\(bad)")
        }
        #expect(head(200, []).contentLength == nil)
    }

    @Test func detectsNewVersions() {
        let stored = ContentInfo(length: 100, etag: "\"v1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(!stored.isDifferentVersion(from: ContentInfo(length: 100, etag: "\"v1\"")))
        #expect(stored.isDifferentVersion(from: ContentInfo(length: 100, etag: "\"v2\"")))
        #expect(stored.isDifferentVersion(from: ContentInfo(length: 101, etag: "\"v1\"")))
        let bare = ContentInfo(length: 100)
        #expect(!bare.isDifferentVersion(from: ContentInfo(length: 100)))
        #expect(bare.isDifferentVersion(from: ContentInfo(length: 99)))
    }

    @Test func parsesHeaderFields() {
        #expect(HeaderField(parsing: "Authorization: Bearer x") == HeaderField("Authorization", "Bearer x"))
        #expect(HeaderField(parsing: "no colon") == nil)
        #expect(HeaderField(parsing: ": empty") == nil)
        #expect(HeaderField(parsing: "Bad Name: v") == nil)
        #expect(HeaderField(parsing: "X: a\r\nInjected: b") == nil)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension OriginAnswer {
    /// The answer without the stored fields its content information carries (they hold the time
    /// it was judged), for comparisons.
    var withoutStoredFields: OriginAnswer {
        if case .notModified = self { return .notModified(StoredFields()) }
        return mappingInfo { $0.stored = StoredFields() }
    }
}
