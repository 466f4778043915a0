import Foundation

/// The times a recording's options take: `--duration 90s` and `--until 18:30`.
enum RecordingTime {
    /// Seconds in `90`, `90s`, `20m`, `1h`, `1.5h`; `nil` for anything else.
    static func seconds(_ text: String) -> Double? {
        var number = text.trimmingCharacters(in: .whitespaces).lowercased()
        var factor = 1.0
        if let last = number.last, let unit = ["s": 1.0, "m": 60, "h": 3600][last] {
            factor = unit
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * factor < 1e9 else { return nil }
        return value * factor
    }

    /// The time of day `HH:MM[:SS]` (local time) after `now`: today's, or tomorrow's when today's
    /// has passed and tomorrow's is less than 12 hours away (a recording past midnight). `nil`
    /// for anything else, a time that has passed included.
    static func date(_ text: String, after now: Date) -> Date? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(parts.count), let hour = parts[0], let minute = parts[1], (0..<24).contains(hour),
            (0..<60).contains(minute)
        else { return nil }
        let second = parts.count == 3 ? parts[2] : 0
        guard let second, (0..<60).contains(second) else { return nil }
        var components = Calendar.current.dateComponents([.year, .month, .day], from: now)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        guard let today = Calendar.current.date(from: components) else { return nil }
        if today > now { return today }
        guard let tomorrow = Calendar.current.date(byAdding: .day, value: 1, to: today),
            tomorrow.timeIntervalSince(now) < 12 * 3600
        else { return nil }
        return tomorrow
    }
}
