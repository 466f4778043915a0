import Foundation

/// The servable files the open sessions of one engine publish, by cache key. Read from any
/// thread (a server's event loop reads it per request); written by the sessions.
package final class PublishedFiles: Sendable {
    private let entries = Locked<[String: ServableFile]>([:])

    init() {}

    /// The servable file of `key`, if its session is open and says one.
    package subscript(key: String) -> ServableFile? {
        entries.withLock { $0[key] }
    }

    /// Sets what may be sent of `key` (`nil`: nothing).
    func publish(_ resource: ServableFile?, for key: String) {
        entries.withLock { $0[key] = resource }
    }

    /// Forgets `key` if what is published for it is in `file` (a closing session leaves the
    /// entry of a session opened after it alone).
    func withdraw(_ key: String, file: CacheFile) {
        entries.withLock { entries in
            if entries[key]?.file === file { entries[key] = nil }
        }
    }
}
