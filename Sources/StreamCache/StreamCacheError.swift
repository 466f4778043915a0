import Foundation

/// An error from StreamCache, with a one-line message fit for a user.
///
/// Compare errors by ``code``-like static members: `error.kind == .originProtocolViolation`.
public struct StreamCacheError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong, as a category callers can branch on.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Code: String, Hashable, Sendable {
            case invalidURL = "invalid URL"
            case unsupportedScheme = "unsupported URL scheme"
            case invalidRange = "invalid range"
            case originUnreachable = "origin unreachable"
            case originStatus = "origin error status"
            case originProtocolViolation = "origin protocol violation"
            case originTimeout = "origin timeout"
            case tooManyRedirects = "too many redirects"
            case refusedURL = "refused URL"
            case encodedBody = "encoded body"
            case resourceChanged = "resource changed"
            case rangeNotSatisfiable = "range not satisfiable"
            case storage = "storage error"
            case diskFull = "disk full"
            case index = "index error"
            case damagedIndex = "damaged index"
            case staleNotAllowed = "stale copy not allowed"
        }
        fileprivate let code: Code

        public static let invalidURL = Kind(code: .invalidURL)
        public static let unsupportedScheme = Kind(code: .unsupportedScheme)
        public static let invalidRange = Kind(code: .invalidRange)
        public static let originUnreachable = Kind(code: .originUnreachable)
        public static let originStatus = Kind(code: .originStatus)
        public static let originProtocolViolation = Kind(code: .originProtocolViolation)
        public static let originTimeout = Kind(code: .originTimeout)
        public static let tooManyRedirects = Kind(code: .tooManyRedirects)
        /// An origin redirected to a URL the engine does not fetch (another scheme, a bad port,
        /// a URL the configuration refuses).
        public static let refusedURL = Kind(code: .refusedURL)
        /// The origin sent a body with a `Content-Encoding` (gzip, …) although only unencoded
        /// bytes were asked for, or a transfer coding other than chunked: its bytes are not the
        /// resource's, so none are kept.
        public static let encodedBody = Kind(code: .encodedBody)
        public static let resourceChanged = Kind(code: .resourceChanged)
        public static let rangeNotSatisfiable = Kind(code: .rangeNotSatisfiable)
        public static let storage = Kind(code: .storage)
        /// The cache's filesystem is full (or the user's quota used up): cached bytes are still
        /// served, the rest streams through uncached.
        public static let diskFull = Kind(code: .diskFull)
        public static let index = Kind(code: .index)
        /// `index.sqlite` is not a database, or a damaged one: a ``CacheEngine`` moves it aside
        /// and starts an empty cache.
        public static let damagedIndex = Kind(code: .damagedIndex)
        /// The origin cannot be reached and the cached copy may not be served unchecked
        /// (`must-revalidate`, `no-cache`, RFC 9111 §4.2.4): a server answers `504`.
        public static let staleNotAllowed = Kind(code: .staleNotAllowed)

        public var description: String { code.rawValue }
    }

    /// The category of the error.
    public let kind: Kind
    /// A one-line explanation for a user.
    public let message: String
    /// The HTTP status the origin answered with, for ``Kind/originStatus``.
    public let status: Int?
    /// The origin's answer as it came, for ``Kind/originStatus`` and a redirect not followed:
    /// a server passes it on to its client.
    public var reply: OriginReply?
    /// Why an origin could not be reached, when that is known (``Kind/originUnreachable``).
    public var cause: Cause?

    /// Why an origin could not be reached.
    public enum Cause: Hashable, Sendable {
        /// The host name does not resolve; asking again at once would not help.
        case hostNotFound
        /// Nothing listens on the port (the connection was refused); asking again at once would
        /// not help.
        case connectionRefused
        /// No connection could be made otherwise (no route, a timeout at connect).
        case cannotConnect
    }

    /// Creates an error of `kind` with a one-line `message`.
    public init(_ kind: Kind, _ message: String, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    /// Whether trying the same request again may succeed.
    public var isTransient: Bool {
        switch kind {
        case .originUnreachable: return cause != .hostNotFound && cause != .connectionRefused
        case .originTimeout, .originProtocolViolation: return true
        case .originStatus: return (status ?? 0) >= 500
        default: return false
        }
    }

    public var description: String { message }
    public var errorDescription: String? { message }

    static func storage(_ what: String, path: String, errno code: Int32) -> StreamCacheError {
        let full = code == ENOSPC || code == EDQUOT
        return StreamCacheError(full ? .diskFull : .storage, "\(what) \(path): \(String(cString: strerror(code)))")
    }
}
