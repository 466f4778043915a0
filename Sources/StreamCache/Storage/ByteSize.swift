import Foundation

/// Sizes as messages show them: bytes below a KiB, else KiB, MiB, GiB or TiB with one decimal
/// (powers of 1024).
package enum ByteSize {
    package static func text(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(oneDecimal(value)) \(units[unit])"
    }

    /// `value` with one decimal (`12.3`), as `%.1f` writes it but without a format string: `ls`
    /// writes two per resource.
    package static func oneDecimal(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        let tenths = Int64((abs(value) * 10).rounded())
        return (value < 0 && tenths > 0 ? "-" : "") + "\(tenths / 10).\(tenths % 10)"
    }
}
