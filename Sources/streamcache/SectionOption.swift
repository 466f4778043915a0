import ArgumentParser
import StreamCacheOffline

/// `--section START-END` as the commands take it: parsed, a bad one a usage error (exit 64).
enum SectionOption {
    /// The one section `get` and `export` take; `nil` without the option.
    static func one(_ text: String?) throws -> TimeSection? {
        try text.map(parse)
    }

    /// Every section `download` is given, none overlapping another.
    static func all(_ texts: [String]) throws -> TimeSections {
        let sections = TimeSections(try texts.map(parse))
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
