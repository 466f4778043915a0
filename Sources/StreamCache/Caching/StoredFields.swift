import Foundation

/// What a cache keeps of a response besides its bytes (RFC 9111 §3): its end-to-end header
/// fields, and when it was received, from which its freshness and age follow (§4.2).
public struct StoredFields: Hashable, Sendable {
    /// The response's header fields a cache stores: all but the hop-by-hop ones (those
    /// `Connection` names too), `Set-Cookie` (see ``cookies``), and those that describe one
    /// message's framing. (`Age` is kept for the age it gives; answers send their own. A
    /// `206`'s `Content-Range` describes that answer's part and is not taken, ``OriginResponseHead/contentInfo``.)
    public private(set) var fields: [HeaderField] {
        didSet {
            cacheControl = Self.cacheControl(of: fields)
            sharedCacheControl = Self.sharedCacheControl(of: fields, cacheControl)
            variesOnRequestFields = Self.varies(fields)
        }
    }
    /// The `Cache-Control` directives of ``fields``, parsed once: every freshness question asks them.
    public private(set) var cacheControl: CacheControl
    /// The directives a shared cache acts on: `CDN-Cache-Control`'s where it is valid (RFC 9213),
    /// else `Cache-Control`'s as a shared cache reads them (``CacheControl/shared``).
    public private(set) var sharedCacheControl: CacheControl
    /// Whether the response varies on request fields (`Vary` names one, not just `*`), found once:
    /// every cache hit asks it.
    public private(set) var variesOnRequestFields: Bool
    /// The response's `Set-Cookie` and `Set-Cookie2` fields, sent again with the answers of the
    /// process that received them: a private cache's, to its one user (RFC 9111 §3.1). They are
    /// never written to the index, so never to disk, and a shared cache never sends them.
    public private(set) var cookies: [HeaderField] = []
    /// When the response was received (`response_time`), seconds since 1970.
    public private(set) var receivedAt: Double
    /// The age the response had when it was received (RFC 9111 §4.2.3, `corrected_initial_age`,
    /// taking the request as sent when the response came), in seconds.
    private var initialAge: Double = 0

    /// `fields` as a cache stores them, received at `receivedAt`: without the ones `Connection`
    /// names, which are for one hop (RFC 9110 §7.6.1).
    public init(fields: [HeaderField] = [], receivedAt: Double = 0) {
        let hop = HeaderField.connectionNames(in: fields)
        let stored = fields.filter { field in
            Self.isStored(field.name) && !hop.contains { HeaderField.namesMatch(field.name, $0) }
        }
        self.fields = stored
        cookies = fields.filter { field in
            (field.hasName("Set-Cookie") || field.hasName("Set-Cookie2"))
                && !hop.contains { HeaderField.namesMatch(field.name, $0) }
        }
        self.receivedAt = receivedAt
        cacheControl = Self.cacheControl(of: stored)
        sharedCacheControl = Self.sharedCacheControl(of: stored, cacheControl)
        variesOnRequestFields = Self.varies(stored)
        let date = value("Date").flatMap(HTTPDate.parse)?.timeIntervalSince1970 ?? receivedAt
        let apparent = max(0, receivedAt - date)
        // A list in one line (`7200, 0`) is read by its first member, as a single value would be.
        let age = value("Age").flatMap { text in
            let first = (text.split(separator: ",").first ?? "").trimmingCharacters(in: .whitespaces)
            return CacheControl.seconds(Substring(first))
        }
        initialAge = max(apparent, Double(age ?? 0))
    }

    private static func varies(_ fields: [HeaderField]) -> Bool {
        fields.contains { field in
            field.hasName("Vary")
                && field.value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) != "*" }
        }
    }

    private static func cacheControl(of fields: [HeaderField]) -> CacheControl {
        CacheControl(fields: fields.compactMap { $0.hasName("Cache-Control") ? $0.value : nil })
    }

    private static func sharedCacheControl(of fields: [HeaderField], _ control: CacheControl) -> CacheControl {
        CacheControl.targeted(fields.compactMap { $0.hasName("CDN-Cache-Control") ? $0.value : nil }) ?? control.shared
    }

    /// The directives a cache acts on: a shared cache's (``sharedCacheControl``), or a private one's.
    public func cacheControl(shared: Bool) -> CacheControl {
        shared ? sharedCacheControl : cacheControl
    }

    /// Field names never stored or sent from the cache, lowercased.
    static let notStored = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization", "set-cookie", "set-cookie2", "content-length",
        "accept-ranges",
    ]

    /// Compared in place, without lowercasing a copy of each name: every resource's fields are
    /// read again each time its row is.
    static func isStored(_ name: String) -> Bool { !notStored.contains { HeaderField.namesMatch(name, $0) } }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.hasName(name) }.map(\.value)
    }

    /// The first value of `name`.
    public func value(_ name: String) -> String? { fields.first { $0.hasName(name) }?.value }

    /// The `Vary` field names, lowercased (`*` among them if present).
    public var vary: [String] {
        values("Vary").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// The response's age at `now` (RFC 9111 §4.2.3), in seconds.
    public func age(at now: Double) -> Double {
        initialAge + max(0, now - receivedAt)
    }

    /// How long the response is fresh in all (RFC 9111 §4.2.1), in seconds: `max-age`, else
    /// `Expires` less `Date`, else a heuristic of a tenth of the time since `Last-Modified`
    /// (§4.2.2), at most `heuristicLimit`; else `0`.
    public func freshnessLifetime(heuristicLimit: Double, shared: Bool = false) -> Double {
        if let maxAge = cacheControl(shared: shared).maxAge { return Double(maxAge) }
        let date = value("Date").flatMap(HTTPDate.parse)?.timeIntervalSince1970 ?? receivedAt
        let expiresValues = values("Expires")
        if !expiresValues.isEmpty {
            // An invalid date, "0" among them, is a time in the past (§5.3).
            guard expiresValues.count == 1, let expires = HTTPDate.parse(expiresValues[0]) else { return 0 }
            return max(0, expires.timeIntervalSince1970 - date)
        }
        if let lastModified = value("Last-Modified").flatMap(HTTPDate.parse)?.timeIntervalSince1970,
            lastModified < date
        {
            return min(heuristicLimit, (date - lastModified) / 10)
        }
        return 0
    }

    /// The field that records which request fields a response varies on had which values when
    /// it was received (RFC 9111 §4.1); kept with the response, never sent.
    static let variantField = "StreamCache-Variant"

    /// What the request fields named by `Vary` were in `request` (absent ones as empty), each
    /// as a digest of its values: the record of a response that varies on `Cookie` or
    /// `Authorization` must not hold a credential, in the index or anywhere it is shown.
    public func variant(of request: [HeaderField]) -> String {
        vary.filter { $0 != "*" }.sorted().map { name in
            let values = Array(request.filter { $0.name.lowercased() == name }.map(\.value).joined(separator: ",").utf8)
            let digest = values.isEmpty ? "" : String(values.withUnsafeBytes { BlockChecksums.checksum($0) }, radix: 16)
            return name + "=" + digest
        }.joined(separator: "; ")
    }

    /// The stored fields as the origin sent them, without the record of the variant.
    public var originFields: [HeaderField] {
        fields.filter { !$0.hasName(Self.variantField) }
    }

    /// The fields with the variant of `request` recorded, if the response varies on request fields.
    public func recordingVariant(of request: [HeaderField]) -> StoredFields {
        guard variesOnRequestFields else { return self }
        var copy = self
        copy.fields =
            fields.filter { $0.name != Self.variantField } + [HeaderField(Self.variantField, variant(of: request))]
        return copy
    }

    /// Whether the stored response may answer `request`: it varies on no request field, or on
    /// fields `request` has with the same values (RFC 9111 §4.1).
    public func matches(_ request: [HeaderField]) -> Bool {
        guard variesOnRequestFields else { return true }
        return value(Self.variantField) == variant(of: request)
    }

    /// How much longer the response is fresh at `now` (negative: stale for that long), in
    /// seconds: its lifetime, at most `cap`, less its age then.
    public func remainingFreshness(
        at now: Double,
        heuristicLimit: Double,
        cap: Double = .infinity,
        shared: Bool = false
    ) -> Double {
        min(freshnessLifetime(heuristicLimit: heuristicLimit, shared: shared), cap) - age(at: now)
    }

    /// The fields after a `304` that carried `updates` at `receivedAt` (RFC 9111 §4.3.4): each
    /// field the 304 has replaces the stored ones of that name; the others stay.
    public func updated(with updates: [HeaderField], receivedAt: Double) -> StoredFields {
        let incoming = updates.filter { Self.isStored($0.name) }
        let replaced = Set(incoming.map { $0.name.lowercased() })
        let kept = fields.filter { !replaced.contains($0.name.lowercased()) }
        let newCookies = updates.filter { $0.hasName("Set-Cookie") || $0.hasName("Set-Cookie2") }
        var updated = StoredFields(fields: kept + incoming + newCookies, receivedAt: receivedAt)
        if newCookies.isEmpty { updated.cookies = cookies }
        return updated
    }

    /// The fields with `cookies` as the response's (``CookieMemory``).
    func withCookies(_ cookies: [HeaderField]) -> StoredFields {
        var copy = self
        copy.cookies = cookies
        return copy
    }

    /// The fields of a response no longer known to be fresh (RFC 9111 §4.4: a request of an
    /// unsafe method changed the resource at the origin): stale, as one never received, until
    /// the origin confirms it again.
    public func invalidated() -> StoredFields {
        var stale = StoredFields(fields: fields, receivedAt: 0)
        stale.cookies = cookies
        return stale
    }
}
