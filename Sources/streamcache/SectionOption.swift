import ArgumentParser
import StreamCacheOffline

/// `--section START-END` as the commands take it: parsed, a bad one a usage error (exit 64).
enum SectionOption {
    /// What one `--section` names: a part of the timeline, or the chapter of that title.
    enum Choice: Equatable {
        case time(TimeSection)
        case chapter(String)
    }

    /// The one section `get` and `export` take; `nil` without the option.
    static func one(_ text: String?) throws -> TimeSection? {
        try text.map(parse)
    }

    /// The one section `get` takes, a time range or a chapter's title; `nil` without the option.
    /// A text of digits, colons, dots, `*` and a `-` is a time range, and a bad one a usage
    /// error; any other is a title.
    static func choice(_ text: String?) throws -> Choice? {
        guard let text else { return nil }
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--section is empty: give START-END or a chapter's title")
        }
        let shapedAsTimes = text.contains("-") && text.allSatisfy { "0123456789:.*- ".contains($0) }
        return shapedAsTimes ? .time(try parse(text)) : .chapter(text.trimmingCharacters(in: .whitespaces))
    }

    /// Every section `download` is given, a time range or a chapter's title each (``choice(_:)``);
    /// time ranges that overlap are a usage error.
    static func choices(_ texts: [String]) throws -> [Choice] {
        let choices = try texts.compactMap(choice)
        let times = choices.compactMap { if case .time(let section) = $0 { section } else { nil } }
        _ = try apart(TimeSections(times))
        return choices
    }

    /// `sections`, once none overlaps another.
    static func apart(_ sections: TimeSections) throws -> TimeSections {
        do {
            try sections.checkApart()
        } catch {
            throw ValidationError(error.message)
        }
        return sections
    }

    private static func parse(_ text: String) throws -> TimeSection {
        do {
            return try TimeSection(parsing: text)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
