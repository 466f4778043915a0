/// A variant stream: `EXT-X-STREAM-INF` and its URI.
public struct Variant: Hashable, Sendable {
    public var attributes: AttributeList
    public var uri: String
    /// Unknown lines just before this variant, verbatim.
    public var leadingLines: [String] = []

    public init(attributes: AttributeList, uri: String) {
        self.attributes = attributes
        self.uri = uri
    }

    public var bandwidth: Int64 { attributes.integer("BANDWIDTH") ?? 0 }
    public var averageBandwidth: Int64? { attributes.integer("AVERAGE-BANDWIDTH") }
    public var codecs: String? { attributes["CODECS"] }
    public var resolution: Resolution? { attributes["RESOLUTION"].flatMap(Resolution.init(parsing:)) }
    public var frameRate: Double? { attributes.decimal("FRAME-RATE") }
    /// Group ids of the renditions this variant plays with.
    public var audio: String? { attributes["AUDIO"] }
    public var video: String? { attributes["VIDEO"] }
    public var subtitles: String? { attributes["SUBTITLES"] }
    public var closedCaptions: String? { attributes["CLOSED-CAPTIONS"] }
}

/// An I-frame variant: `EXT-X-I-FRAME-STREAM-INF` (its URI is an attribute).
public struct IFrameVariant: Hashable, Sendable {
    public var attributes: AttributeList

    public init(attributes: AttributeList) {
        self.attributes = attributes
    }

    public var uri: String { attributes["URI"] ?? "" }
    /// `nil` when missing or not a number.
    public var bandwidth: Int64? { attributes.integer("BANDWIDTH") }
    public var averageBandwidth: Int64? { attributes.integer("AVERAGE-BANDWIDTH") }
    public var codecs: String? { attributes["CODECS"] }
    public var resolution: Resolution? { attributes["RESOLUTION"].flatMap(Resolution.init(parsing:)) }
    public var video: String? { attributes["VIDEO"] }
}

/// An alternative rendition: `EXT-X-MEDIA`.
public struct Rendition: Hashable, Sendable {
    public var attributes: AttributeList

    public init(attributes: AttributeList) {
        self.attributes = attributes
    }

    /// `AUDIO`, `VIDEO`, `SUBTITLES` or `CLOSED-CAPTIONS`.
    public var type: String { attributes["TYPE"] ?? "" }
    public var groupId: String { attributes["GROUP-ID"] ?? "" }
    public var name: String { attributes["NAME"] ?? "" }
    public var language: String? { attributes["LANGUAGE"] }
    /// Absent for renditions carried in the variant's own stream.
    public var uri: String? { attributes["URI"] }
    public var isDefault: Bool { attributes.flag("DEFAULT") }
    public var autoselect: Bool { attributes.flag("AUTOSELECT") }
    public var forced: Bool { attributes.flag("FORCED") }
}
