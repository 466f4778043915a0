/// The low-latency HLS tags (RFC 8216bis §4.4.5.2–§4.4.5.4) that name a resource with a `URI`
/// attribute: `EXT-X-PART`, `EXT-X-PRELOAD-HINT` and `EXT-X-RENDITION-REPORT`. The model keeps
/// them verbatim with the segment they precede (or after the last one); their URIs are mapped
/// with every other URI of a playlist, and a package of recorded segments drops them.
public enum LowLatencyTags {
    /// The tags with a `URI` attribute.
    static let namingURIs = ["#EXT-X-PART:", "#EXT-X-PRELOAD-HINT:", "#EXT-X-RENDITION-REPORT:"]
    /// Every low-latency tag: a package of whole segments has none of them.
    static let all = namingURIs + ["#EXT-X-PART-INF:", "#EXT-X-SERVER-CONTROL:", "#EXT-X-SKIP:"]

    /// Whether `line` is a low-latency tag.
    public static func isLowLatency(_ line: String) -> Bool {
        all.contains { line.hasPrefix($0) }
    }

    /// `line` with its `URI` attribute mapped by `transform`, if it is a tag that names one;
    /// any other line, or one whose attributes do not parse, as it is.
    static func mappingURI(_ line: String, _ transform: (String) -> String) -> String {
        guard let prefix = namingURIs.first(where: { line.hasPrefix($0) }),
            var attributes = try? AttributeList(parsing: line.dropFirst(prefix.count)), attributes["URI"] != nil
        else { return line }
        attributes.mapURI(transform)
        return prefix + attributes.text
    }
}
