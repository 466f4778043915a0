import Foundation
import StreamCacheDASHModel

extension LiveSchedule {
    /// The live view at `now` of the static MPD `text`, with the number of segments it lists over
    /// its representations; `nil` for an MPD that is dynamic already, lists no
    /// `SegmentTimeline`, does not parse, or whose timelines make more segments than one MPD may
    /// (``SegmentBudget``): served as it is.
    ///
    /// Each timeline lists what ``listed(_:elapsed:)`` says of its segments (a sliding window
    /// drops the oldest, moving `startNumber` with them); the MPD is `dynamic`, its
    /// `availabilityStartTime` a first window of longest segments before the streams began
    /// (what is listed at first is available), updated every longest segment. Once every
    /// timeline lists every segment it is the static MPD it was (the stream turns VOD).
    func mpdView(of text: [UInt8], at now: ContinuousClock.Instant = .now) -> (text: String, listed: Int)? {
        guard var presentation = try? MediaPresentation(parsing: text), !presentation.isDynamic else { return nil }
        var trim = TimelineTrim(schedule: self, elapsed: Self.seconds(now - started))
        presentation.root = trim.trimmed(presentation.root)
        guard trim.timelines > 0, !trim.isOverBudget else { return nil }
        if trim.allListed { return (String(decoding: text, as: UTF8.self), trim.listed) }
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var root = presentation.root
        root.attributes["type"] = "dynamic"
        // As if the first window had been published as it played: those segments are available
        // at once by the MPD's own timing.
        let firstWindow = trim.longest * Double(window)
        root.attributes["availabilityStartTime"] = dates.string(from: wallClockStart.addingTimeInterval(-firstWindow))
        root.attributes["publishTime"] = dates.string(from: wallClockStart.addingTimeInterval(trim.elapsed))
        root.attributes["minimumUpdatePeriod"] = String(format: "PT%.3fS", trim.longest)
        root.attributes["mediaPresentationDuration"] = nil
        if !isEvent {
            root.attributes["timeShiftBufferDepth"] = String(format: "PT%.3fS", trim.longest * Double(window))
        }
        return (root.xml(), trim.listed)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Cuts every `SegmentTimeline` of an MPD to what a ``LiveSchedule`` lists `elapsed` seconds
/// after the streams began, counting what it did.
private struct TimelineTrim {
    let schedule: LiveSchedule
    let elapsed: Double
    var timelines = 0
    var listed = 0
    var allListed = true
    /// The longest segment seen, in seconds.
    var longest = 0.0
    /// The segments all timelines may make together.
    var budget = SegmentBudget()
    /// Whether the timelines make more segments than one MPD may.
    var isOverBudget = false

    mutating func trimmed(_ node: XMLNode) -> XMLNode {
        var node = node
        if node.localName == "SegmentTemplate", let index = node.children.firstIndex(where: Self.isTimeline) {
            trim(&node, timelineAt: index)
            return node
        }
        for index in node.children.indices {
            if case .element(let child) = node.children[index] { node.children[index] = .element(trimmed(child)) }
        }
        return node
    }

    /// Lists in `template`'s timeline (its child at `index`) the segments the schedule has
    /// published, each as an `S` of its own (the first with its time).
    private mutating func trim(_ template: inout XMLNode, timelineAt index: Int) {
        guard case .element(var timeline) = template.children[index] else { return }
        let timescale = max(1, Double(template.attributes["timescale"] ?? "1") ?? 1)
        var segments: [(time: Int64, duration: Int64)] = []
        var next: Int64 = 0
        for entry in timeline.elements("S") {
            guard let duration = entry.attributes["d"].flatMap({ Int64($0) }), duration > 0 else { continue }
            var time = entry.attributes["t"].flatMap { Int64($0) } ?? next
            let repeats = max(0, entry.attributes["r"].flatMap { Int64($0) } ?? 0)
            guard !isOverBudget, (try? budget.take(repeats + 1, for: "a timeline")) != nil else {
                isOverBudget = true
                return
            }
            for _ in 0...repeats {
                segments.append((time, duration))
                time += duration
            }
            next = time
        }
        guard !segments.isEmpty else { return }
        timelines += 1
        let count = schedule.listed(segments.map { Double($0.duration) / timescale }, elapsed: elapsed)
        let dropped = schedule.isEvent ? 0 : max(0, count - schedule.window)
        listed += count
        allListed = allListed && count == segments.count
        longest = max(longest, segments.map { Double($0.duration) / timescale }.max() ?? 0)
        timeline.children = segments[dropped..<count].enumerated().map { position, segment in
            var entry = XMLNode(name: "S", attributes: ["d": String(segment.duration)])
            if position == 0 { entry.attributes["t"] = String(segment.time) }
            return .element(entry)
        }
        template.children[index] = .element(timeline)
        let start = template.attributes["startNumber"].flatMap { Int64($0) } ?? 1
        template.attributes["startNumber"] = String(start + Int64(dropped))
    }

    private static func isTimeline(_ child: XMLNode.Child) -> Bool {
        if case .element(let node) = child { node.localName == "SegmentTimeline" } else { false }
    }
}
