import Foundation
import Testing

@testable import StreamCacheOfflineCore

/// `--section START-END`: the times a user writes, what each keeps of a timeline, and what is
/// refused.
@Suite struct TimeSectionParsingTests {
    @Test(arguments: [
        ("1:02:00-1:04:30", 3720.0, 3870.0 as Double?),
        ("90-150", 90, 150),
        ("*-10:00", 0, 600),
        ("1:00:00-*", 3600, nil),
        ("0:21.3-0:33.7", 21.3, 33.7),
        (" 5 - 7.25 ", 5, 7.25),
    ])
    func parsesWhatAUserWrites(text: String, start: Double, end: Double?) throws {
        let section = try TimeSection(parsing: text)
        #expect(abs(section.start - start) < 1e-9)
        #expect(section.end.map { abs($0 - (end ?? -1)) < 1e-9 } ?? (end == nil))
    }

    @Test(arguments: [
        "", "10", "-", "a-b", "1:60-2:00", "2:00-1:00", "5-5", "1:2:3:4-9", "-5-10", "1e3-2e3", "nan-inf",
    ])
    func refusesWhatIsNoSection(text: String) {
        #expect(throws: OfflineError.self) { try TimeSection(parsing: text) }
    }

    @Test func keepsWhatPlaysInASectionAndNothingBeside() throws {
        let sections = TimeSections([try TimeSection(parsing: "21.3-33.7")])
        let kept = (0..<30).filter { sections.keep(Double($0) * 2, duration: 2) }
        #expect(kept == Array(10...16))
        #expect(TimeSections().keep(1e9, duration: 2))
    }

    @Test func refusesSectionsThatOverlapOrStartPastTheEnd() throws {
        let overlapping = TimeSections([try TimeSection(parsing: "20-40"), try TimeSection(parsing: "10-30")])
        #expect(throws: OfflineError.self) { try overlapping.checkApart() }
        let open = TimeSections([try TimeSection(parsing: "10-*"), try TimeSection(parsing: "50-60")])
        #expect(throws: OfflineError.self) { try open.checkApart() }
        let apart = TimeSections([try TimeSection(parsing: "50-60"), try TimeSection(parsing: "10-20")])
        try apart.checkApart()
        // A section may run past the end (as ffmpeg's -to may); one that starts there has nothing.
        #expect(throws: OfflineError.self) { try apart.checkWithin(50, of: "u") }
        try apart.checkWithin(55, of: "u")
    }

    @Test func optionsCarryTheirSections() throws {
        var options = OfflineDownloadOptions()
        options.title = "Episode"
        options.sections = TimeSections([try TimeSection(parsing: "1:00-2:00")])
        let copy = options
        #expect(copy.sections.sections.map(\.description) == ["1:00-2:00"])
    }
}
