import Foundation

/// A part of a stream's timeline to download (`--section 1:02:00-1:04:30`): from `start` to
/// `end` seconds of the presentation, `end` `nil` for the rest of it.
package struct TimeSection: Codable, Hashable, Sendable, CustomStringConvertible {
    package var start: Double
    package var end: Double?

    package init(start: Double, end: Double?) {
        self.start = start
        self.end = end
    }

    /// Parses `START-END`: each side seconds (`90`, `90.5`) or `[H:]M:SS[.fff]`, `*` for the
    /// stream's start or end (`*-10:00`, `1:00:00-*`).
    ///
    /// - Throws: ``OfflineError`` `section` saying what is wrong: a side that is no time, an end
    ///   not after the start.
    package init(parsing text: String) throws(OfflineError) {
        let sides = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let shown = String(text.prefix(60))
        guard sides.count == 2 else {
            throw OfflineError(
                .section,
                "invalid section '\(shown)': expected START-END, such as 1:02:00-1:04:30 or 90-150"
            )
        }
        func time(_ side: Substring, star: Double?) throws(OfflineError) -> Double? {
            let trimmed = side.trimmingCharacters(in: .whitespaces)
            if trimmed == "*" { return star }
            guard let seconds = Self.seconds(trimmed) else {
                throw OfflineError(
                    .section,
                    "invalid section '\(shown)': '\(trimmed.prefix(20))' is not a time such as 90, 1:30 or 1:02:00.5"
                )
            }
            return seconds
        }
        start = try time(sides[0], star: 0) ?? 0
        end = try time(sides[1], star: nil)
        if let end, end <= start {
            throw OfflineError(.section, "invalid section '\(shown)': its end is not after its start")
        }
    }

    /// Seconds in `90`, `90.5`, `1:30`, `1:02:00.25`; `nil` for anything else.
    package static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), text.count <= 20 else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let last = index == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (last && $0 == ".")) }),
                let value = Double(part), value.isFinite
            else { return nil }
            // Minutes and seconds after a colon are under 60.
            if index > 0, value >= 60 { return nil }
            total = total * 60 + value
        }
        return total
    }

    /// Whether the media from `time` for `duration` seconds plays inside the section, or ends
    /// within ``edge`` before it.
    package func overlaps(_ time: Double, duration: Double) -> Bool {
        time + max(duration, 0) + Self.edge > start && (end.map { time < $0 } ?? true)
    }

    /// How far past a playlist's end of a segment its media may play: a stream's timestamps may
    /// sit later than its playlist's times say (ffmpeg's MPEG-TS starts after zero, its video
    /// a frame after its audio), so the frame shown at a section's start and the audio frame
    /// around it may lie in the segment that, by the playlist, ends right there.
    package static let edge = 0.25

    /// `1:02:00-1:04:30`, `0:00-10:00`, `1:00:00-*`: as a user writes it.
    package var description: String {
        Self.clock(start) + "-" + (end.map(Self.clock) ?? "*")
    }

    /// `H:MM:SS`, `M:SS`, with a fraction where there is one.
    package static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let fraction = seconds - Double(whole)
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        var text =
            hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
        if fraction >= 0.0005 { text += String(format: ".%03d", Int((fraction * 1000).rounded())) }
        return text
    }
}

/// The sections a download keeps: none means the whole stream.
package struct TimeSections: Codable, Hashable, Sendable {
    package var sections: [TimeSection]

    package init(_ sections: [TimeSection] = []) {
        self.sections = sections.sorted { $0.start < $1.start }
    }

    package var isWhole: Bool { sections.isEmpty }

    /// Refuses sections that overlap one another.
    ///
    /// - Throws: ``OfflineError`` `section` naming two that overlap.
    package func checkApart() throws(OfflineError) {
        for (first, second) in zip(sections, sections.dropFirst()) where first.end.map({ $0 > second.start }) ?? true {
            throw OfflineError(.section, "sections \(first) and \(second) overlap: give them as one")
        }
    }

    /// Whether the media from `time` for `duration` seconds plays in any section (in the whole
    /// stream when there is none).
    package func keep(_ time: Double, duration: Double) -> Bool {
        isWhole || sections.contains { $0.overlaps(time, duration: duration) }
    }

    /// Refuses a section that starts at or past `duration`, the stream's length in seconds.
    ///
    /// - Throws: ``OfflineError`` `section` naming the section and the length.
    package func checkWithin(_ duration: Double, of url: String) throws(OfflineError) {
        for section in sections where section.start >= duration {
            throw OfflineError(
                .section,
                "section \(section) starts past the end of \(url.prefix(200)), which lasts \(TimeSection.clock(duration))"
            )
        }
    }

    /// What names the sections in an asset's id: none for the whole stream.
    package var identity: [String] {
        sections.map {
            "section:" + String(format: "%.3f-", $0.start) + ($0.end.map { String(format: "%.3f", $0) } ?? "*")
        }
    }
}

/// A rendition's first segment, kept in a package of sections that may not play it: where the
/// stream's timeline begins, which a section's start counts from (a player's clock and ffmpeg's
/// `-ss` alike). Paths are relative to the package folder.
package struct TimelineHead: Codable, Hashable, Sendable {
    /// The init section the segment needs, if any.
    package var initialization: String?
    package var segment: String

    package init(initialization: String?, segment: String) {
        self.initialization = initialization
        self.segment = segment
    }
}
