import Foundation

/// One request the cache sends to an origin: a `GET` of its own, or a player's request of
/// another method that the proxy relays (``method``, ``body``).
public struct OriginRequest: Sendable, Hashable {
    /// The URL to fetch.
    public var url: URL
    /// The method: `GET` but for a relayed request.
    public var method = "GET"
    /// The body of a relayed request.
    public var body: [UInt8]?
    /// The first byte wanted, and the last (inclusive) or `nil` for "to the end".
    public var range: (first: Int64, last: Int64?)?
    /// Per-resource headers (for example `Authorization`); never stored or logged.
    public var headers: [HeaderField]
    /// `If-Range` validator.
    public var ifRange: String?
    /// `If-None-Match` validator, for revalidation.
    public var ifNoneMatch: String?
    /// `If-Modified-Since` validator, for revalidation.
    public var ifModifiedSince: String?

    /// Creates a request.
    public init(
        url: URL,
        range: (first: Int64, last: Int64?)? = nil,
        headers: [HeaderField] = [],
        ifRange: String? = nil,
        ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil
    ) {
        self.url = url
        self.range = range
        self.headers = headers
        self.ifRange = ifRange
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }

    /// All headers to send, including the ones the cache decides on.
    public var allHeaders: [HeaderField] {
        var fields = headers
        if let range {
            fields.append(HeaderField("Range", "bytes=\(range.first)-\(range.last.map(String.init) ?? "")"))
        }
        if let ifRange { fields.append(HeaderField("If-Range", ifRange)) }
        if let ifNoneMatch { fields.append(HeaderField("If-None-Match", ifNoneMatch)) }
        if let ifModifiedSince { fields.append(HeaderField("If-Modified-Since", ifModifiedSince)) }
        fields.append(HeaderField("Accept-Encoding", "identity"))
        return fields
    }

    public static func == (lhs: OriginRequest, rhs: OriginRequest) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.body == rhs.body && lhs.range?.first == rhs.range?.first
            && lhs.range?.last == rhs.range?.last
            && lhs.headers == rhs.headers && lhs.ifRange == rhs.ifRange && lhs.ifNoneMatch == rhs.ifNoneMatch
            && lhs.ifModifiedSince == rhs.ifModifiedSince
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(range?.first)
        hasher.combine(range?.last)
    }
}

/// One HTTP header field.
public struct HeaderField: Hashable, Sendable {
    /// The field name as written.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// Whether the field is named `other`, in any case (field names are ASCII tokens).
    public func hasName(_ other: String) -> Bool { Self.namesMatch(name, other) }

    /// The field names `Connection` lists among `fields`, as written: fields of one hop, never
    /// stored or passed on (RFC 9110 §7.6.1).
    package static func connectionNames(in fields: [HeaderField]) -> [String] {
        fields.filter { $0.hasName("Connection") }.flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Whether two field names are the same in any case (ASCII letters only).
    package static func namesMatch(_ name: String, _ other: String) -> Bool {
        name.utf8.count == other.utf8.count
            && zip(name.utf8, other.utf8).allSatisfy { a, b in
                a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
            }
    }

    /// Parses `Name: value`; `nil` for a missing colon, a name that is not an HTTP token, or a
    /// value with a control character but tab (CR and LF would inject headers; RFC 9110 §5.5).
    public init?(parsing line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let tokenCharacters = CharacterSet(
            charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        )
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(tokenCharacters.contains),
            !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
        else { return nil }
        self.init(name, value)
    }
}
