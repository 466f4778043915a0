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

    /// The most segments one MPD may have, all its representations together: a timeline whose
    /// repeat counts would make more is refused before it is expanded (``SegmentBudget``).
    public static let maximumSegments = 500_000

    public init(initialization: SegmentReference?, media: [SegmentReference]) {
        self.initialization = initialization
        self.media = media
    }

    /// The segments of `representation`, taken from its document's `budget` before they are made.
    ///
    /// - Throws: ``ManifestParseError`` naming the element, for a template identifier it does not
    ///   know, a timeline, duration or list past what is left of the budget, a representation
    ///   whose number of segments nothing says, or a URL that does not resolve.
    public init(_ representation: DASHRepresentation, budget: inout SegmentBudget) throws(ManifestParseError) {
        guard let addressing = representation.addressing else {
            // The representation is one file, its BaseURL.
            self.init(
                initialization: nil,
                media: [SegmentReference(url: representation.baseURL, duration: representation.periodDuration ?? 0)]
            )
            return
        }
        switch addressing.localName {
        case "SegmentTemplate": self = try Self.template(addressing, of: representation, budget: &budget)
        case "SegmentList": self = try Self.list(addressing, of: representation, budget: &budget)
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
        of representation: DASHRepresentation,
        budget: inout SegmentBudget
    ) throws(ManifestParseError) -> SegmentIndex {
        let name = "SegmentTemplate of representation \(representation.id)"
        let timescale = try ManifestNumber.timescale(node, name)
        let startNumber = try ManifestNumber.whole(node.attributes["startNumber"], "startNumber", of: name) ?? 1
        let offset =
            try ManifestNumber.whole(node.attributes["presentationTimeOffset"], "presentationTimeOffset", of: name) ?? 0
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
            let end = try representation.periodDuration.map { seconds throws(ManifestParseError) in
                try ManifestNumber.sum(try ManifestNumber.units(seconds, timescale, of: name), offset, of: name)
            }
            for (position, entry) in entries.enumerated() {
                let element = "S element \(position + 1) of representation \(representation.id)"
                if let t = try ManifestNumber.whole(entry.attributes["t"], "t", of: element) { time = t }
                guard let duration = try ManifestNumber.whole(entry.attributes["d"], "d", of: element), duration > 0,
                    Double(duration) / timescale <= ManifestNumber.maximumSeconds
                else {
                    throw ManifestParseError("\(element) has no valid d")
                }
                var repeats = entry.attributes["r"].flatMap { Int64($0) } ?? 0
                if repeats < 0 {
                    // Until the next S's start, or the end of the period.
                    let next = try entries.dropFirst(position + 1).first.flatMap { next throws(ManifestParseError) in
                        try ManifestNumber.whole(next.attributes["t"], "t", of: "S element \(position + 2)")
                    }
                    guard let until = next ?? end else {
                        throw ManifestParseError("\(element) repeats to an end the MPD does not give")
                    }
                    let span = until - time  // both within 0...2^62: no overflow
                    repeats = span > 0 ? (span - 1) / duration : 0
                }
                try budget.take(repeats + 1, for: "the SegmentTimeline of representation \(representation.id)")
                for _ in 0...repeats {
                    index.media.append(
                        SegmentReference(
                            url: try url(media, number: number, time: time),
                            duration: Double(duration) / timescale
                        )
                    )
                    time = try ManifestNumber.sum(time, duration, of: element)
                    number = try ManifestNumber.sum(number, 1, of: element)
                }
            }
            return index
        }
        guard let duration = try ManifestNumber.whole(node.attributes["duration"], "duration", of: name), duration > 0
        else {
            throw ManifestParseError("\(name) has neither a SegmentTimeline nor a duration")
        }
        guard let periodDuration = representation.periodDuration, periodDuration > 0 else {
            throw ManifestParseError(
                "the period of representation \(representation.id) has no duration to count its segments by"
            )
        }
        let seconds = Double(duration) / timescale
        let segments = (periodDuration / seconds).rounded(.up)
        try budget.take(segments < 1e18 ? Int64(segments) : Int64.max, for: "representation \(representation.id)")
        let count = Int(segments)
        var time = offset
        for position in 0..<count {
            let last = position == count - 1 ? periodDuration - seconds * Double(position) : seconds
            let number = try ManifestNumber.sum(startNumber, Int64(position), of: name)
            index.media.append(SegmentReference(url: try url(media, number: number, time: time), duration: last))
            time = try ManifestNumber.sum(time, duration, of: name)
        }
        return index
    }

    private static func list(
        _ node: XMLNode,
        of representation: DASHRepresentation,
        budget: inout SegmentBudget
    ) throws(ManifestParseError) -> SegmentIndex {
        let name = "SegmentList of representation \(representation.id)"
        let timescale = try ManifestNumber.timescale(node, name)
        let duration =
            try ManifestNumber.whole(node.attributes["duration"], "duration", of: name).map {
                Double($0) / timescale
            } ?? 0
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
        try budget.take(Int64(urls.count), for: "the SegmentList of representation \(representation.id)")
        for segment in urls {
            index.media.append(
                try reference(segment.attributes["media"], segment.attributes["mediaRange"], duration: duration)
            )
        }
        return index
    }

    /// `first-last` as a closed range within `0...ManifestNumber.maximumWhole`; `nil` for anything
    /// else.
    static func range(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, last >= first,
            last <= ManifestNumber.maximumWhole
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

/// Whole numbers an MPD gives (times, numbers, timescales), bounded where they are read so that
/// what is worked out from them stays within `Int64`: a value out of bounds, or a sum past them,
/// is an error naming the element, never a wrapped or trapped number.
enum ManifestNumber {
    /// The largest time, number or offset taken: 2^62, so that the sum of two never overflows.
    static let maximumWhole: Int64 = 1 << 62
    /// The longest period or segment taken, in seconds (about 31 years).
    static let maximumSeconds = 1e9

    /// `text` as a whole number in `0...maximumWhole`, `nil` when there is none.
    static func whole(_ text: String?, _ attribute: String, of element: String) throws(ManifestParseError) -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text), (0...maximumWhole).contains(value) else {
            throw ManifestParseError("\(element) has an invalid \(attribute) \(text.prefix(40))")
        }
        return value
    }

    /// The `timescale` of `node`: 1 when it gives none, up to 2^32 (an `unsignedInt`).
    static func timescale(_ node: XMLNode, _ element: String) throws(ManifestParseError) -> Double {
        guard let value = try whole(node.attributes["timescale"], "timescale", of: element) else { return 1 }
        guard (1...Int64(UInt32.max)).contains(value) else {
            throw ManifestParseError("\(element) has an invalid timescale \(value)")
        }
        return Double(value)
    }

    /// `a + b`, both read by ``whole(_:_:of:)`` or worked out from such numbers.
    static func sum(_ a: Int64, _ b: Int64, of element: String) throws(ManifestParseError) -> Int64 {
        let (total, overflow) = a.addingReportingOverflow(b)
        guard !overflow, total <= maximumWhole else {
            throw ManifestParseError("\(element) counts past \(maximumWhole)")
        }
        return total
    }

    /// `seconds` in units of `timescale`.
    static func units(_ seconds: Double, _ timescale: Double, of element: String) throws(ManifestParseError) -> Int64 {
        let units = (seconds * timescale).rounded()
        guard units.isFinite, units >= 0, units <= Double(maximumWhole) else {
            throw ManifestParseError("\(element) lasts longer than its timescale can count")
        }
        return Int64(units)
    }
}
