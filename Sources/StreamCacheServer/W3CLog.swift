import Foundation

/// A log file in the W3C Extended Log File Format: `#Version`, `#Software`, `#Start-Date` and
/// `#Fields` directives, then one line per entry with the fields separated by spaces (`-` for
/// none; values with spaces or quotes written as quoted strings).
public actor W3CLog {
    /// The fields of every entry, in order.
    public nonisolated let fields: [String]
    private let handle: FileHandle

    /// Opens `path` for appending (creating it), and writes the directives.
    ///
    /// - Throws: an error naming the path if it cannot be opened.
    public init(path: String, fields: [String], software: String = "streamcache") throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else {
                throw ProxyLogError(path: path)
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ProxyLogError(path: path) }
        handle.seekToEndOfFile()
        self.handle = handle
        self.fields = fields
        let header = """
            #Version: 1.0
            #Software: \(software)
            #Start-Date: \(Self.timestamp(Date()))
            #Fields: \(fields.joined(separator: " "))

            """
        handle.write(Data(header.utf8))
    }

    /// Appends one entry; `values` holds one value per field (`nil`: `-`).
    public func write(_ values: [String?]) {
        let line = values.map { $0.map(Self.field) ?? "-" }.joined(separator: " ") + "\n"
        handle.write(Data(line.utf8))
    }

    /// `date time` in UTC, as the format wants: `2026-11-22 07:45:03`.
    public nonisolated static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// A value as a field: as it is when it is a plain token, else a quoted string with `"` doubled.
    static func field(_ value: String) -> String {
        let plain =
            !value.isEmpty && !value.unicodeScalars.contains { $0.value <= 0x20 || $0 == "\"" || $0.value == 0x7F }
        if plain { return value }
        let cleaned = String(value.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        return "\"" + cleaned.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A log file that cannot be opened.
public struct ProxyLogError: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "cannot open log file \(path)" }
}
