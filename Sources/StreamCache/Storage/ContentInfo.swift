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

    /// The validator to send in `If-Range`: a strong ETag, else `Last-Modified`.
    public var ifRangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// Whether a byte fetched now can be told to belong to the same version as one fetched
    /// earlier: a strong ETag or a Last-Modified date. Without one, ranges are combined only
    /// within one revalidation (RFC 9111 §3.4).
    public var hasValidator: Bool {
        if let etag, !etag.hasPrefix("W/") { return true }
        return lastModified != nil
    }

    /// Whether `newer` describes a different version of the resource than this.
    ///
    /// Validators are compared where both sides have them; without any, the total length decides.
    public func isDifferentVersion(from newer: ContentInfo) -> Bool {
        if let length, let newLength = newer.length, length != newLength { return true }
        if let etag, let newETag = newer.etag { return etag != newETag }
        if let lastModified, let newLastModified = newer.lastModified { return lastModified != newLastModified }
        if (etag != nil) != (newer.etag != nil) { return true }
        return false
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

    /// Whether `newer` may be this version under another strong entity tag: the same length and
    /// `Last-Modified`, or none on either side. Only the bytes can tell.
    public func mayHoldTheSameBytes(as newer: ContentInfo) -> Bool {
        guard let length, length == newer.length, let etag, let newETag = newer.etag, etag != newETag,
            !etag.hasPrefix("W/"), !newETag.hasPrefix("W/")
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
