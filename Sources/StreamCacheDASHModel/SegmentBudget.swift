/// How many more segments one MPD may make, all its representations together: each
/// representation's timeline, duration, list or `sidx` box takes its count from it before a
/// segment is made, so an MPD of many representations makes no more than one could
/// (``SegmentIndex/maximumSegments``), however they divide it.
public struct SegmentBudget: Sendable {
    public private(set) var remaining: Int

    public init(_ total: Int = SegmentIndex.maximumSegments) {
        remaining = total
    }

    /// Takes `count` segments for `name` (a representation's addressing).
    ///
    /// - Throws: ``ManifestParseError`` if fewer are left.
    public mutating func take(_ count: Int64, for name: String) throws(ManifestParseError) {
        guard count <= Int64(remaining) else {
            throw ManifestParseError(
                "\(name) would make the MPD's segments more than \(SegmentIndex.maximumSegments) in all"
            )
        }
        remaining -= Int(count)
    }
}
