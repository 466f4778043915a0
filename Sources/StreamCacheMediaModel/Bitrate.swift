import Foundation

/// A bit rate as people read one: `1.43 Mbit/s`, `640 kbit/s`, `900 bit/s` (powers of 1000,
/// as `BANDWIDTH` is counted). Every command prints them so.
public enum Bitrate {
    public static func text(_ bitsPerSecond: Int64) -> String {
        switch bitsPerSecond {
        case 1_000_000...: String(format: "%.2f Mbit/s", Double(bitsPerSecond) / 1e6)
        case 1_000...: String(format: "%.0f kbit/s", Double(bitsPerSecond) / 1e3)
        default: "\(bitsPerSecond) bit/s"
        }
    }
}
