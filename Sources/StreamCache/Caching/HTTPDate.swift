import Foundation

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms a
/// recipient must accept.
///
/// Parsed and formatted by hand: every opened resource reads its `Date`, `Expires` and
/// `Last-Modified`, and a `DateFormatter` (ICU) cost more than the rest of a cached answer.
public enum HTTPDate {
    /// The date in `text`, or `nil` if it is in none of the three forms (a cache then takes an
    /// `Expires` as in the past, RFC 9111 §5.3).
    public static func parse(_ text: String) -> Date? {
        var scanner = Scanner(text.utf8)
        scanner.skipSpaces()
        guard let dayName = scanner.letters() else { return nil }
        let fields: Fields?
        if scanner.take(",") {
            scanner.skipSpaces()
            fields = shortDayNames.contains(dayName) ? imfFixdate(&scanner) : rfc850(&scanner, dayName: dayName)
        } else {
            fields = shortDayNames.contains(dayName) ? asctime(&scanner) : nil
        }
        guard let fields, scanner.isAtEndAfterSpaces, let seconds = fields.secondsSince1970 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = Int(((days % 7) + 7) % 7)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(dayNames[weekday]), \(two(day)) \(monthNames[Int(month) - 1]) \(year) "
            + "\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func imfFixdate(_ scanner: inout Scanner) -> Fields? {
        guard let day = scanner.digits(2), scanner.take(" "), let month = scanner.month(), scanner.take(" "),
            let year = scanner.digits(4), scanner.take(" "), let time = scanner.timeOfDay(), scanner.take(" "),
            scanner.take("GMT")
        else { return nil }
        return Fields(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func rfc850(_ scanner: inout Scanner, dayName: String) -> Fields? {
        guard longDayNames.contains(dayName), let day = scanner.digits(2), scanner.take("-"),
            let month = scanner.month(), scanner.take("-"), let shortYear = scanner.digits(2), scanner.take(" "),
            let time = scanner.timeOfDay(), scanner.take(" "), scanner.take("GMT")
        else { return nil }
        return Fields(year: fullYear(shortYear), month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`
    private static func asctime(_ scanner: inout Scanner) -> Fields? {
        guard scanner.take(" "), let month = scanner.month(), scanner.take(" ") else { return nil }
        let day: Int64?
        if scanner.take(" ") {
            day = scanner.digits(1)
        } else {
            day = scanner.digits(2)
        }
        guard let day, scanner.take(" "), let time = scanner.timeOfDay(), scanner.take(" "),
            let year = scanner.digits(4)
        else { return nil }
        return Fields(year: year, month: month, day: day, time: time)
    }

    /// The year of a two-digit RFC 850 year: the most recent one in the past with those last two
    /// digits when it would be more than 50 years in the future (RFC 9110 §5.6.7).
    private static func fullYear(_ shortYear: Int64) -> Int64 {
        let now = Int64(Date().timeIntervalSince1970) / 86_400
        let thisYear = civil(fromDays: now).year
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return year
    }

    /// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The days since 1970-01-01 of a proleptic Gregorian date.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Day names from Thursday, the weekday of 1970-01-01.
    private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let shortDayNames = Set(dayNames.map { $0.lowercased() })
    private static let longDayNames: Set = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    private static let lowercasedMonthNames = monthNames.map { $0.lowercased() }

    /// The parts of a date, checked when turned into seconds.
    private struct Fields {
        let year: Int64
        let month: Int64
        let day: Int64
        let time: (hour: Int64, minute: Int64, second: Int64)

        var secondsSince1970: Double? {
            guard (1...12).contains(month), day >= 1, time.hour <= 23, time.minute <= 59, time.second <= 60
            else { return nil }
            // The day must exist in its month: 31 Feb is not 3 March.
            let start = HTTPDate.days(year: year, month: month, day: 1)
            let next =
                month == 12
                ? HTTPDate.days(year: year + 1, month: 1, day: 1) : HTTPDate.days(year: year, month: month + 1, day: 1)
            guard day <= next - start else { return nil }
            let days = start + day - 1
            return Double(days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second)
        }
    }

    /// Reads a date's bytes left to right.
    private struct Scanner {
        let bytes: String.UTF8View
        var position: String.UTF8View.Index

        init(_ text: String.UTF8View) {
            bytes = text
            position = bytes.startIndex
        }

        var isAtEndAfterSpaces: Bool {
            var copy = self
            copy.skipSpaces()
            return copy.position == bytes.endIndex
        }

        mutating func skipSpaces() {
            while position < bytes.endIndex, bytes[position] == UInt8(ascii: " ") || bytes[position] == 9 {
                position = bytes.index(after: position)
            }
        }

        /// Consumes `literal` if it comes next.
        mutating func take(_ literal: StaticString) -> Bool {
            var cursor = position
            for byte in UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount) {
                guard cursor < bytes.endIndex, bytes[cursor] == byte else { return false }
                cursor = bytes.index(after: cursor)
            }
            position = cursor
            return true
        }

        /// The ASCII letters that come next, lowercased (names are matched regardless of case),
        /// if there are any.
        mutating func letters() -> String? {
            let start = position
            while position < bytes.endIndex, (bytes[position] | 0x20) >= UInt8(ascii: "a"),
                (bytes[position] | 0x20) <= UInt8(ascii: "z")
            {
                position = bytes.index(after: position)
            }
            return start == position ? nil : String(Substring(bytes[start..<position])).lowercased()
        }

        /// Exactly `count` decimal digits.
        mutating func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            var cursor = position
            for _ in 0..<count {
                guard cursor < bytes.endIndex, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9")
                else { return nil }
                value = value * 10 + Int64(bytes[cursor] - UInt8(ascii: "0"))
                cursor = bytes.index(after: cursor)
            }
            position = cursor
            return value
        }

        /// A three-letter month name: 1 to 12.
        mutating func month() -> Int64? {
            let start = position
            guard let name = letters(), let index = HTTPDate.lowercasedMonthNames.firstIndex(of: name) else {
                position = start
                return nil
            }
            return Int64(index + 1)
        }

        /// `HH:MM:SS`
        mutating func timeOfDay() -> (hour: Int64, minute: Int64, second: Int64)? {
            guard let hour = digits(2), take(":"), let minute = digits(2), take(":"), let second = digits(2) else {
                return nil
            }
            return (hour, minute, second)
        }
    }
}
