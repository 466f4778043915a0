/// A one-way switch that can be thrown once, from any thread.
final class Flag: Sendable {
    private let isSet = Locked(false)

    /// Throws the switch; `true` only for the first caller.
    func set() -> Bool {
        isSet.withLock { isSet in
            defer { isSet = true }
            return !isSet
        }
    }
}
