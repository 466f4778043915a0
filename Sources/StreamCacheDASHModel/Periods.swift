import Foundation

/// One `Period` of an MPD with where it lies on the presentation's timeline.
public struct DASHPeriod: Hashable, Sendable {
    /// Its place among the MPD's periods, from 0.
    public var index: Int
    /// Its `id`, when it has one.
    public var id: String?
    /// Seconds from the presentation's start: its `start`, else where the one before ends.
    public var start: Double
    /// Seconds it lasts: its `duration`, else up to the next period's start or the
    /// presentation's end; `nil` when the MPD does not say.
    public var duration: Double?

    /// The most periods an MPD may have: enough for an episode with an advertisement break every
    /// minute for four hours, few enough that each period's files and folders stay countable.
    public static let maximumCount = 256
}

extension MediaPresentation {
    /// The periods in document order, each placed on the timeline (ISO/IEC 23009-1 §5.3.2.1).
    ///
    /// - Throws: ``ManifestParseError`` for more than ``DASHPeriod/maximumCount`` periods, a
    ///   `start` or `duration` that is not a duration of 0 s or more, a period that starts before
    ///   the one before it ends (overlapping), or one whose start cannot be told.
    public func periods() throws(ManifestParseError) -> [DASHPeriod] {
        let elements = root.elements("Period")
        guard elements.count <= DASHPeriod.maximumCount else {
            throw ManifestParseError(
                "it has \(elements.count) periods; at most \(DASHPeriod.maximumCount) are read"
            )
        }
        let total = try Self.seconds(root, "mediaPresentationDuration", of: "the MPD")
        var periods: [DASHPeriod] = []
        for (index, element) in elements.enumerated() {
            let name = "period \(index + 1)"
            let start = try Self.seconds(element, "start", of: name)
            let duration = try Self.seconds(element, "duration", of: name)
            let previous = periods.last
            let previousEnd = previous.map { previous in previous.duration.map { previous.start + $0 } } ?? 0
            guard let begins = start ?? previousEnd else {
                throw ManifestParseError(
                    "\(name) has no start, and the period before it no duration: where it begins cannot be told"
                )
            }
            if let previousEnd, begins < previousEnd - 0.001 {
                throw ManifestParseError(
                    "\(name) starts at \(Self.text(begins)) s, before period \(index) ends at \(Self.text(previousEnd)) s (overlapping periods)"
                )
            }
            if let previous, begins < previous.start {
                throw ManifestParseError(
                    "\(name) starts at \(Self.text(begins)) s, before period \(index) starts at \(Self.text(previous.start)) s"
                )
            }
            if let previous = periods.last, previous.duration == nil {
                periods[periods.count - 1].duration = begins - previous.start
            }
            periods.append(DASHPeriod(index: index, id: element.attributes["id"], start: begins, duration: duration))
        }
        if let last = periods.last, last.duration == nil, let total {
            guard total >= last.start else {
                throw ManifestParseError(
                    "period \(periods.count) starts at \(Self.text(last.start)) s, past the presentation's end at \(Self.text(total)) s"
                )
            }
            periods[periods.count - 1].duration = total - last.start
        }
        return periods
    }

    /// The attribute `name` of `element` in seconds, `nil` when it has none.
    ///
    /// - Throws: ``ManifestParseError`` when it is not a duration of 0 s or more.
    private static func seconds(
        _ element: XMLNode,
        _ name: String,
        of what: String
    ) throws(ManifestParseError)
        -> Double?
    {
        guard let text = element.attributes[name] else { return nil }
        guard let seconds = ISODuration.seconds(text) else {
            throw ManifestParseError("\(what) has \(name)=\"\(text.prefix(40))\", not a duration of 0 s or more")
        }
        return seconds
    }

    private static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int64(seconds)) : String(format: "%.3f", seconds)
    }
}
