import Foundation

/// A one-way switch that can be thrown once, from any thread.
final class Flag: @unchecked Sendable {
    // Guarded by `lock` (NSLock rather than Mutex, which needs iOS 18).
    private let lock = NSLock()
    private var isSet = false

    /// Throws the switch; `true` only for the first caller.
    func set() -> Bool {
        lock.withLock {
            defer { isSet = true }
            return !isSet
        }
    }
}
