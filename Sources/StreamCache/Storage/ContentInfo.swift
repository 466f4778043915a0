/// What the origin said about a resource: its size, type, validators and range support.
public struct ContentInfo: Hashable, Sendable {
    /// Total length in bytes, once known.
    public var length: Int64?
    /// The MIME type from `Content-Type`.
    public var contentType: String?
    /// The `ETag` validator, verbatim (weak ones keep their `W/` prefix).
    public var etag: String?
    /// The `Last-Modified` validator, verbatim.
    public var lastModified: String?
    /// Whether the origin answered a range request with a real `206`.
    public var byteRangeAccess: Bool
    /// The response's end-to-end header fields and when they came: its freshness, what is sent
    /// with every answer from the cache (RFC 9111).
    public var stored: StoredFields

    /// Creates content information.
    public init(
        length: Int64? = nil,
        contentType: String? = nil,
        etag: String? = nil,
        lastModified: String? = nil,
        byteRangeAccess: Bool = true,
        stored: StoredFields = StoredFields()
    ) {
        self.length = length
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.byteRangeAccess = byteRangeAccess
        self.stored = stored
    }

    /// The content coding of the bytes (`Content-Encoding`, say `gzip`), `nil` for the content
    /// itself (no field, or only `identity`).
    public var contentCoding: String? {
        guard let encoding = stored.value("Content-Encoding"),
            !encoding.split(separator: ",").allSatisfy({
                $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity"
            })
        else { return nil }
        return encoding
    }

    /// The validator to send in `If-Range`: a strong ETag, else `Last-Modified`.
    public var ifRangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// Whether a validator of this description proves, by itself, that bytes fetched under it
    /// later belong to the version cached earlier (RFC 9111 §3.4): a strong ETag, or a
    /// `Last-Modified` strong by RFC 9110 §8.8.2.2 (the response's `Date` at least a second
    /// later, so a change within that second could not keep the date).
    public var hasStrongValidator: Bool {
        if let etag, !etag.hasPrefix("W/") { return true }
        guard let lastModified, let modified = HTTPDate.parse(lastModified),
            let date = stored.value("Date").flatMap(HTTPDate.parse)
        else { return false }
        return date.timeIntervalSince(modified) >= 1
    }

    /// What this description and `newer`'s prove about their bytes.
    ///
    /// Another length, another `Last-Modified` or another weak tag is another version; one strong
    /// tag on both sides (or a strong `Last-Modified`, ``hasStrongValidator``) is the same one.
    /// Everything else (no validators, a tag on each side that differs while the length and date
    /// stand, a date that proves nothing) is ``VersionMatch/unproven``: only the bytes can tell.
    public func match(_ newer: ContentInfo) -> VersionMatch {
        if let length, let newLength = newer.length, length != newLength { return .different }
        switch (etag, newer.etag) {
        case (let etag?, let newETag?) where etag == newETag:
            if !etag.hasPrefix("W/") { return .same }
        case (let etag?, let newETag?):
            if etag.hasPrefix("W/") || newETag.hasPrefix("W/") { return .different }
            if lastModified != newer.lastModified { return .different }
            // An origin that tags every response anew looks so, and so does a replaced file.
            return .unproven
        case (nil, nil):
            break
        default:
            return .different
        }
        guard let lastModified, let newLastModified = newer.lastModified else { return .unproven }
        if lastModified != newLastModified { return .different }
        return hasStrongValidator && newer.hasStrongValidator ? .same : .unproven
    }

    /// Whether `newer` describes a different version of the resource than this, as far as the
    /// fields can say (``match(_:)`` is ``VersionMatch/different``).
    public func isDifferentVersion(from newer: ContentInfo) -> Bool {
        match(newer) == .different
    }

    /// Whether `newer` differs from this version in its entity tag alone: the same length and the
    /// same `Last-Modified`. An origin that makes a tag per response (per server, per request)
    /// looks so; a file replaced by another keeps neither.
    public func differsOnlyInETag(from newer: ContentInfo) -> Bool {
        guard let length, length == newer.length, let etag, let newETag = newer.etag, etag != newETag,
            let lastModified
        else { return false }
        return lastModified == newer.lastModified
    }

    /// Whether `ranges` hold every byte of the resource: its length is known and all of it is
    /// there (the one definition of a complete resource).
    public func isComplete(with ranges: ByteRangeSet) -> Bool {
        guard let length else { return false }
        return length == 0 || ranges.contains(ByteRange(0, length))
    }
}

/// What two descriptions of a resource prove about their bytes (``ContentInfo/match(_:)``).
public enum VersionMatch: Hashable, Sendable {
    /// A strong validator on both sides says they are one version.
    case same
    /// Their lengths or validators say they are two.
    case different
    /// Nothing in the fields can tell: bytes of both, compared, decide.
    case unproven
}
