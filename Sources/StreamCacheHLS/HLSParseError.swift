/// Why a playlist could not be read, and where: `line 12: EXT-X-STREAM-INF without a URI line`.
public struct HLSParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line the problem is on (0: the playlist as a whole).
    public let line: Int
    public let reason: String

    public init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { line > 0 ? "line \(line): \(reason)" : reason }
}
