import Foundation

/// One resource a representation's segments are made of: a URL, and a byte range of it when the
/// MPD addresses one.
public struct SegmentReference: Hashable, Sendable {
    public var url: URL
    /// `first-last`, inclusive, as MPDs write them.
    public var range: ClosedRange<Int64>?
    /// Seconds (0 for an initialization segment).
    public var duration: Double

    public init(url: URL, range: ClosedRange<Int64>? = nil, duration: Double = 0) {
        self.url = url
        self.range = range
        self.duration = duration
    }
}

/// A representation's segments in order, worked out from its `SegmentTemplate` (with or without
/// a `SegmentTimeline`) or `SegmentList`; a `SegmentBase` representation is one file whose
/// index (`sidx`) says where its segments are (``sidx``).
public struct SegmentIndex: Hashable, Sendable {
    public var initialization: SegmentReference?
    public var media: [SegmentReference]
    /// For a `SegmentBase`: the file and the byte range of its `sidx` box, which says where its
    /// segments are (``media`` is then empty until the box is read).
    public var sidx: SegmentReference?

    /// The most segments one representation may have: a timeline whose repeat counts would make
    /// more is refused, not expanded.
    public static let maximumSegments = 500_000

    public init(initialization: SegmentReference?, media: [SegmentReference]) {
        self.initialization = initialization
        self.media = media
    }

    /// The segments of `representation`.
    ///
    /// - Throws: ``ManifestParseError`` naming the element, for a template identifier it does not
    ///   know, a timeline or duration past ``maximumSegments``, a representation whose number
    ///   of segments nothing says, or a URL that does not resolve.
    public init(_ representation: DASHRepresentation) throws(ManifestParseError) {
        guard let addressing = representation.addressing else {
            // The representation is one file, its BaseURL.
            self.init(
                initialization: nil,
                media: [SegmentReference(url: representation.baseURL, duration: representation.periodDuration ?? 0)]
            )
            return
        }
        switch addressing.localName {
        case "SegmentTemplate": self = try Self.template(addressing, of: representation)
        case "SegmentList": self = try Self.list(addressing, of: representation)
        default:
            var index = SegmentIndex(initialization: nil, media: [])
            let initialization = addressing.elements("Initialization").first?.attributes["range"].flatMap(Self.range)
            index.initialization = initialization.map { SegmentReference(url: representation.baseURL, range: $0) }
            guard let indexRange = addressing.attributes["indexRange"].flatMap(Self.range) else {
                throw ManifestParseError("SegmentBase of representation \(representation.id) has no valid indexRange")
            }
            index.sidx = SegmentReference(url: representation.baseURL, range: indexRange)
            self = index
        }
    }

    private static func template(
        _ node: XMLNode,
        of representation: DASHRepresentation
    ) throws(ManifestParseError) -> SegmentIndex {
        let timescale = Double(node.attributes["timescale"].flatMap { Int64($0) } ?? 1)
        let startNumber = node.attributes["startNumber"].flatMap { Int64($0) } ?? 1
        let offset = node.attributes["presentationTimeOffset"].flatMap { Int64($0) } ?? 0
        func url(_ template: String, number: Int64?, time: Int64?) throws(ManifestParseError) -> URL {
            let text = try TemplateURL.expand(template, representation: representation, number: number, time: time)
            guard let url = MediaPresentation.resolve(text, against: representation.baseURL) else {
                throw ManifestParseError(
                    "SegmentTemplate of representation \(representation.id): invalid URL \(text.prefix(200))"
                )
            }
            return url
        }
        var index = SegmentIndex(initialization: nil, media: [])
        if let initialization = node.attributes["initialization"] {
            index.initialization = SegmentReference(url: try url(initialization, number: nil, time: nil))
        }
        guard let media = node.attributes["media"] else {
            throw ManifestParseError("SegmentTemplate of representation \(representation.id) has no media attribute")
        }
        if let timeline = node.elements("SegmentTimeline").first {
            var time: Int64 = 0
            var number = startNumber
            let entries = timeline.elements("S")
            let end = representation.periodDuration.map { Int64($0 * timescale) + offset }
            for (position, entry) in entries.enumerated() {
                if let t = entry.attributes["t"].flatMap({ Int64($0) }) { time = t }
                guard let duration = entry.attributes["d"].flatMap({ Int64($0) }), duration > 0 else {
                    throw ManifestParseError(
                        "S element \(position + 1) of representation \(representation.id) has no valid d"
                    )
                }
                var repeats = entry.attributes["r"].flatMap { Int64($0) } ?? 0
                if repeats < 0 {
                    // Until the next S's start, or the end of the period.
                    let until = entries.dropFirst(position + 1).first?.attributes["t"].flatMap { Int64($0) } ?? end
                    guard let until else {
                        throw ManifestParseError(
                            "S element \(position + 1) of representation \(representation.id) repeats to an end the MPD does not give"
                        )
                    }
                    repeats = max(0, (until - time + duration - 1) / duration - 1)
                }
                guard repeats < Int64(maximumSegments) - Int64(index.media.count) else {
                    throw ManifestParseError(
                        "the SegmentTimeline of representation \(representation.id) makes more than \(maximumSegments) segments"
                    )
                }
                for _ in 0...repeats {
                    index.media.append(
                        SegmentReference(
                            url: try url(media, number: number, time: time),
                            duration: Double(duration) / timescale
                        )
                    )
                    time += duration
                    number += 1
                }
            }
            return index
        }
        guard let duration = node.attributes["duration"].flatMap({ Int64($0) }), duration > 0 else {
            throw ManifestParseError(
                "SegmentTemplate of representation \(representation.id) has neither a SegmentTimeline nor a duration"
            )
        }
        guard let periodDuration = representation.periodDuration, periodDuration > 0 else {
            throw ManifestParseError(
                "the period of representation \(representation.id) has no duration to count its segments by"
            )
        }
        let seconds = Double(duration) / timescale
        let count = Int((periodDuration / seconds).rounded(.up))
        guard count <= maximumSegments else {
            throw ManifestParseError(
                "representation \(representation.id) would have \(count) segments, more than \(maximumSegments)"
            )
        }
        for position in 0..<count {
            let last = position == count - 1 ? periodDuration - seconds * Double(position) : seconds
            index.media.append(
                SegmentReference(
                    url: try url(
                        media,
                        number: startNumber + Int64(position),
                        time: offset + Int64(position) * duration
                    ),
                    duration: last
                )
            )
        }
        return index
    }

    private static func list(
        _ node: XMLNode,
        of representation: DASHRepresentation
    ) throws(ManifestParseError) -> SegmentIndex {
        let timescale = Double(node.attributes["timescale"].flatMap { Int64($0) } ?? 1)
        let duration = node.attributes["duration"].flatMap { Double($0) }.map { $0 / timescale } ?? 0
        func reference(
            _ source: String?,
            _ range: String?,
            duration: Double
        ) throws(ManifestParseError) -> SegmentReference {
            let url =
                source.map { MediaPresentation.resolve($0, against: representation.baseURL) } ?? representation.baseURL
            guard let url else {
                throw ManifestParseError(
                    "SegmentList of representation \(representation.id): invalid URL \(source?.prefix(200) ?? "")"
                )
            }
            return SegmentReference(url: url, range: range.flatMap(Self.range), duration: duration)
        }
        var index = SegmentIndex(initialization: nil, media: [])
        if let initialization = node.elements("Initialization").first {
            index.initialization = try reference(
                initialization.attributes["sourceURL"],
                initialization.attributes["range"],
                duration: 0
            )
        }
        let urls = node.elements("SegmentURL")
        guard urls.count <= maximumSegments else {
            throw ManifestParseError(
                "the SegmentList of representation \(representation.id) has more than \(maximumSegments) segments"
            )
        }
        for segment in urls {
            index.media.append(
                try reference(segment.attributes["media"], segment.attributes["mediaRange"], duration: duration)
            )
        }
        return index
    }

    /// `first-last` as a closed range; `nil` for anything else.
    static func range(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, last >= first
        else {
            return nil
        }
        return first...last
    }
}

/// `$RepresentationID$`, `$Number$`, `$Bandwidth$` and `$Time$` (with `%0Nd` widths) and `$$`
/// substituted in a template (ISO/IEC 23009-1 §5.3.9.4.4).
enum TemplateURL {
    static func expand(
        _ template: String,
        representation: DASHRepresentation,
        number: Int64?,
        time: Int64?
    ) throws(ManifestParseError) -> String {
        var out = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let afterDollar = rest.index(after: dollar)
            guard let close = rest[afterDollar...].firstIndex(of: "$") else {
                throw ManifestParseError("template \(template.prefix(200)) has an unclosed $")
            }
            let identifier = rest[afterDollar..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                out += "$"
                continue
            }
            let name = identifier.prefix { $0 != "%" }
            let format = identifier.dropFirst(name.count)
            var width = 1
            if !format.isEmpty {
                guard format.hasPrefix("%0"), format.hasSuffix("d"), let parsed = Int(format.dropFirst(2).dropLast()),
                    (1...20).contains(parsed)
                else {
                    throw ManifestParseError("template \(template.prefix(200)): invalid format \(format.prefix(20))")
                }
                width = parsed
            }
            let value: String
            switch name {
            case "RepresentationID": value = representation.id
            case "Bandwidth": value = String(representation.bandwidth)
            case "Number":
                guard let number else {
                    throw ManifestParseError("template \(template.prefix(200)) uses $Number$ where it has no meaning")
                }
                value = String(number)
            case "Time":
                guard let time else {
                    throw ManifestParseError("template \(template.prefix(200)) uses $Time$ where it has no meaning")
                }
                value = String(time)
            default:
                throw ManifestParseError(
                    "template \(template.prefix(200)) has an unknown identifier $\(name.prefix(40))$"
                )
            }
            out += String(repeating: "0", count: max(0, width - value.count)) + value
        }
        return out + rest
    }
}
