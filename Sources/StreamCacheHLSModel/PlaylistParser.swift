/// Reads playlist text into a ``Playlist``, line by line. Which kind it is follows from the first
/// tag only one kind may hold; tags of the other kind after that are an error.
struct PlaylistParser {
    private enum Kind { case unknown, multivariant, media }

    /// The most lines a playlist may have that are not blank. Every segment, variant, rendition
    /// and kept unknown line comes from a line of its own, so this bounds what a playlist
    /// expands to in memory whatever its bytes (a playlist of one-character segments holds an
    /// entry for every few bytes). A day of short segments, each with a date, fits well within.
    static let maximumLines = 250_000

    private var kind = Kind.unknown
    private var variables: Variables
    private var header = PlaylistHeader()
    private var multivariant = MultivariantPlaylist()
    private var media = MediaPlaylist()
    /// Unknown lines waiting for the variant or segment they precede.
    private var pendingLines: [String] = []
    /// An `EXT-X-STREAM-INF` waiting for its URI line, and its line number.
    private var pendingVariant: (attributes: AttributeList, line: Int)?
    /// What applies to the next segment.
    private var next = NextSegment()
    /// What stays in force from segment to segment.
    private var keys: [Key] = []
    private var map: MediaInitialization?
    private var bitrate: Int64?

    private struct NextSegment {
        var extinf: (duration: Double, title: String, line: Int, text: String)?
        var byteRange: (length: Int64, offset: Int64?, line: Int)?
        var discontinuity = false
        var programDateTime: String?
        var gap = false
        var dateRanges: [AttributeList] = []
    }

    init(url: String?, imported: [String: String]) {
        variables = Variables(url: url, imported: imported)
    }

    consuming func parse(_ text: String) throws(HLSParseError) -> Playlist {
        var number = 0
        var kept = 0
        var sawHeader = false
        for var line in Lines(text) {
            number += 1
            if number == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            kept += 1
            guard kept <= Self.maximumLines else {
                throw HLSParseError(
                    line: number,
                    "the playlist has more than \(Self.maximumLines) lines; it is refused"
                )
            }
            guard sawHeader else {
                if line.trimmingSuffixSpaces() == "#EXTM3U" {
                    sawHeader = true
                } else if line.hasPrefix("#") && !line.hasPrefix("#EXT") {
                    pendingLines.append(String(line))  // a comment before #EXTM3U, as files often have
                } else {
                    throw HLSParseError(
                        line: number,
                        "not an HLS playlist: the first line must be #EXTM3U",
                        isMissingHeader: true
                    )
                }
                continue
            }
            if line.hasPrefix("#") {
                try tag(line, number: number)
            } else {
                try uriLine(String(line).trimmingSpaces(), number: number)
            }
        }
        guard sawHeader else { throw HLSParseError(line: 0, "empty playlist: no #EXTM3U", isMissingHeader: true) }
        if let pendingVariant {
            throw HLSParseError(line: pendingVariant.line, "EXT-X-STREAM-INF without a URI line (truncated playlist?)")
        }
        if let extinf = next.extinf {
            // A live playlist may end with a segment still being written: kept as text, not a segment.
            guard !media.endList else {
                throw HLSParseError(line: extinf.line, "EXTINF without a URI line (truncated playlist?)")
            }
            pendingLines.append(extinf.text)
        }
        switch kind {
        case .multivariant:
            multivariant.header = header
            multivariant.trailingLines = pendingLines
            return .multivariant(multivariant)
        case .media, .unknown:
            media.header = header
            media.trailingLines = pendingLines
            return .media(media)
        }
    }

    // MARK: Lines

    private mutating func uriLine(_ text: String, number: Int) throws(HLSParseError) {
        let uri = try variables.substitute(text, line: number)
        if let pending = pendingVariant {
            var variant = Variant(attributes: pending.attributes, uri: uri)
            variant.leadingLines = pendingLines
            pendingLines = []
            multivariant.variants.append(variant)
            pendingVariant = nil
            return
        }
        guard kind != .multivariant else {
            throw HLSParseError(line: number, "URI line without EXT-X-STREAM-INF")
        }
        guard let extinf = next.extinf else { throw HLSParseError(line: number, "URI line without #EXTINF") }
        var segment = Segment(uri: uri, duration: extinf.duration, title: extinf.title)
        if let range = next.byteRange {
            segment.byteRange = try byteRange(range, uri: uri)
        }
        segment.keys = keys
        segment.map = map
        segment.bitrate = bitrate
        segment.discontinuity = next.discontinuity
        segment.programDateTime = next.programDateTime
        segment.gap = next.gap
        segment.dateRanges = next.dateRanges
        segment.leadingLines = pendingLines
        pendingLines = []
        next = NextSegment()
        media.segments.append(segment)
    }

    /// A byte range with its offset: given, or where the previous segment of the same URI ended.
    private func byteRange(
        _ range: (length: Int64, offset: Int64?, line: Int),
        uri: String
    ) throws(HLSParseError) -> SegmentByteRange {
        if let offset = range.offset { return SegmentByteRange(offset: offset, length: range.length) }
        guard let previous = media.segments.last, previous.uri == uri, let before = previous.byteRange else {
            throw HLSParseError(
                line: range.line,
                "EXT-X-BYTERANGE without an offset must follow a byte range of the same URI"
            )
        }
        guard before.offset <= Int64.max - before.length - range.length else {
            throw HLSParseError(line: range.line, "EXT-X-BYTERANGE runs past the largest offset")
        }
        return SegmentByteRange(offset: before.offset + before.length, length: range.length)
    }

    private mutating func tag(_ line: Substring, number: Int) throws(HLSParseError) {
        let colon = line.firstIndex(of: ":")
        let name = String(line[line.index(after: line.startIndex)..<(colon ?? line.endIndex)])
        let value = colon.map { line[line.index(after: $0)...] } ?? ""
        switch name {
        case "EXTM3U": return
        case "EXT-X-VERSION":
            guard let version = Int(value), (1...99).contains(version) else {
                throw HLSParseError(line: number, "invalid EXT-X-VERSION '\(value.prefix(40))'")
            }
            header.version = version
        case "EXT-X-INDEPENDENT-SEGMENTS": header.independentSegments = true
        case "EXT-X-START":
            let attributes = try self.attributes(value, of: name, line: number)
            try require(attributes, decimal: "TIME-OFFSET", of: name, line: number)
            header.start = attributes
        case "EXT-X-DEFINE":
            let attributes = try self.attributes(value, of: name, line: number)
            try variables.define(attributes, line: number)
            header.defines.append(attributes)
        case "EXT-X-STREAM-INF", "EXT-X-MEDIA", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY":
            try become(.multivariant, tag: name, line: number)
            try multivariantTag(name, value, number: number)
        case "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE",
            "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-ENDLIST", "EXT-X-BYTERANGE", "EXT-X-DISCONTINUITY",
            "EXT-X-KEY", "EXT-X-MAP", "EXT-X-PROGRAM-DATE-TIME", "EXT-X-GAP", "EXT-X-BITRATE", "EXT-X-DATERANGE":
            try become(.media, tag: name, line: number)
            try mediaTag(name, value, number: number)
        default:
            // Unknown tags, comments and low-latency tags (of no use offline) are kept verbatim
            // with the variant or segment they precede.
            pendingLines.append(String(line))
        }
    }

    private mutating func become(_ wanted: Kind, tag: String, line: Int) throws(HLSParseError) {
        if kind == .unknown { kind = wanted }
        guard kind == wanted else {
            let other = wanted == .media ? "a multivariant" : "a media"
            throw HLSParseError(line: line, "\(tag) cannot appear in \(other) playlist")
        }
        if let pendingVariant {
            throw HLSParseError(line: pendingVariant.line, "EXT-X-STREAM-INF without a URI line")
        }
    }

    private mutating func multivariantTag(_ name: String, _ value: Substring, number: Int) throws(HLSParseError) {
        let attributes = try self.attributes(value, of: name, line: number)
        switch name {
        case "EXT-X-STREAM-INF":
            try require(attributes, integer: "BANDWIDTH", of: name, line: number)
            try checkVariant(attributes, of: name, line: number)
            pendingVariant = (attributes, number)
        case "EXT-X-I-FRAME-STREAM-INF":
            // Kept even with a missing or invalid BANDWIDTH (seen in the wild): I-frame variants
            // only serve trick play, and nothing is chosen by their bandwidth.
            try require(attributes, "URI", of: name, line: number)
            try checkVariant(attributes, of: name, line: number)
            multivariant.iframeVariants.append(IFrameVariant(attributes: attributes))
        case "EXT-X-MEDIA":
            for required in ["TYPE", "GROUP-ID", "NAME"] { try require(attributes, required, of: name, line: number) }
            let type = attributes["TYPE"] ?? ""
            guard ["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"].contains(type) else {
                throw HLSParseError(line: number, "EXT-X-MEDIA has an unknown TYPE '\(type.prefix(40))'")
            }
            if type == "SUBTITLES" { try require(attributes, "URI", of: name, line: number) }
            if type == "CLOSED-CAPTIONS", attributes["URI"] != nil {
                throw HLSParseError(line: number, "EXT-X-MEDIA of TYPE CLOSED-CAPTIONS cannot have a URI")
            }
            multivariant.renditions.append(Rendition(attributes: attributes))
        case "EXT-X-SESSION-DATA":
            try require(attributes, "DATA-ID", of: name, line: number)
            multivariant.sessionData.append(attributes)
        default:  // EXT-X-SESSION-KEY
            let key = try self.key(attributes, of: name, line: number)
            guard key.method != "NONE" else {
                throw HLSParseError(line: number, "EXT-X-SESSION-KEY cannot have METHOD=NONE")
            }
            multivariant.sessionKeys.append(key)
        }
    }

    private mutating func mediaTag(_ name: String, _ value: Substring, number: Int) throws(HLSParseError) {
        switch name {
        case "EXTINF":
            let comma = value.firstIndex(of: ",")
            let text = String(value[..<(comma ?? value.endIndex)]).trimmingSpaces()
            guard let duration = Double(text), duration.isFinite, duration >= 0, duration < 1e9 else {
                throw HLSParseError(line: number, "invalid EXTINF duration '\(text.prefix(40))'")
            }
            let title = comma.map { String(value[value.index(after: $0)...]) } ?? ""
            next.extinf = (duration, title, number, "#EXTINF:" + value)
        case "EXT-X-TARGETDURATION": media.targetDuration = Int(try integer(value, of: name, line: number))
        case "EXT-X-MEDIA-SEQUENCE": media.mediaSequence = try integer(value, of: name, line: number)
        case "EXT-X-DISCONTINUITY-SEQUENCE": media.discontinuitySequence = try integer(value, of: name, line: number)
        case "EXT-X-PLAYLIST-TYPE":
            guard value == "VOD" || value == "EVENT" else {
                throw HLSParseError(line: number, "EXT-X-PLAYLIST-TYPE must be VOD or EVENT, not '\(value.prefix(40))'")
            }
            media.playlistType = String(value)
        case "EXT-X-I-FRAMES-ONLY": media.iFramesOnly = true
        case "EXT-X-ENDLIST": media.endList = true
        case "EXT-X-BYTERANGE":
            guard let (length, offset) = SegmentByteRange.parts(String(value)) else {
                throw HLSParseError(line: number, "invalid EXT-X-BYTERANGE '\(value.prefix(40))'")
            }
            next.byteRange = (length, offset, number)
        case "EXT-X-DISCONTINUITY": next.discontinuity = true
        case "EXT-X-PROGRAM-DATE-TIME": next.programDateTime = String(value)
        case "EXT-X-GAP": next.gap = true
        case "EXT-X-BITRATE": bitrate = try integer(value, of: name, line: number)
        case "EXT-X-DATERANGE": next.dateRanges.append(try attributes(value, of: name, line: number))
        case "EXT-X-KEY":
            let key = try self.key(try attributes(value, of: name, line: number), of: name, line: number)
            if key.method == "NONE" {
                keys = []
            } else if let index = keys.firstIndex(where: { $0.keyFormat == key.keyFormat }) {
                keys[index] = key
            } else {
                keys.append(key)
            }
        default:  // EXT-X-MAP
            let attributes = try self.attributes(value, of: name, line: number)
            try require(attributes, "URI", of: name, line: number)
            let initialization = MediaInitialization(attributes: attributes)
            if attributes["BYTERANGE"] != nil, initialization.byteRange == nil {
                throw HLSParseError(line: number, "invalid BYTERANGE in EXT-X-MAP")
            }
            map = initialization
        }
    }

    // MARK: Values

    private func attributes(_ value: Substring, of tag: String, line: Int) throws(HLSParseError) -> AttributeList {
        var attributes: AttributeList
        do {
            attributes = try AttributeList(parsing: value)
        } catch {
            throw HLSParseError(line: line, "\(tag): \(error.reason)")
        }
        let variables = variables
        try attributes.transformQuotedValues { value throws(HLSParseError) in
            try variables.substitute(value, line: line)
        }
        return attributes
    }

    private func key(_ attributes: AttributeList, of tag: String, line: Int) throws(HLSParseError) -> Key {
        try require(attributes, "METHOD", of: tag, line: line)
        let key = Key(attributes: attributes)
        if key.method != "NONE" { try require(attributes, "URI", of: tag, line: line) }
        if let iv = key.iv, key.ivBytes == nil {
            throw HLSParseError(line: line, "\(tag) has an invalid IV '\(iv.prefix(40))'")
        }
        return key
    }

    private func checkVariant(_ attributes: AttributeList, of tag: String, line: Int) throws(HLSParseError) {
        if attributes["AVERAGE-BANDWIDTH"] != nil {
            try require(attributes, integer: "AVERAGE-BANDWIDTH", of: tag, line: line)
        }
        if let resolution = attributes["RESOLUTION"], Resolution(parsing: resolution) == nil {
            throw HLSParseError(line: line, "\(tag) has an invalid RESOLUTION '\(resolution.prefix(40))'")
        }
        if attributes["FRAME-RATE"] != nil { try require(attributes, decimal: "FRAME-RATE", of: tag, line: line) }
    }

    private func require(_ attributes: AttributeList, _ name: String, of tag: String, line: Int) throws(HLSParseError) {
        guard attributes[name] != nil else { throw HLSParseError(line: line, "\(tag) has no \(name)") }
    }

    private func require(
        _ attributes: AttributeList,
        integer name: String,
        of tag: String,
        line: Int
    ) throws(HLSParseError) {
        try require(attributes, name, of: tag, line: line)
        guard let value = attributes.integer(name), value >= 0, value <= Self.largestNumber else {
            throw HLSParseError(line: line, "\(tag) has an invalid \(name) '\(attributes[name]!.prefix(40))'")
        }
    }

    private func require(
        _ attributes: AttributeList,
        decimal name: String,
        of tag: String,
        line: Int
    ) throws(HLSParseError) {
        try require(attributes, name, of: tag, line: line)
        guard let value = attributes.decimal(name), value.isFinite else {
            throw HLSParseError(line: line, "\(tag) has an invalid \(name) '\(attributes[name]!.prefix(40))'")
        }
    }

    /// A tag's decimal-integer, at most ``largestNumber``.
    private func integer(_ value: Substring, of tag: String, line: Int) throws(HLSParseError) -> Int64 {
        guard let number = Int64(value.trimmingSuffixSpaces()), number >= 0 else {
            throw HLSParseError(line: line, "invalid \(tag) '\(value.prefix(40))'")
        }
        guard number <= Self.largestNumber else {
            throw HLSParseError(line: line, "\(tag) \(number) is past 2^53, the largest number a playlist may give")
        }
        return number
    }

    /// The largest integer a playlist's tags may give (2^53, exact as a double too): a sequence
    /// number plus the count of a playlist's segments, a duration times a count, never overflow.
    /// Millisecond clocks used as sequence numbers are far below it.
    static let largestNumber: Int64 = 1 << 53
}

extension Substring {
    func trimmingSuffixSpaces() -> Substring {
        var text = self
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

/// The lines of a text, ended by LF, CRLF or CR, read lazily (a huge non-playlist fails on its
/// first line without the rest being split).
private struct Lines: Sequence, IteratorProtocol {
    private let text: String
    private var position: String.Index
    private var done = false

    init(_ text: String) {
        self.text = text
        position = text.startIndex
    }

    mutating func next() -> Substring? {
        guard !done else { return nil }
        let bytes = text.utf8
        var end = position
        while end < bytes.endIndex, bytes[end] != 0x0A, bytes[end] != 0x0D { end = bytes.index(after: end) }
        let line = text[position..<end]
        if end == bytes.endIndex {
            done = true
        } else {
            var after = bytes.index(after: end)
            if bytes[end] == 0x0D, after < bytes.endIndex, bytes[after] == 0x0A { after = bytes.index(after: after) }
            position = after
        }
        return line
    }
}
