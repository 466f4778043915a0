import Foundation

/// Free space kept on the cache's filesystem: data writes stop short of it, so the index always
/// has the pages it needs to record what was written (SQLite cannot commit on a full disk) and
/// eviction has room to run.
///
/// Writers ask before each write; the filesystem is asked (`statvfs`) after every
/// ``checkInterval`` bytes, and before every write once free space nears the reserve.
package final class DiskReserve: @unchecked Sendable {
    /// The bytes left free.
    package let reserve: Int64
    static let checkInterval: Int64 = 1 << 20

    private let path: String
    // Guarded by `lock`.
    private let lock = NSLock()
    private var free: Int64 = .max
    private var writtenSinceCheck: Int64 = .max

    /// - Parameters:
    ///   - path: a directory on the filesystem to watch.
    ///   - reserve: the bytes to leave free.
    package init(path: String, reserve: Int64) {
        self.path = path
        self.reserve = reserve
    }

    /// Whether `count` more bytes may be written, counting them as written if so.
    package func mayWrite(_ count: Int) -> Bool {
        lock.withLock {
            let wanted = Int64(count)
            if writtenSinceCheck >= Self.checkInterval
                || free - writtenSinceCheck - wanted < reserve + Self.checkInterval
            {
                free = Self.freeBytes(at: path) ?? .max
                writtenSinceCheck = 0
            }
            guard free - writtenSinceCheck - wanted >= reserve else { return false }
            writtenSinceCheck += wanted
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
