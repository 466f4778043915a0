/// Why a playlist could not be read, and where: `line 12: EXT-X-STREAM-INF without a URI line`.
public struct HLSParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line the problem is on (0: the playlist as a whole).
    public let line: Int
    public let reason: String
    /// The text has no `#EXTM3U` header: it is something else (a plain M3U list, a web page),
    /// not a broken HLS playlist.
    public let isMissingHeader: Bool

    public init(line: Int, _ reason: String, isMissingHeader: Bool = false) {
        self.line = line
        self.reason = reason
        self.isMissingHeader = isMissingHeader
    }

    public var description: String { line > 0 ? "line \(line): \(reason)" : reason }
}
