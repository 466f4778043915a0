import Foundation

/// What a server may send of a resource straight from its cache file, without a read through
/// the engine: published by the resource's session while it is open in this process.
package struct ServableFile: Sendable {
    /// The cache file. Holding it keeps the file open and its shared lock taken, so the file is
    /// neither evicted nor deleted while a response reads it.
    package let file: CacheFile
    /// What the origin said of the version the file holds; its length is known.
    package let info: ContentInfo
    /// The bytes of the file that are written.
    package let written: ByteRangeSet
    /// Until when the origin's last confirmation of the version stands
    /// (``CacheConfiguration/revalidationInterval``).
    package let freshUntil: ContinuousClock.Instant
    /// The digest of the left-out parameter values the bytes are proven for
    /// (``ResourceRecord/tokenDigest``): a request whose URL has another is answered by a read,
    /// which proves the bytes first.
    package var tokenDigest: String? = nil

    /// Whether all of `range` may be sent now: written, the version confirmed recently, and the
    /// file still the cache's and holding the range (another process sharing the directory may
    /// have stored a new version or removed the resource; the file may have been cut short), as
    /// its status said at most ``statusAge`` ago.
    ///
    /// So a run of ranges costs one `fstat` per ``statusAge``, not one each. What that leaves a
    /// moment unseen a read still finds: a file cut short gives a short read, which the server
    /// declines, and a `sendfile` checks the file first (past the end it would send nothing,
    /// again and again). A file another process replaced is read for at most ``statusAge``
    /// more: its own version, whole, as the answer's head says.
    ///
    /// The file must also be as its session left it (``CacheFile/isTrusted(_:)``); the server
    /// checks that again after it read the bytes or before it sends them.
    package func covers(_ range: ByteRange, at now: ContinuousClock.Instant = .now) -> Bool {
        guard now < freshUntil, written.contains(range),
            let status = file.status(readWithin: Self.statusAge, now: now)
        else { return false }
        return status.holds(range) && file.isTrusted(status)
    }

    /// How old a file status ``covers(_:at:)`` takes as it is.
    package static let statusAge: Duration = .milliseconds(50)
}
