/// What `streamcache packages inspect --json` prints: a playlist's variants, renditions and segments
/// with every field present (`null` when absent).
public struct PlaylistSummary: Encodable, Sendable {
    public let kind: String
    public let version: Int?
    public let variants: [VariantSummary]
    public let renditions: [RenditionSummary]
    public let iframeVariants: [VariantSummary]
    public let targetDuration: Int?
    public let mediaSequence: Int64?
    public let discontinuitySequence: Int64?
    public let endList: Bool?
    public let playlistType: String?
    public let totalDuration: Double?
    public let segments: [SegmentSummary]

    public init(_ playlist: Playlist) {
        switch playlist {
        case .multivariant(let playlist):
            kind = "multivariant"
            version = playlist.header.version
            variants = playlist.variants.map(VariantSummary.init)
            renditions = playlist.renditions.map(RenditionSummary.init)
            iframeVariants = playlist.iframeVariants.map(VariantSummary.init)
            (targetDuration, mediaSequence, discontinuitySequence, endList) = (nil, nil, nil, nil)
            (playlistType, totalDuration, segments) = (nil, nil, [])
        case .media(let playlist):
            kind = "media"
            version = playlist.header.version
            (variants, renditions, iframeVariants) = ([], [], [])
            targetDuration = playlist.targetDuration
            mediaSequence = playlist.mediaSequence
            discontinuitySequence = playlist.discontinuitySequence
            endList = playlist.endList
            playlistType = playlist.playlistType
            totalDuration = playlist.totalDuration
            segments = playlist.segments.map(SegmentSummary.init)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, version, variants, renditions, iframeVariants, targetDuration, mediaSequence
        case discontinuitySequence, endList, playlistType, totalDuration, segments
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(version, forKey: .version)
        try container.encode(variants, forKey: .variants)
        try container.encode(renditions, forKey: .renditions)
        try container.encode(iframeVariants, forKey: .iframeVariants)
        try container.encode(targetDuration, forKey: .targetDuration)
        try container.encode(mediaSequence, forKey: .mediaSequence)
        try container.encode(discontinuitySequence, forKey: .discontinuitySequence)
        try container.encode(endList, forKey: .endList)
        try container.encode(playlistType, forKey: .playlistType)
        try container.encode(totalDuration, forKey: .totalDuration)
        try container.encode(segments, forKey: .segments)
    }
}

/// A variant or I-frame variant in a ``PlaylistSummary``.
public struct VariantSummary: Encodable, Sendable {
    public let uri: String
    public let bandwidth: Int64?
    public let averageBandwidth: Int64?
    public let codecs: String?
    public let resolution: String?
    public let frameRate: Double?
    public let audio: String?
    public let video: String?
    public let subtitles: String?

    init(_ variant: Variant) {
        (uri, bandwidth, averageBandwidth, codecs) = (
            variant.uri, variant.bandwidth, variant.averageBandwidth, variant.codecs
        )
        (resolution, frameRate) = (variant.resolution?.description, variant.frameRate)
        (audio, video, subtitles) = (variant.audio, variant.video, variant.subtitles)
    }

    init(_ variant: IFrameVariant) {
        (uri, bandwidth, averageBandwidth, codecs) = (
            variant.uri, variant.bandwidth, variant.averageBandwidth, variant.codecs
        )
        (resolution, frameRate) = (variant.resolution?.description, nil)
        (audio, video, subtitles) = (nil, variant.video, nil)
    }

    private enum CodingKeys: String, CodingKey {
        case uri, bandwidth, averageBandwidth, codecs, resolution, frameRate, audio, video, subtitles
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uri, forKey: .uri)
        try container.encode(bandwidth, forKey: .bandwidth)
        try container.encode(averageBandwidth, forKey: .averageBandwidth)
        try container.encode(codecs, forKey: .codecs)
        try container.encode(resolution, forKey: .resolution)
        try container.encode(frameRate, forKey: .frameRate)
        try container.encode(audio, forKey: .audio)
        try container.encode(video, forKey: .video)
        try container.encode(subtitles, forKey: .subtitles)
    }
}

/// A rendition in a ``PlaylistSummary``.
public struct RenditionSummary: Encodable, Sendable {
    public let type: String
    public let groupId: String
    public let name: String
    public let language: String?
    public let uri: String?
    public let isDefault: Bool
    public let autoselect: Bool
    public let forced: Bool

    init(_ rendition: Rendition) {
        (type, groupId, name, language, uri) = (
            rendition.type, rendition.groupId, rendition.name, rendition.language, rendition.uri
        )
        (isDefault, autoselect, forced) = (rendition.isDefault, rendition.autoselect, rendition.forced)
    }

    private enum CodingKeys: String, CodingKey {
        case type, groupId, name, language, uri, isDefault, autoselect, forced
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(groupId, forKey: .groupId)
        try container.encode(name, forKey: .name)
        try container.encode(language, forKey: .language)
        try container.encode(uri, forKey: .uri)
        try container.encode(isDefault, forKey: .isDefault)
        try container.encode(autoselect, forKey: .autoselect)
        try container.encode(forced, forKey: .forced)
    }
}

/// A segment in a ``PlaylistSummary``.
public struct SegmentSummary: Encodable, Sendable {
    public struct Range: Encodable, Sendable {
        public let offset: Int64
        public let length: Int64
    }

    public struct KeySummary: Encodable, Sendable {
        public let method: String
        public let uri: String?
        public let iv: String?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(method, forKey: .method)
            try container.encode(uri, forKey: .uri)
            try container.encode(iv, forKey: .iv)
        }

        private enum CodingKeys: String, CodingKey { case method, uri, iv }
    }

    public struct MapSummary: Encodable, Sendable {
        public let uri: String
        public let byteRange: Range?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(uri, forKey: .uri)
            try container.encode(byteRange, forKey: .byteRange)
        }

        private enum CodingKeys: String, CodingKey { case uri, byteRange }
    }

    public let uri: String
    public let duration: Double
    public let title: String
    public let byteRange: Range?
    public let key: KeySummary?
    public let map: MapSummary?
    public let discontinuity: Bool
    public let programDateTime: String?
    public let gap: Bool

    init(_ segment: Segment) {
        (uri, duration, title) = (segment.uri, segment.duration, segment.title)
        byteRange = segment.byteRange.map { Range(offset: $0.offset, length: $0.length) }
        key = segment.key.map { KeySummary(method: $0.method, uri: $0.uri, iv: $0.iv) }
        map = segment.map.map { map in
            MapSummary(uri: map.uri, byteRange: map.byteRange.map { Range(offset: $0.offset, length: $0.length) })
        }
        (discontinuity, programDateTime, gap) = (segment.discontinuity, segment.programDateTime, segment.gap)
    }

    private enum CodingKeys: String, CodingKey {
        case uri, duration, title, byteRange, key, map, discontinuity, programDateTime, gap
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uri, forKey: .uri)
        try container.encode(duration, forKey: .duration)
        try container.encode(title, forKey: .title)
        try container.encode(byteRange, forKey: .byteRange)
        try container.encode(key, forKey: .key)
        try container.encode(map, forKey: .map)
        try container.encode(discontinuity, forKey: .discontinuity)
        try container.encode(programDateTime, forKey: .programDateTime)
        try container.encode(gap, forKey: .gap)
    }
}
