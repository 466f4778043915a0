import Foundation

/// One resource as the index knows it.
public struct ResourceRecord: Hashable, Sendable {
    /// The row id; names the data file. Never reused, so a stale id can never reach a new resource.
    public var id: Int64
    /// The cache key (the original URL unless an app supplies its own key).
    public var key: String
    /// The origin URL the bytes come from.
    public var url: String
    /// What the origin said about the resource; `length == nil` until the first response.
    public var info: ContentInfo
    /// When the resource was first cached.
    public var createdAt: Date
    /// When a reader last used it (drives least-recently-used eviction).
    public var lastAccess: Date
    /// Pinned resources are never evicted.
    public var pinned: Bool
    /// The bytes the index holds for it.
    public var cachedBytes: Int64
    /// The data file as the index last saw it; `nil` if never recorded.
    package var fileState: DataFileState?
    /// A digest of the values of the query parameters a key rule leaves out that the bytes came
    /// with (never the values); `nil`: none left out. A read with other values proves the bytes
    /// before it is answered (``CacheKeyRules/ignoredValuesDigest(of:)``).
    package var tokenDigest: String? = nil
}
