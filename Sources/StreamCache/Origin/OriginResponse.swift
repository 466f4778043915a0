import Foundation

/// The status line and headers of an origin's answer, after redirects.
public struct OriginResponseHead: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields, in order received.
    public var headers: [HeaderField]
    /// The URL that answered (after following redirects).
    public var url: URL

    /// Creates a response head.
    public init(status: Int, headers: [HeaderField], url: URL) {
        self.status = status
        self.headers = headers
        self.url = url
    }

    /// The value of header `name` (case-insensitive); repeated fields are joined with `, `.
    public subscript(_ name: String) -> String? {
        // Read for every answer: a field that appears once (the rule) is returned as it is.
        var values: String?
        for field in headers where field.hasName(name) {
            values = values.map { "\($0), \(field.value)" } ?? field.value
        }
        return values
    }

    /// `Content-Length`, if present and a valid number.
    public var contentLength: Int64? {
        guard let text = self["Content-Length"] else { return nil }
        // Trimmed only when it must be: Foundation's trimming costs more than the rest of a head.
        let length = Int64(text) ?? Int64(text.trimmingCharacters(in: .whitespaces))
        return length.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The content information this head carries (length from `Content-Range` or `Content-Length`).
    public var contentInfo: ContentInfo {
        var length: Int64?
        if status == 206 || status == 416 {
            length = self["Content-Range"].flatMap(ContentRange.init(parsing:))?.total
        } else if status == 200 {
            length = contentLength
        }
        return ContentInfo(
            length: length,
            contentType: self["Content-Type"],
            etag: self["ETag"],
            lastModified: self["Last-Modified"],
            byteRangeAccess: status == 206,
            // A part's `Content-Range` says which part this answer carries, not what the
            // resource is: a 200 sends none of it.
            stored: StoredFields(
                fields: status == 206 ? headers.filter { !$0.hasName("Content-Range") } : headers,
                receivedAt: Date().timeIntervalSince1970
            )
        )
    }
}

/// A response body, delivered chunk by chunk as the origin sends it.
///
/// Pulling the next chunk is what lets the origin send more (backpressure). A body is read once,
/// by one task, inside the closure given to ``OriginClient/fetch(_:_:)``.
public struct OriginBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    private let nextChunk: @Sendable () async throws -> [UInt8]?

    /// Creates a body whose chunks `next` returns in order, then `nil`.
    public init(next: @escaping @Sendable () async throws -> [UInt8]?) {
        self.nextChunk = next
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: @Sendable () async throws -> [UInt8]?

        public mutating func next() async throws -> [UInt8]? {
            try await nextChunk()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(nextChunk: nextChunk)
    }
}

/// A `Content-Range` header: `bytes first-last/total`, `bytes first-last/*` or `bytes */total`.
public struct ContentRange: Hashable, Sendable {
    /// The bytes carried, if any (half-open).
    public var range: ByteRange?
    /// The complete length, if the origin said it.
    public var total: Int64?

    /// Parses a header value; `nil` if it is malformed.
    public init?(parsing value: String) {
        // On the field's bytes (every origin answer is judged by it): spaces and tabs around
        // the value and after the unit are skipped; anything else out of place refuses it.
        var text = Substring(value).utf8
        Self.trimSpaces(&text)
        let unit = text.prefix(6)
        guard unit.count == 6, zip(unit, "bytes ".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        text = text.dropFirst(6)
        Self.trimSpaces(&text)
        let parts = text.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1].elementsEqual("*".utf8) {
            total = nil
        } else {
            guard let total = Self.number(parts[1]) else { return nil }
            self.total = total
        }
        if parts[0].elementsEqual("*".utf8) {
            guard total != nil else { return nil }
            range = nil
        } else {
            let bounds = parts[0].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
                first <= last, last < Int64.max
            else { return nil }
            if let total, last >= total { return nil }
            range = ByteRange(first, last + 1)
        }
    }

    private static func trimSpaces(_ text: inout Substring.UTF8View) {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = text.first, isSpace(first) { text = text.dropFirst() }
        while let last = text.last, isSpace(last) { text = text.dropLast() }
    }

    /// A number of at most 18 ASCII digits (no sign, no spaces).
    private static func number(_ digits: Substring.UTF8View) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
