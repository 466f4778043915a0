/// The next thing a reader gets from its session.
enum Span: Sendable {
    /// Bytes `range` are in `file`, ready to read; `fromOrigin` if they arrived from the origin
    /// after the reader came, rather than being cached already.
    case bytes(ByteRange, CacheFile, fromOrigin: Bool)
    /// The first bytes of such a range, still in memory as a fetch wrote them (``RecentBytes``),
    /// starting at `offset`.
    case memory(ArraySlice<UInt8>, offset: Int64, fromOrigin: Bool)
    /// The read is complete.
    case end
}
