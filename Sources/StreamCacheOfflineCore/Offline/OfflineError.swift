import StreamCache

/// Why an offline download or a library operation could not go on, as one line for a user.
///
/// Compare by kind: `error.kind == .live`.
public struct OfflineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a category callers can branch on.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Code: String, Hashable, Sendable {
            case live = "live stream"
            case drm = "DRM-protected"
            case noMatchingVariant = "no matching variant"
            case noMatchingRendition = "no matching rendition"
            case notEnoughSpace = "not enough space"
            case manifest = "unusable manifest"
            case segment = "segment failed"
            case unknownAsset = "unknown asset"
            case busy = "asset busy"
            case storage = "storage error"
            case section = "invalid section"
        }
        fileprivate let code: Code

        /// A live stream that cannot be taken as it is: one that has not begun, or one where a
        /// whole presentation is needed.
        public static let live = Kind(code: .live)
        /// `SAMPLE-AES`, or a key format other than `identity`.
        public static let drm = Kind(code: .drm)
        public static let noMatchingVariant = Kind(code: .noMatchingVariant)
        public static let noMatchingRendition = Kind(code: .noMatchingRendition)
        /// The asset's expected size does not fit on the library's disk.
        public static let notEnoughSpace = Kind(code: .notEnoughSpace)
        /// A manifest (a playlist, an MPD) could not be fetched or read.
        public static let manifest = Kind(code: .manifest)
        @available(*, deprecated, renamed: "manifest")
        public static let playlist = manifest
        /// A segment, init section or key could not be fetched after every attempt.
        public static let segment = Kind(code: .segment)
        public static let unknownAsset = Kind(code: .unknownAsset)
        /// Another process is downloading the same asset.
        public static let busy = Kind(code: .busy)
        /// The package folder could not be written.
        public static let storage = Kind(code: .storage)
        /// A time section that is malformed, overlaps another or lies past the stream's end, or
        /// one asked of a stream that has no timeline to cut (a live stream's future).
        public static let section = Kind(code: .section)

        public var description: String { code.rawValue }
    }

    /// The category of the error.
    public let kind: Kind
    /// A one-line explanation for a user.
    public let message: String
    /// What the origin or the streaming cache failed with, when that is the cause (a playlist
    /// or segment the origin answered 404 for, a host that does not resolve).
    public let cause: StreamCacheError?

    /// Creates an error of `kind` with a one-line `message`, and the `cause` behind it.
    public init(_ kind: Kind, _ message: String, cause: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.cause = cause as? StreamCacheError
    }

    public var description: String { message }
}
