/// The next thing a reader gets from its session.
enum ReadStep: Sendable {
    /// Bytes `range` are in `file`, ready to read; `fromOrigin` if they arrived from the origin
    /// after the reader came, rather than being cached already.
    ///
    /// `originBytes`: the origin body bytes received for the reader since its last span (kept or
    /// not), for the logs.
    case bytes(ByteRange, CacheFile, fromOrigin: Bool, originBytes: Int64)
    /// The first bytes of such a range, still in memory as a fetch wrote them (``RecentBytes``),
    /// starting at `offset`.
    case memory(ArraySlice<UInt8>, offset: Int64, fromOrigin: Bool, originBytes: Int64)
    /// The read is complete; `originBytes` as for ``bytes(_:_:fromOrigin:originBytes:)``.
    case end(originBytes: Int64)
    /// The read goes on straight from the origin, its answer checked against `known` (`nil`: the
    /// session's current version): the response may not be stored, or the origin's entity tag
    /// changed under the reader.
    case passThrough(against: ContentInfo?)
}
