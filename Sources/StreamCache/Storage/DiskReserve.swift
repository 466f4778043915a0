import Foundation

/// Free space kept on the cache's filesystem: data writes stop short of it, so the index always
/// has the pages it needs to record what was written (SQLite cannot commit on a full disk) and
/// eviction has room to run.
///
/// Writers ask before each write; the filesystem is asked (`statvfs`) after every
/// ``checkInterval`` bytes, and before every write once free space nears the reserve.
package final class DiskReserve: Sendable {
    /// The bytes left free.
    package let reserve: Int64
    static let checkInterval: Int64 = 1 << 20

    private let path: String
    /// The free bytes last seen, and the bytes written since.
    private let counts = Locked((free: Int64.max, writtenSinceCheck: Int64.max))

    /// - Parameters:
    ///   - path: a directory on the filesystem to watch.
    ///   - reserve: the bytes to leave free.
    package init(path: String, reserve: Int64) {
        self.path = path
        self.reserve = reserve
    }

    /// Whether `count` more bytes may be written, counting them as written if so.
    package func mayWrite(_ count: Int) -> Bool {
        counts.withLock { counts in
            let wanted = Int64(count)
            if counts.writtenSinceCheck >= Self.checkInterval
                || counts.free - counts.writtenSinceCheck - wanted < reserve + Self.checkInterval
            {
                counts = (Self.freeBytes(at: path) ?? .max, 0)
            }
            guard counts.free - counts.writtenSinceCheck - wanted >= reserve else { return false }
            counts.writtenSinceCheck += wanted
            return true
        }
    }

    /// The bytes an unprivileged writer may still use on the filesystem of `path`.
    static func freeBytes(at path: String) -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }
}
