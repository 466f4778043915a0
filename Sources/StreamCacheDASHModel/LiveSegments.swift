import Foundation

/// A media segment of a representation of a dynamic MPD, placed on its period's timeline.
public struct LiveSegment: Hashable, Sendable {
    public var url: URL
    /// Seconds from its period's start (its time less the `presentationTimeOffset`).
    public var start: Double
    public var duration: Double
    /// Its `$Number$`; -1 where it is not known.
    public var number: Int64

    public init(url: URL, start: Double, duration: Double, number: Int64) {
        self.url = url
        self.start = start
        self.duration = duration
        self.number = number
    }

    public var end: Double { start + duration }
}

/// What a representation of a dynamic MPD offers at one moment: its initialization segment and
/// the media segments available then (ISO/IEC 23009-1 §5.3.9.5.3).
public struct LiveWindow: Hashable, Sendable {
    public var initialization: URL?
    public var segments: [LiveSegment]
    /// Whether its `media` template names segments by `$Number$`.
    public var isNumbered: Bool

    public init(initialization: URL?, segments: [LiveSegment], isNumbered: Bool) {
        self.initialization = initialization
        self.segments = segments
        self.isNumbered = isNumbered
    }
}

extension DASHRepresentation {
    /// The segments of the representation, in a dynamic MPD, available `elapsed` seconds after its
    /// period began that end after `after` seconds and within the time-shift buffer of `depth`
    /// seconds (`nil`: unbounded): the newest `limit` of them when there are more. Found by
    /// arithmetic on each `SegmentTimeline` entry or on the template's `duration`, never by
    /// counting from the first segment, so that a presentation that began years ago costs no
    /// more than one that began a minute ago. A timeline's entries are taken as listed (the
    /// origin lists what it has published); a `duration` makes available what has ended by
    /// `elapsed`.
    ///
    /// - Throws: ``ManifestParseError`` for addressing other than a `SegmentTemplate`, a
    ///   template or timeline that cannot be read, or numbers past what the MPD can count.
    public func liveWindow(
        elapsed: Double,
        depth: Double?,
        after: Double,
        limit: Int
    ) throws(ManifestParseError)
        -> LiveWindow
    {
        guard let node = addressing, node.localName == "SegmentTemplate" else {
            throw ManifestParseError(
                "representation \(id) of a live MPD is not addressed by a SegmentTemplate: it cannot be recorded"
            )
        }
        let name = "SegmentTemplate of representation \(id)"
        let timescale = try ManifestNumber.timescale(node, name)
        let startNumber = try ManifestNumber.whole(node.attributes["startNumber"], "startNumber", of: name) ?? 1
        let offset =
            try ManifestNumber.whole(node.attributes["presentationTimeOffset"], "presentationTimeOffset", of: name) ?? 0
        guard let media = node.attributes["media"] else { throw ManifestParseError("\(name) has no media attribute") }
        func url(_ template: String, number: Int64?, time: Int64?) throws(ManifestParseError) -> URL {
            let text = try TemplateURL.expand(template, representation: self, number: number, time: time)
            guard let url = MediaPresentation.resolve(text, against: baseURL) else {
                throw ManifestParseError("\(name): invalid URL \(text.prefix(200))")
            }
            return url
        }
        var window = LiveWindow(
            initialization: try node.attributes["initialization"].map { template throws(ManifestParseError) in
                try url(template, number: nil, time: nil)
            },
            segments: [],
            isNumbered: media.contains("$Number")
        )
        // In the template's units: segments must end after `lower` and, by a duration, by `upper`.
        let upperSeconds = min(elapsed, periodDuration ?? elapsed)
        let lowerSeconds = max(after, depth.map { elapsed - $0 } ?? after)
        let upper = Self.units(upperSeconds, timescale) + offset
        let lower = Self.units(lowerSeconds, timescale) + offset
        // Runs of equal segments (time, duration, count, first number), newest last.
        var runs: [(time: Int64, duration: Int64, count: Int64, number: Int64)] = []
        if let timeline = node.elements("SegmentTimeline").first {
            var time: Int64 = 0
            var number = startNumber
            let entries = timeline.elements("S")
            for (position, entry) in entries.enumerated() {
                let element = "S element \(position + 1) of representation \(id)"
                if let t = try ManifestNumber.whole(entry.attributes["t"], "t", of: element) { time = t }
                guard let duration = try ManifestNumber.whole(entry.attributes["d"], "d", of: element), duration > 0
                else { throw ManifestParseError("\(element) has no valid d") }
                var count = (entry.attributes["r"].flatMap { Int64($0) } ?? 0) + 1
                if count <= 0 {
                    // `r="-1"`: up to the next S's start, else as many as have ended by now.
                    let next = try entries.dropFirst(position + 1).first.flatMap { next throws(ManifestParseError) in
                        try ManifestNumber.whole(next.attributes["t"], "t", of: "S element \(position + 2)")
                    }
                    if let next {
                        count = next > time ? (next - time - 1) / duration + 1 : 0
                    } else {
                        count = upper > time ? (upper - time) / duration : 0
                    }
                }
                if count > 0 {
                    // The first of the run that ends after `lower`.
                    let skip = lower > time ? min(count, (lower - time) / duration) : 0
                    if skip < count {
                        runs.append(
                            (
                                try ManifestNumber.sum(time, skip * duration, of: element), duration, count - skip,
                                try ManifestNumber.sum(number, skip, of: element)
                            )
                        )
                    }
                    time = try ManifestNumber.sum(time, try Self.product(count, duration, of: element), of: element)
                    number = try ManifestNumber.sum(number, count, of: element)
                }
            }
        } else {
            guard let duration = try ManifestNumber.whole(node.attributes["duration"], "duration", of: name),
                duration > 0
            else { throw ManifestParseError("\(name) has neither a SegmentTimeline nor a duration") }
            // Segment k spans [offset + k·d, offset + (k+1)·d): those ended by `upper`, ending after `lower`.
            let first = max(0, (lower - offset) / duration)
            let last = (upper - offset) / duration - 1
            if last >= first {
                runs.append(
                    (
                        try ManifestNumber.sum(offset, try Self.product(first, duration, of: name), of: name), duration,
                        last - first + 1, try ManifestNumber.sum(startNumber, first, of: name)
                    )
                )
            }
        }
        // The newest `limit`, oldest first.
        var remaining = Int64(limit)
        var chosen: [(time: Int64, duration: Int64, count: Int64, number: Int64)] = []
        for run in runs.reversed() where remaining > 0 {
            let taken = min(run.count, remaining)
            let skipped = run.count - taken
            chosen.append((run.time + skipped * run.duration, run.duration, taken, run.number + skipped))
            remaining -= taken
        }
        for run in chosen.reversed() {
            for k in 0..<run.count {
                let time = run.time + k * run.duration
                let number = run.number + k
                window.segments.append(
                    LiveSegment(
                        url: try url(media, number: number, time: time),
                        start: Double(time - offset) / timescale,
                        duration: Double(run.duration) / timescale,
                        number: number
                    )
                )
            }
        }
        return window
    }

    /// `seconds` in units of `timescale`, within what the MPD can count.
    private static func units(_ seconds: Double, _ timescale: Double) -> Int64 {
        let units = (seconds * timescale).rounded(.down)
        return Int64(max(-Double(ManifestNumber.maximumWhole), min(Double(ManifestNumber.maximumWhole), units)))
    }

    private static func product(_ a: Int64, _ b: Int64, of element: String) throws(ManifestParseError) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        guard !overflow, product <= ManifestNumber.maximumWhole else {
            throw ManifestParseError("\(element) counts past \(ManifestNumber.maximumWhole)")
        }
        return product
    }
}
