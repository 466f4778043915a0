/// An HLS playlist (RFC 8216): a multivariant playlist listing variants and renditions, or a
/// media playlist listing segments.
public enum Playlist: Hashable, Sendable {
    case multivariant(MultivariantPlaylist)
    case media(MediaPlaylist)

    /// Parses playlist text.
    ///
    /// - Parameters:
    ///   - url: where the playlist came from; its query feeds `EXT-X-DEFINE:QUERYPARAM`.
    ///   - imported: the variables of the multivariant playlist, for `EXT-X-DEFINE:IMPORT`.
    /// - Throws: ``HLSParseError`` naming the line and the reason.
    public init(parsing text: String, url: String? = nil, imported: [String: String] = [:]) throws(HLSParseError) {
        self = try PlaylistParser(url: url, imported: imported).parse(text)
    }

    /// Parses playlist bytes, which must be UTF-8 (RFC 8216 §4.1).
    ///
    /// - Throws: ``HLSParseError`` naming the line and the reason; for bytes that are not UTF-8,
    ///   the line of the first invalid byte.
    public init(parsing bytes: [UInt8], url: String? = nil, imported: [String: String] = [:]) throws(HLSParseError) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HLSParseError(line: Self.lineOfFirstInvalidByte(bytes), "not UTF-8 text, so not a playlist")
        }
        try self.init(parsing: text, url: url, imported: imported)
    }

    /// Every URI the playlist lists, as written: variants, renditions, I-frame playlists,
    /// session data and keys; or segments with their keys and maps.
    public var listedURIs: [String] {
        var uris: [String] = []
        let collect: (String) -> String = { uri in
            uris.append(uri)
            return uri
        }
        switch self {
        case .multivariant(var playlist): playlist.mapURIs(collect)
        case .media(var playlist): playlist.mapURIs(collect)
        }
        return uris
    }

    private static func lineOfFirstInvalidByte(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var line = 1
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) {
            if scalar.count == 1 && scalar.first == 0x0A { line += 1 }
        }
        return line
    }

    /// The playlist as text, `#EXTM3U` first and a newline after the last line.
    public var text: String {
        switch self {
        case .multivariant(let playlist): PlaylistWriter.text(of: playlist)
        case .media(let playlist): PlaylistWriter.text(of: playlist)
        }
    }

    /// The same playlist with every URI it holds (variants, renditions, segments, keys, maps,
    /// I-frame variants, session keys and data) replaced by `transform(uri)`.
    public func mappingURIs(_ transform: (String) -> String) -> Playlist {
        switch self {
        case .multivariant(var playlist):
            playlist.mapURIs(transform)
            return .multivariant(playlist)
        case .media(var playlist):
            playlist.mapURIs(transform)
            return .media(playlist)
        }
    }
}

/// Tags both kinds of playlist may carry before their first variant or segment. (Tags the model
/// does not know are kept verbatim with the variant or segment they precede.)
public struct PlaylistHeader: Hashable, Sendable {
    /// `EXT-X-VERSION`.
    public var version: Int?
    /// `EXT-X-INDEPENDENT-SEGMENTS`.
    public var independentSegments = false
    /// `EXT-X-START` attributes.
    public var start: AttributeList?
    /// `EXT-X-DEFINE` tags, in order.
    public var defines: [AttributeList] = []

    public init() {}
}

/// A playlist of variant streams and renditions.
public struct MultivariantPlaylist: Hashable, Sendable {
    public var header = PlaylistHeader()
    /// `EXT-X-MEDIA`, in order.
    public var renditions: [Rendition] = []
    /// `EXT-X-STREAM-INF` with their URIs, in order.
    public var variants: [Variant] = []
    /// `EXT-X-I-FRAME-STREAM-INF`, in order.
    public var iframeVariants: [IFrameVariant] = []
    /// `EXT-X-SESSION-DATA` attributes.
    public var sessionData: [AttributeList] = []
    /// `EXT-X-SESSION-KEY`.
    public var sessionKeys: [Key] = []
    /// Unknown lines after the last variant (or in a playlist without variants), verbatim.
    public var trailingLines: [String] = []

    public init() {}

    mutating func mapURIs(_ transform: (String) -> String) {
        for index in renditions.indices { renditions[index].attributes.mapURI(transform) }
        for index in variants.indices { variants[index].uri = transform(variants[index].uri) }
        for index in iframeVariants.indices { iframeVariants[index].attributes.mapURI(transform) }
        for index in sessionData.indices { sessionData[index].mapURI(transform) }
        for index in sessionKeys.indices { sessionKeys[index].attributes.mapURI(transform) }
    }
}

/// A playlist of media segments.
public struct MediaPlaylist: Hashable, Sendable {
    public var header = PlaylistHeader()
    /// `EXT-X-TARGETDURATION`, seconds.
    public var targetDuration: Int?
    /// `EXT-X-MEDIA-SEQUENCE`.
    public var mediaSequence: Int64 = 0
    /// `EXT-X-DISCONTINUITY-SEQUENCE`.
    public var discontinuitySequence: Int64 = 0
    /// `EXT-X-PLAYLIST-TYPE`: `VOD` or `EVENT`.
    public var playlistType: String?
    /// `EXT-X-I-FRAMES-ONLY`.
    public var iFramesOnly = false
    /// `EXT-X-ENDLIST`: no segments will be added.
    public var endList = false
    public var segments: [Segment] = []
    /// Unknown lines after the last segment, verbatim, and the `EXTINF` of a segment a live
    /// playlist does not list yet.
    public var trailingLines: [String] = []

    public init() {}

    /// The sum of the segments' durations, in seconds.
    public var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }

    mutating func mapURIs(_ transform: (String) -> String) {
        for index in segments.indices {
            segments[index].uri = transform(segments[index].uri)
            for key in segments[index].keys.indices { segments[index].keys[key].attributes.mapURI(transform) }
            segments[index].map?.attributes.mapURI(transform)
            segments[index].leadingLines = segments[index].leadingLines.map {
                LowLatencyTags.mappingURI($0, transform)
            }
        }
        trailingLines = trailingLines.map { LowLatencyTags.mappingURI($0, transform) }
    }
}

extension AttributeList {
    /// Replaces the `URI` attribute, if there is one.
    mutating func mapURI(_ transform: (String) -> String) {
        if let uri = self["URI"] { setQuoted("URI", to: transform(uri)) }
    }

    /// The value of `name` as a decimal integer.
    func integer(_ name: String) -> Int64? { self[name].flatMap { Int64($0) } }

    /// The value of `name` as a decimal floating-point number.
    func decimal(_ name: String) -> Double? { self[name].flatMap { Double($0) } }

    /// `YES` (true), `NO` (false) or absent (false).
    func flag(_ name: String) -> Bool { self[name] == "YES" }
}
