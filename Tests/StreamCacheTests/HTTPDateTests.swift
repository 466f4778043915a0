import Foundation
import Testing

@testable import StreamCache

/// HTTP dates (RFC 9110 §5.6.7) as origins send them: the three forms, broken ones, and the
/// same answers as Foundation's own formatter over 400 years.
@Suite struct HTTPDateTests {
    /// 1994-11-06 08:49:37 GMT, RFC 9110's example.
    static let example: Double = 784_111_777

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", example),
        ("Sunday, 06-Nov-94 08:49:37 GMT", example),
        ("Sun Nov  6 08:49:37 1994", example),
        ("Sun Nov 16 08:49:37 1994", example + 10 * 86_400),
        ("  Sun, 06 Nov 1994 08:49:37 GMT  ", example),
        ("sun, 06 nov 1994 08:49:37 GMT", example),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
        ("Tue, 29 Feb 2028 12:00:00 GMT", 1_835_438_400),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
    ])
    func parsesEachForm(text: String, seconds: Double) {
        #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == seconds, "\(text)")
    }

    @Test(arguments: [
        "", "0", "-1", "now", "Sun, 06 Nov 1994", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 30 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT garbage", "Someday, 06-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sün, 06 Nov 1994 08:49:37 GMT",
    ])
    func refusesWhatIsNoDate(text: String) {
        #expect(HTTPDate.parse(text) == nil, "\(text)")
    }

    @Test func aTwoDigitYearIsNeverMoreThanFiftyYearsAhead() throws {
        let now = Date()
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: now).year!
        let ahead = (year + 49) % 100
        let behind = (year + 51) % 100
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        let soon = try #require(HTTPDate.parse("Monday, 01-Jan-\(two(ahead)) 00:00:00 GMT"))
        let past = try #require(HTTPDate.parse("Monday, 01-Jan-\(two(behind)) 00:00:00 GMT"))
        #expect(soon > now && soon.timeIntervalSince(now) < 50 * 366 * 86_400)
        #expect(past < now && now.timeIntervalSince(past) > 48 * 365 * 86_400)
    }

    @Test func formatsAndParsesAsFoundationDoesOver400Years() async {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var mismatches: [String] = []
        // From 1800 to 2200, 3 days and 37,123 seconds at a time: every month length, leap rule
        // and time of day. Yields now and then: the test pool has two threads.
        var seconds: Double = -5_364_662_400
        var step = 0
        while seconds < 7_258_118_400, mismatches.count < 5 {
            step += 1
            if step % 1000 == 0 { await Task.yield() }
            let date = Date(timeIntervalSince1970: seconds)
            let text = HTTPDate.format(date)
            let expected = formatter.string(from: date)
            if text != expected { mismatches.append("\(seconds): \(text), Foundation \(expected)") }
            if HTTPDate.parse(text) != date {
                mismatches.append("\(text) parsed as \(String(describing: HTTPDate.parse(text)))")
            }
            seconds += 3 * 86_400 + 37_123
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
