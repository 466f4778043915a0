import Foundation

/// What a server may send of a resource straight from its cache file, without a read through
/// the engine: published by the resource's session while it is open in this process.
package struct WarmResource: Sendable {
    /// The cache file. Holding it keeps the file open and its shared lock taken, so the file is
    /// neither evicted nor deleted while a response reads it.
    package let file: CacheFile
    /// What the origin said of the version the file holds; its length is known.
    package let info: ContentInfo
    /// The bytes of the file that are written.
    package let written: RangeSet
    /// Until when the origin's last confirmation of the version stands
    /// (``CacheConfiguration/revalidationInterval``).
    package let freshUntil: ContinuousClock.Instant

    /// Whether all of `range` may be sent now: written, the version confirmed recently, and the
    /// file still the cache's and holding the range (another process sharing the directory may
    /// have stored a new version or removed the resource; the file may have been cut short).
    package func covers(_ range: ByteRange, at now: ContinuousClock.Instant = .now) -> Bool {
        now < freshUntil && written.contains(range) && file.holds(range)
    }
}

/// The warm resources of one engine, by cache key. Read from any thread (a server's event loop
/// reads it per request); written by the sessions.
package final class WarmResources: @unchecked Sendable {
    // `entries` is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [String: WarmResource] = [:]

    init() {}

    /// The warm resource of `key`, if its session is open and says one.
    package subscript(key: String) -> WarmResource? {
        lock.withLock { entries[key] }
    }

    /// Sets what may be sent of `key` (`nil`: nothing).
    func publish(_ resource: WarmResource?, for key: String) {
        lock.withLock { entries[key] = resource }
    }

    /// Forgets `key` if what is published for it is in `file` (a closing session leaves the
    /// entry of a session opened after it alone).
    func withdraw(_ key: String, file: CacheFile) {
        lock.withLock {
            if entries[key]?.file === file { entries[key] = nil }
        }
    }
}
